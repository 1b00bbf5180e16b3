/* `culeak open FILE...`: the console on recordings, with a timeline to move along. */
#include "commands.h"
#include "../console/console.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int cmd_open(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        fputs("usage: culeak open FILE...\n"
              "Opens the console on recordings (one per process of a job): the site table, stacks,\n"
              "snapshots and diffs, and `goto MARK|TIME|peak|oom|start|end` to move in time.\n",
              argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (int i = 1; i < argc; i++) {
        if (access(argv[i], R_OK) != 0) {
            fprintf(stderr, "culeak open: cannot read %s\n", argv[i]);
            return 1;
        }
    }
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "culeak open: the console needs a terminal (culeak report prints a report)\n");
        return 2;
    }
    struct console_options opt = {0};
    opt.files = argv + 1;
    opt.nfiles = argc - 1;
    return console_main(&opt);
}
