/* `culeak [OPTIONS] -- PROGRAM [ARGS]`: run a job under the shim inside the console. */
#include "commands.h"
#include "console/console.h"
#include "console/fmt.h"
#include "console/script.h"
#include "launch/launch.h"
#include "options.h"
#include "report_io.h"
#include "model/suppress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* every key of the table: the handler's switch names each (-Wswitch) */
enum console_opt {
    OPT_DEPTH = 'd', OPT_VERSION = 'V', OPT_NO_POOL = 256, OPT_FREE_STACKS, OPT_SNAPSHOT_EVERY, OPT_SNAPSHOT_AT_MARKS,
    OPT_SUPPRESSIONS, OPT_LOG_FILE, OPT_EVAL_COMMAND, OPT_NO_DEFAULT_SUPPRESSIONS, OPT_NO_INIT, OPT_COMMAND_FILE = 'x',
    OPT_HOLDERS = 512,
};

static const struct cli_option console_options[] = {
    CLI_RECORD_DEPTH(OPT_DEPTH),
    CLI_NO_POOL(OPT_NO_POOL),
    CLI_HOLDERS(OPT_HOLDERS),
    CLI_FREE_STACKS(OPT_FREE_STACKS),
    {"snapshot-every", OPT_SNAPSHOT_EVERY, "SECONDS", "take a snapshot every SECONDS (5, 2.5s, 1m)"},
    {"snapshot-at-marks", OPT_SNAPSHOT_AT_MARKS, NULL, "take a snapshot at every mark (culeak.h, NVTX ranges)"},
    {"log-file", OPT_LOG_FILE, "FILE", "also write the leak report made when the job exits to FILE\n"
                                       "(%p, %h, %r: the job's pid, host and rank)"},
    {"suppressions", OPT_SUPPRESSIONS, "FILE", "leave out of the exit leak report what FILE suppresses\n"
                                               "(culeak-suppressions(5)); repeatable"},
    CLI_NO_DEFAULT_SUPPRESSIONS(OPT_NO_DEFAULT_SUPPRESSIONS),
    CLI_CONSOLE_SCRIPT(OPT_EVAL_COMMAND, OPT_COMMAND_FILE, "before the job starts"),
    CLI_NO_INIT(OPT_NO_INIT),
    {"version", OPT_VERSION, NULL, "print culeak's version and exit"},
    CLI_HELP,
    {0},
};

static const struct cli_dash_name console_dash_names[] = {{"ex", "eval-command"}, {"nx", "nx"}, {0}};

const struct cli_command cli_console = {
    .name = NULL,
    .synopsis = "[OPTIONS] -- PROGRAM [ARGS]",
    .about = "Runs PROGRAM (and every process it starts) under libculeak.so and opens the console:\n"
             "live and peak GPU memory per call site, snapshots and diffs, and breakpoints that\n"
             "pause the job inside the allocation that makes a site grow. Type help inside.\n",
    .options = console_options,
    .program = 1,
    .dash_names = console_dash_names,
    .run = cmd_console,
};

struct console_args {
    struct console_options opt;
    struct suppressions *supp;
    struct script script;
    int no_default_suppressions;
};

int cli_script_option(const struct cli_command *c, struct script *s, int file, const char *arg)
{
    char err[600];
    if (!file)
        return script_add_command(s, arg) != 0 ? cli_error(c, "out of memory") : 0;
    return script_add_file(s, arg, err, sizeof err) != 0 ? cli_error(c, "--command: %s", err) : 0;
}

static int on_option(void *ctx, int key, const char *arg)
{
    struct console_args *a = ctx;
    struct console_options *opt = &a->opt;
    long d;
    switch ((enum console_opt)key) {
    case OPT_DEPTH:
        if (cli_int(&cli_console, key, arg, 1, 256, &d))
            return 2;
        opt->depth = (int)d;
        return 0;
    case OPT_SNAPSHOT_EVERY:
        if (parse_seconds(arg, &opt->snapshot_every) != 0 || opt->snapshot_every <= 0)
            return cli_error(&cli_console, "--snapshot-every takes seconds (5, 2.5s, 1m), not '%s'", arg);
        return 0;
    case OPT_NO_POOL:
        culeak_no_pool_env();
        return 0;
    case OPT_HOLDERS:
        CLI_HOLDERS_ENV();
        return 0;
    case OPT_FREE_STACKS:
        setenv("CULEAK_FREE_STACKS", "1", 1);
        return 0;
    case OPT_SNAPSHOT_AT_MARKS:
        opt->snapshot_at_marks = 1;
        return 0;
    case OPT_SUPPRESSIONS:
        return cli_load_suppressions(&cli_console, &a->supp, arg);
    case OPT_NO_DEFAULT_SUPPRESSIONS:
        a->no_default_suppressions = 1;
        return 0;
    case OPT_LOG_FILE:
        opt->log_file = arg;
        return 0;
    case OPT_EVAL_COMMAND:
    case OPT_COMMAND_FILE:
        return cli_script_option(&cli_console, &a->script, key == OPT_COMMAND_FILE, arg);
    case OPT_NO_INIT:
        opt->no_init = 1;
        return 0;
    case OPT_VERSION:
        printf("culeak %s\n", CULEAK_VERSION);
        return -1; /* done: exit status 0 */
    }
    return cli_error(&cli_console, "option %d is not handled", key);
}

int cmd_console(int argc, char **argv)
{
    struct console_args a = {0};
    int status;
    int i = cli_parse(&cli_console, argc, argv, on_option, &a, &status);
    if (i >= 0 && i >= argc) {
        i = -1;
        status = cli_error(&cli_console, "missing the program to run (culeak [OPTIONS] -- PROGRAM [ARGS])");
    }
    if (i >= 0 && (status = culeak_check_program(argv[i])) != 0) /* as a shell: 127 or 126 */
        i = -1;
    if (i >= 0 && cli_check_output_dir(&cli_console, a.opt.log_file)) {
        i = -1;
        status = 2;
    }
    if (i >= 0 && !a.no_default_suppressions &&
        (status = cli_load_default_suppressions(&cli_console, &a.supp)) != 0)
        i = -1;
    if (i >= 0 && !culeak_shim_path()) {
        cli_fail(&cli_console, "cannot find libculeak.so (next to the culeak executable, in ../lib/culeak, "
                               "or named by CULEAK_LIB)");
        i = -1;
        status = 1;
    }
    if (i >= 0) {
        a.opt.argv = argv + i;
        a.opt.supp = a.supp;
        a.opt.script = &a.script;
        status = console_main(&a.opt);
    }
    suppressions_free(a.supp);
    script_free(&a.script);
    return status;
}
