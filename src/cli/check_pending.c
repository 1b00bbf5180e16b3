/* Placeholder until the check command lands; replaced, not extended. */
#include "commands.h"
#include <stdio.h>
int cmd_check(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fputs("culeak: 'check' is not available in this build\n", stderr);
    return 2;
}
