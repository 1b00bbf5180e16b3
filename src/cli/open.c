/* `culeak open FILE...`: the console on recordings, with a timeline to move along. */
#include "commands.h"
#include "../console/console.h"
#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const struct cli_option open_options[] = {CLI_HELP, {0}};

const struct cli_command cli_open = {
    .name = "open",
    .summary = "open the console on recordings",
    .synopsis = "FILE...",
    .about = "Opens the console on recordings (one per process of a job): the site table, stacks,\n"
             "snapshots and diffs, and `goto MARK|TIME|peak|oom|start|end` to move in time.\n",
    .options = open_options,
    .run = cmd_open,
};

static int no_option(void *ctx, int key, const char *arg) { return cli_error(&cli_open, "option %d is not handled", key); }

int cmd_open(int argc, char **argv)
{
    int status;
    int first = cli_parse(&cli_open, argc, argv, no_option, NULL, &status);
    if (first < 0)
        return status;
    if (first >= argc)
        return cli_error(&cli_open, "missing the recordings to open (culeak open FILE...)");
    for (int i = first; i < argc; i++) {
        if (access(argv[i], R_OK) != 0) {
            cli_fail(&cli_open, "cannot read %s: %s", argv[i], strerror(errno));
            return 1;
        }
    }
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        cli_fail(&cli_open, "the console needs a terminal (culeak report prints a report)");
        return 2;
    }
    struct console_options opt = {0};
    opt.files = argv + first;
    opt.nfiles = argc - first;
    return console_main(&opt);
}
