/* Placeholder until the console command lands; replaced, not extended. */
#include "commands.h"
#include <stdio.h>
int cmd_console(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fputs("culeak: 'console' is not available in this build\n", stderr);
    return 2;
}
