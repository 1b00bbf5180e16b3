/* `culeak attach [OPTIONS] PID`: the console on a process that is already running. */
#include "commands.h"
#include "console/console.h"
#include "console/fmt.h"
#include "console/script.h"
#include "launch/attach_job.h"
#include "launch/launch.h"
#include "options.h"
#include "report_io.h"
#include "model/suppress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum attach_opt {
    OPT_SNAPSHOT_EVERY = 256, OPT_SNAPSHOT_AT_MARKS, OPT_TIMEOUT, OPT_EVAL_COMMAND, OPT_SUPPRESSIONS,
    OPT_NO_DEFAULT_SUPPRESSIONS, OPT_NO_INIT, OPT_COMMAND_FILE = 'x',
};

static const struct cli_option attach_options[] = {
    {"snapshot-every", OPT_SNAPSHOT_EVERY, "SECONDS", "take a snapshot every SECONDS (5, 2.5s, 1m)"},
    {"snapshot-at-marks", OPT_SNAPSHOT_AT_MARKS, NULL, "take a snapshot at every mark (culeak.h, NVTX ranges)"},
    CLI_ATTACH_TIMEOUT(OPT_TIMEOUT),
    {"suppressions", OPT_SUPPRESSIONS, "FILE", "leave out of the exit leak report what FILE suppresses\n"
                                               "(culeak-suppressions(5)); repeatable"},
    CLI_NO_DEFAULT_SUPPRESSIONS(OPT_NO_DEFAULT_SUPPRESSIONS),
    CLI_CONSOLE_SCRIPT(OPT_EVAL_COMMAND, OPT_COMMAND_FILE, "once attached"),
    CLI_NO_INIT(OPT_NO_INIT),
    CLI_HELP,
    {0},
};

static const struct cli_dash_name attach_dash_names[] = {{"ex", "eval-command"}, {"nx", "nx"}, {0}};

const struct cli_command cli_attach = {
    .name = "attach",
    .summary = "open the console on a process that is already running",
    .synopsis = "[OPTIONS] PID",
    .about = "Loads libculeak.so into the running process PID (culeak's own injector: one thread\n"
             "is stopped for milliseconds and given back every register; gdb only when CULEAK_GDB\n"
             "names it) and opens the console on it: what was allocated before is one row, (before\n"
             "attach); every allocation after it has its call site. detach, quit and the console's\n"
             "end leave the process running. Needs ptrace rights over PID (see culeak(1), ATTACHING).\n",
    .options = attach_options,
    .dash_names = attach_dash_names,
    .run = cmd_attach,
};

struct attach_args {
    struct console_options opt;
    struct script script;
    struct suppressions *supp;
    int no_default_suppressions;
    long timeout;
};

static int on_option(void *ctx, int key, const char *arg)
{
    struct attach_args *a = ctx;
    switch ((enum attach_opt)key) {
    case OPT_SNAPSHOT_EVERY:
        if (parse_seconds(arg, &a->opt.snapshot_every) != 0 || a->opt.snapshot_every <= 0)
            return cli_error(&cli_attach, "--snapshot-every takes seconds (5, 2.5s, 1m), not '%s'", arg);
        return 0;
    case OPT_SNAPSHOT_AT_MARKS:
        a->opt.snapshot_at_marks = 1;
        return 0;
    case OPT_TIMEOUT:
        return cli_int(&cli_attach, key, arg, 1, 3600, &a->timeout);
    case OPT_EVAL_COMMAND:
    case OPT_COMMAND_FILE:
        return cli_script_option(&cli_attach, &a->script, key == OPT_COMMAND_FILE, arg);
    case OPT_SUPPRESSIONS:
        return cli_load_suppressions(&cli_attach, &a->supp, arg);
    case OPT_NO_DEFAULT_SUPPRESSIONS:
        a->no_default_suppressions = 1;
        return 0;
    case OPT_NO_INIT:
        a->opt.no_init = 1;
        return 0;
    }
    return cli_error(&cli_attach, "option %d is not handled", key);
}

int cmd_attach(int argc, char **argv)
{
    struct attach_args a = {0};
    int status;
    int i = cli_parse(&cli_attach, argc, argv, on_option, &a, &status);
    if (i < 0) {
        suppressions_free(a.supp);
        script_free(&a.script);
        return status;
    }
    if (i >= argc || i + 1 < argc)
        status = cli_error(&cli_attach, "give one process id (culeak attach PID)");
    else {
        char *end;
        long pid = strtol(argv[i], &end, 10);
        char err[1200];
        if (*end || pid <= 0 || pid > 0x7fffffff)
            status = cli_error(&cli_attach, "not a process id: '%s'", argv[i]);
        else if (culeak_attach_check((pid_t)pid, err, sizeof err) != 0) {
            cli_fail(&cli_attach, "%s", err);
            status = 1;
        } else if (a.no_default_suppressions || (status = cli_load_default_suppressions(&cli_attach, &a.supp)) == 0) {
            a.opt.attach_pid = (int)pid;
            a.opt.attach_timeout = a.timeout ? (int)a.timeout : CLI_ATTACH_TIMEOUT_S;
            a.opt.script = &a.script;
            a.opt.supp = a.supp;
            status = console_main(&a.opt);
        }
    }
    suppressions_free(a.supp);
    script_free(&a.script);
    return status;
}
