/* Placeholder until the open command lands; replaced, not extended. */
#include "commands.h"
#include <stdio.h>
int cmd_open(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fputs("culeak: 'open' is not available in this build\n", stderr);
    return 2;
}
