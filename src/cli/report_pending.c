/* Placeholder until the report command lands; replaced, not extended. */
#include "commands.h"
#include <stdio.h>
int cmd_report(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fputs("culeak: 'report' is not available in this build\n", stderr);
    return 2;
}
