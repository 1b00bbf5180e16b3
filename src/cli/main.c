/* culeak: entry point and subcommand dispatch. */
#include "commands.h"
#include "options.h"

#include <stdio.h>
#include <string.h>

/* The console's help, then the commands. */
static void usage(FILE *f)
{
    cli_help(f, &cli_console);
    fputs("\nusage: culeak COMMAND [ARGS]\ncommands:\n", f);
    for (const struct cli_command *const *c = cli_commands; *c; c++)
        if ((*c)->name)
            fprintf(f, "  %-8s %s\n", (*c)->name, (*c)->summary);
    fputs("\n`culeak COMMAND --help` describes a command; man culeak(1) describes all.\n", f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    for (const struct cli_command *const *c = cli_commands; *c; c++)
        if ((*c)->name && strcmp(argv[1], (*c)->name) == 0)
            return (*c)->run(argc - 1, argv + 1);
    if (argv[1][0] == '-')
        return cmd_console(argc, argv); /* options and `--` belong to the console */
    fprintf(stderr, "culeak: unknown command '%s' (to run a program, put it after --)\n"
                    "Try 'culeak --help'.\n", argv[1]);
    return 2;
}
