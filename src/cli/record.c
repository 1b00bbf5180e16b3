/* `culeak record -o FILE [OPTIONS] -- PROGRAM [ARGS]`: run a program under the shim,
 * writing a recording; exits with the program's own status. */
#include "commands.h"
#include "console/fmt.h"
#include "launch/launch.h"
#include "launch/roll.h"
#include "options.h"
#include "common/outpath.h"
#include "recordings.h"
#include "record_pid.h"
#include "record_metrics.h"
#include "common/wire.h"
#include "common/aggregate.h"
#include "aggregate.h"

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum record_opt { OPT_OUTPUT = 'o', OPT_DEPTH = 'd', OPT_PID = 'p', OPT_NO_POOL = 256, OPT_FREE_STACKS, OPT_TIMEOUT,
                  OPT_METRICS, OPT_ROLL, OPT_HOLDERS, OPT_AGGREGATE, OPT_INTERVAL };

static const struct cli_option record_options[] = {
    {"output", OPT_OUTPUT, "FILE", "write the recording to FILE (required); %p: pid, %h: host,\n"
                                   "%r: rank, so that every process writes its own file"},
    CLI_RECORD_DEPTH(OPT_DEPTH),
    {"pid", OPT_PID, "PID", "attach to the running process PID instead of starting a\n"
                            "program; record until it ends or culeak is interrupted"},
    CLI_ATTACH_TIMEOUT(OPT_TIMEOUT),
    {"metrics", OPT_METRICS, "HOST:PORT", "serve the job's live numbers on http://HOST:PORT/metrics\n"
                                          "(OpenMetrics, for Prometheus) while it runs; :PORT: every\n"
                                          "address, port 0: a free one (said on stderr)"},
    {"roll", OPT_ROLL, "TIME|SIZE", "start a new part of each recording every TIME (30min, 1h,\n"
                                    "1d) or once a part holds SIZE (512M, 2G); FILE names\n"
                                    "the parts with %t (the part's start, UTC) or %n (0001...)"},
    {"aggregate", OPT_AGGREGATE, NULL, "an aggregated recording: allocations made and freed within an\n"
                                        "interval or between two marks are counted per call site, not\n"
                                        "written one by one (bounded size for long runs)"},
    {"interval", OPT_INTERVAL, "TIME", "with --aggregate, the longest time between two counts (10s;\n"
                                       "ms, s, m, h)"},
    CLI_NO_POOL(OPT_NO_POOL),
    CLI_HOLDERS(OPT_HOLDERS),
    CLI_FREE_STACKS(OPT_FREE_STACKS),
    CLI_HELP,
    {0},
};

const struct cli_command cli_record = {
    .name = "record",
    .summary = "run a program under the shim and write a recording",
    .synopsis = "-o FILE [OPTIONS] -- PROGRAM [ARGS] | -o FILE --pid PID",
    .about = "Runs PROGRAM under libculeak.so and writes every allocation, free and mark to FILE.\n"
             "Without %p, the first process of the job takes FILE and each other one writes\n"
             "FILE.PID. --no-pool turns the caching allocators of PyTorch and JAX off (and CuPy's,\n"
             "where the program calls culeak.no_pool()). Exit status: the program's.\n"
             "With --pid, attaches to a running process instead (see culeak attach).\n"
             "With --aggregate, the recording stays small at any length: what outlives an\n"
             "interval (or a mark) is written as it happened, what does not is counted per\n"
             "call site; reports, diffs and suspects read it as a full recording.\n",
    .options = record_options,
    .program = 1,
    .run = cmd_record,
};

struct record_args {
    const char *out, *metrics;
    long depth, pid, timeout;
    struct culeak_roll_opts roll;
    int rolling;
    int holders;
    int aggregate;
    uint64_t interval_ns;
};

/* --roll's TIME (s, min, h, d) or SIZE (K, M, G, T: powers of 1024). 0, or -1. */
static int parse_roll(const char *arg, struct culeak_roll_opts *o)
{
    static const struct {
        const char *unit;
        uint64_t seconds;
    } times[] = {{"s", 1}, {"min", 60}, {"h", 3600}, {"d", 86400}};
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10);
    if (errno || end == arg || !v || *arg == '-')
        return -1;
    for (size_t i = 0; i < sizeof times / sizeof *times; i++)
        if (!strcmp(end, times[i].unit)) {
            *o = (struct culeak_roll_opts){.seconds = v * times[i].seconds};
            return v > UINT64_MAX / times[i].seconds ? -1 : 0;
        }
    uint64_t bytes;
    if (!*end || parse_size(arg, &bytes) != 0 || bytes < 4096) /* a bare number says neither */
        return -1;
    *o = (struct culeak_roll_opts){.bytes = bytes};
    return 0;
}

