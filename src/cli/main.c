/* culeak: entry point and subcommand dispatch. */
#include "commands.h"

#include <stdio.h>
#include <string.h>

#ifndef CULEAK_VERSION
#define CULEAK_VERSION "0.1.0"
#endif

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} subcommands[] = {
    {"record", cmd_record, "run a program under the shim and write a recording"},
    {"check", cmd_check, "run a program headless and report its leaks (exit status for CI)"},
    {"report", cmd_report, "report leaks, peaks and diffs from recordings"},
    {"open", cmd_open, "open the console on recordings"},
    {"dump", cmd_dump, "print a recording as JSON Lines"},
};

static void usage(FILE *f)
{
    fputs("usage: culeak [OPTIONS] -- PROGRAM [ARGS]    watch a job in the console\n"
          "       culeak COMMAND [ARGS]\n\ncommands:\n",
          f);
    for (size_t i = 0; i < sizeof subcommands / sizeof *subcommands; i++)
        fprintf(f, "  %-8s %s\n", subcommands[i].name, subcommands[i].summary);
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
    if (strcmp(argv[1], "--version") == 0) {
        printf("culeak %s\n", CULEAK_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof subcommands / sizeof *subcommands; i++)
        if (strcmp(argv[1], subcommands[i].name) == 0)
            return subcommands[i].run(argc - 1, argv + 1);
    if (argv[1][0] == '-')
        return cmd_console(argc, argv); /* options and `--` belong to the console */
    fprintf(stderr, "culeak: unknown command '%s' (to run a program, put it after --)\n\n", argv[1]);
    usage(stderr);
    return 2;
}
