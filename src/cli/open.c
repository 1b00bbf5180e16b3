/* `culeak open FILE...`: the console on recordings, with a timeline to move along. */
#include "commands.h"
#include "../console/console.h"
#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const struct cli_command cli_open = {
    .name = "open",
    .summary = "open the console on recordings",
    .synopsis = "FILE...",
    .about = "Opens the console on recordings (one per process of a job): the site table, stacks,\n"
             "snapshots and diffs, and `goto MARK|TIME|peak|oom|start|end` to move in time.\n",
    .options = cli_help_only,
    .run = cmd_open,
};

int cmd_open(int argc, char **argv)
{
    int status;
    int first = cli_parse_files(&cli_open, argc, argv, "the recordings to open", &status);
    if (first < 0)
        return status;
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