static int on_option(void *ctx, int key, const char *arg)
{
    struct record_args *a = ctx;
    switch ((enum record_opt)key) {
    case OPT_OUTPUT:
        a->out = arg;
        return 0;
    case OPT_DEPTH:
        return cli_int(&cli_record, key, arg, 1, 256, &a->depth);
    case OPT_PID:
        return cli_int(&cli_record, key, arg, 1, 0x7fffffff, &a->pid);
    case OPT_TIMEOUT:
        return cli_int(&cli_record, key, arg, 1, 3600, &a->timeout);
    case OPT_METRICS:
        a->metrics = arg;
        return 0;
    case OPT_ROLL:
        a->rolling = 1;
        if (parse_roll(arg, &a->roll) != 0)
            return cli_error(&cli_record, "--roll takes a time (30s, 30min, 1h, 1d) or a size of 4K or more (512M, "
                                          "2G), not '%s'", arg);
        return 0;
    case OPT_AGGREGATE:
        a->aggregate = 1;
        return 0;
    case OPT_INTERVAL:
        if (cli_parse_interval(arg, &a->interval_ns) != 0)
            return cli_error(&cli_record, "--interval %s: a time from 1ms to 24h, such as 10s, 500ms or 5m", arg);
        return 0;
    case OPT_NO_POOL:
        culeak_no_pool_env();
        return 0;
    case OPT_FREE_STACKS:
        setenv("CULEAK_FREE_STACKS", "1", 1);
        return 0;
    case OPT_HOLDERS:
        a->holders = 1;
        CLI_HOLDERS_ENV();
        return 0;
    }
    return cli_error(&cli_record, "option %d is not handled", key);
}

/* The processes of a job never overwrite an existing file (the others write FILE.PID),
 * so an earlier run's FILE and FILE.PID recordings go first: this run's first process
 * takes FILE. Only files named so that begin with culeak's magic are removed. */
static int remove_earlier_run(const char *out)
{
    if (unlink(out) != 0 && errno != ENOENT) {
        fprintf(stderr, "culeak record: cannot replace %s: %s\n", out, strerror(errno));
        return -1;
    }
    char pattern[PATH_MAX + 16];
    snprintf(pattern, sizeof pattern, "%s.[0-9]*", out);
    glob_t g;
    if (glob(pattern, GLOB_NOSORT, NULL, &g) != 0)
        return 0;
    for (size_t k = 0; k < g.gl_pathc; k++) {
        const char *suffix = g.gl_pathv[k] + strlen(out) + 1;
        if (strspn(suffix, "0123456789") != strlen(suffix))
            continue;
        char magic[CULEAK_MAGIC_LEN];
        FILE *f = fopen(g.gl_pathv[k], "rb");
        int ours = f && fread(magic, 1, sizeof magic, f) == sizeof magic &&
                   memcmp(magic, CULEAK_MAGIC, sizeof magic) == 0;
        if (f)
            fclose(f);
        if (ours)
            unlink(g.gl_pathv[k]);
    }
    globfree(&g);
    return 0;
}

/* A job of several processes wrote several files: name them, and how to read them. */
static void say_recordings(const char *given, const char *out, time_t started)
{
    struct recording_list l;
    if (recordings_of_job(out, started, &l) != 0 || l.n < 2) {
        recordings_free(&l);
        return;
    }
    size_t abs_len = strlen(out);
    int plain = !strchr(out, '%'); /* FILE and FILE.PID: shown as -o was typed */
    if (strstr(out, "%t") || strstr(out, "%n")) /* rolled: a process may have written several */
        fprintf(stderr, "culeak record: %zu recordings and parts were written:", l.n);
    else
        fprintf(stderr, "culeak record: %zu processes wrote recordings:", l.n);
    for (size_t k = 0; k < l.n && k < 8; k++)
        fprintf(stderr, " %s%s", plain ? given : "", l.paths[k] + (plain ? abs_len : 0));
    if (l.n > 8)
        fprintf(stderr, " and %zu more", l.n - 8);
    if (plain)
        fprintf(stderr, " (culeak report %s %s.* reads them together)\n", given, given);
    else
        fprintf(stderr, " (culeak report reads them together)\n");
    recordings_free(&l);
}

