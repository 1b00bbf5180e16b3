/* `culeak open FILE...`: the console on recordings, with a timeline to move along. */
#include "commands.h"
#include "console/console.h"
#include "console/script.h"
#include "options.h"
#include "report_io.h"
#include "model/suppress.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* every key of the table: the handler's switch names each (-Wswitch) */
enum open_opt {
    OPT_EVAL_COMMAND = 256, OPT_NO_DEFAULT_SUPPRESSIONS, OPT_NO_INIT, OPT_SUPPRESSIONS, OPT_COMMAND_FILE = 'x'
};

static const struct cli_option open_options[] = {
    CLI_CONSOLE_SCRIPT(OPT_EVAL_COMMAND, OPT_COMMAND_FILE, "once the recordings are read"),
    CLI_NO_INIT(OPT_NO_INIT),
    {"suppressions", OPT_SUPPRESSIONS, "FILE", "leave out of the reports and pages the console writes what\n"
                                               "FILE suppresses (culeak-suppressions(5)); repeatable"},
    CLI_NO_DEFAULT_SUPPRESSIONS(OPT_NO_DEFAULT_SUPPRESSIONS),
    CLI_HELP,
    {0},
};

static const struct cli_dash_name open_dash_names[] = {{"ex", "eval-command"}, {"nx", "nx"}, {0}};

const struct cli_command cli_open = {
    .name = "open",
    .summary = "open the console on recordings",
    .synopsis = "[OPTIONS] FILE...",
    .about = "Opens the console on recordings (one per process of a job): the site table, stacks,\n"
             "snapshots and diffs, and `goto MARK|TIME|peak|oom|start|end` to move in time.\n",
    .options = open_options,
    .dash_names = open_dash_names,
    .run = cmd_open,
};

struct open_args {
    struct script script;
    struct suppressions *supp; /* the user's and the default ones: the page `export` writes
                                * leaves them out */
    int no_default_suppressions, no_init;
};

static int on_option(void *ctx, int key, const char *arg)
{
    struct open_args *a = ctx;
    switch ((enum open_opt)key) {
    case OPT_EVAL_COMMAND:
    case OPT_COMMAND_FILE:
        return cli_script_option(&cli_open, &a->script, key == OPT_COMMAND_FILE, arg);
    case OPT_NO_DEFAULT_SUPPRESSIONS:
        a->no_default_suppressions = 1;
        return 0;
    case OPT_NO_INIT:
        a->no_init = 1;
        return 0;
    case OPT_SUPPRESSIONS:
        return cli_load_suppressions(&cli_open, &a->supp, arg);
    }
    return cli_error(&cli_open, "option %d is not handled", key);
}

int cmd_open(int argc, char **argv)
{
    struct open_args a = {0};
    int status;
    int first = cli_parse(&cli_open, argc, argv, on_option, &a, &status);
    if (first >= 0 && first >= argc) {
        status = cli_error(&cli_open, "missing the recordings to open (culeak open %s)", cli_open.synopsis);
        first = -1;
    }
    for (int i = first; first >= 0 && i < argc; i++) {
        if (access(argv[i], R_OK) != 0) {
            cli_fail(&cli_open, "cannot read %s: %s", argv[i], strerror(errno));
            first = -1;
            status = 1;
        }
    }
    if (first >= 0 && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
        cli_fail(&cli_open, "the console needs a terminal (culeak report prints a report)");
        first = -1;
        status = 2;
    }
    if (first >= 0 && !a.no_default_suppressions && (status = cli_load_default_suppressions(&cli_open, &a.supp)) != 0)
        first = -1;
    if (first >= 0) {
        struct console_options opt = {0};
        opt.files = argv + first;
        opt.nfiles = argc - first;
        opt.script = &a.script;
        opt.no_init = a.no_init;
        opt.supp = a.supp;
        status = console_main(&opt);
    }
    suppressions_free(a.supp);
    script_free(&a.script);
    return status;
}