int cmd_record(int argc, char **argv)
{
    struct record_args a = {0};
    int status;
    int i = cli_parse(&cli_record, argc, argv, on_option, &a, &status);
    if (i < 0)
        return status;
    if (!a.out)
        return cli_error(&cli_record, "missing -o FILE");
    if (a.pid && i < argc)
        return cli_error(&cli_record, "--pid attaches to a running process: no program to run");
    if (a.pid && a.metrics)
        return cli_error(&cli_record, "--metrics serves a job culeak starts, not one --pid attaches to");
    if (a.rolling && a.pid)
        return cli_error(&cli_record, "--roll rolls the recordings of a job culeak starts, not of one --pid attaches to");
    if (a.rolling && !strstr(a.out, "%t") && !strstr(a.out, "%n"))
        return cli_error(&cli_record, "--roll needs %%t or %%n in -o FILE, to name each part (-o 'run.%%t.culeak')");
    if (a.pid && a.holders)
        return cli_error(&cli_record, "--holders is for a job culeak starts, not one --pid attaches to "
                                      "(culeak attach PID, then set holders on)");
    if (a.interval_ns && !a.aggregate)
        return cli_error(&cli_record, "--interval is the interval of an aggregated recording: add --aggregate");
    if (a.aggregate)
        culeak_launch_aggregate(a.interval_ns ? a.interval_ns : CULEAK_AGGREGATE_INTERVAL_NS);
    if (a.pid)
        return record_pid(&cli_record, (pid_t)a.pid, a.out, a.timeout ? (int)a.timeout : CLI_ATTACH_TIMEOUT_S);
    if (i >= argc)
        return cli_error(&cli_record, "missing the program to run (culeak record -o FILE -- PROGRAM [ARGS])");
    int missing = culeak_check_program(argv[i]);
    if (missing) /* as a shell: 127 or 126 */
        return missing;
    char abs_out[PATH_MAX]; /* the job may change directory before its first CUDA call */
    if (culeak_absolute_path(a.out, abs_out, sizeof abs_out) != 0) {
        cli_fail(&cli_record, "cannot resolve %s: %s", a.out, strerror(errno));
        return 1;
    }
    const char *given = a.out;
    a.out = abs_out;
    char first[4096]; /* the name this process's pid, host and rank give: its directory is made now,
                         so that a refusal is said before the job runs */
    int named = culeak_expand_path(a.out, (long)getpid(), NULL, NULL, first, sizeof first);
    if (named < 0)
        errno = ENAMETOOLONG;
    if (named < 0 || culeak_make_parent_dirs(first) != 0 || culeak_output_dir_writable(first) != 0) {
        cli_fail(&cli_record, "cannot write %s: %s", a.out, strerror(errno));
        return 1;
    }
    if (!strchr(a.out, '%') && remove_earlier_run(a.out) != 0)
        return 1;
    setenv("CULEAK_OUTPUT_EXCL", "1", 1); /* no process of the job overwrites another's file */
    struct record_metrics *metrics = NULL;
    if (a.metrics) { /* before the job starts: a port in use fails here, not later */
        char err[512];
        if (!(metrics = record_metrics_new(a.metrics, err, sizeof err))) {
            cli_fail(&cli_record, "--metrics %s", err);
            return 1;
        }
        fprintf(stderr, "culeak record: metrics on http://%s/metrics\n", record_metrics_address(metrics));
    }
    time_t started = time(NULL);
    struct culeak_run run;
    int st = culeak_run_traced_tap(argv + i, a.out, (int)a.depth, &run, metrics ? record_metrics_tap(metrics) : NULL,
                                   a.rolling ? &a.roll : NULL);
    record_metrics_free(metrics);
    say_recordings(given, a.out, started);
    /* a process starts its recording at its first CUDA call: say so when none came, rather
     * than leave a later `culeak report FILE` to find no file */
    if (!strchr(a.out, '%') && access(a.out, F_OK) != 0)
        cli_fail(&cli_record, "no recording was written to %s: %s made no CUDA calls culeak saw", a.out, argv[i]);
    return st < 0 ? 127 : culeak_exit_code(st);
}
