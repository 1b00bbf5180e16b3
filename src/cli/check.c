/* `culeak check -- PROGRAM [ARGS]`: run a program headless under the shim, then report its
 * leaks grouped by call site. For CI: the exit status says whether anything leaked. */
#include "common/apis.h"
#include "commands.h"
#include "launch/launch.h"
#include "options.h"
#include "report/formats.h"
#include "report_io.h"
#include "model/suppress.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum check_opt {
    OPT_FORMAT = 'f', OPT_OUTPUT = 'o', OPT_DEPTH = 'd', OPT_ERROR_EXITCODE = 256, OPT_GROUP, OPT_MERGE,
    OPT_NO_POOL, OPT_SKIP, OPT_SKIP_FUNCTION, OPT_MY_CODE, OPT_LOG_FILE, OPT_SUPPRESSIONS, OPT_GEN_SUPPRESSIONS, OPT_NO_DEFAULT_SUPPRESSIONS,
    OPT_HOLDERS,
};

static const struct cli_option check_options[] = {
    {"error-exitcode", OPT_ERROR_EXITCODE, "N", "exit status when leaks were found and the program succeeded\n"
                                                "(0 to 255, default 1; 0: the program's status)"},
    {"format", OPT_FORMAT, "text|json", "report format (default text)"},
    {"output", OPT_OUTPUT, "FILE", "write the report to FILE instead of stderr (%p, %h, %r expand)"},
    {"log-file", OPT_LOG_FILE, "FILE", "write the text report to FILE (%p, %h, %r expand), also with\n"
                                       "--format json"},
    {"suppressions", OPT_SUPPRESSIONS, "FILE", "leave out the leaks FILE suppresses (culeak-suppressions(5));\n"
                                               "repeatable"},
    CLI_NO_DEFAULT_SUPPRESSIONS(OPT_NO_DEFAULT_SUPPRESSIONS),
    {"gen-suppressions", OPT_GEN_SUPPRESSIONS, NULL, "after the text report, a suppression block per leak site"},
    {"group", OPT_GROUP, "G", "group by site, function, file, module or stack"},
    CLI_RECORD_DEPTH(OPT_DEPTH),
    {"merge-processes", OPT_MERGE, NULL, "add the processes of the job up per call site"},
    CLI_NO_POOL(OPT_NO_POOL),
    CLI_HOLDERS(OPT_HOLDERS),
    CLI_CALL_SITE_OPTIONS(OPT_SKIP, OPT_SKIP_FUNCTION, OPT_MY_CODE),
    CLI_HELP,
    {0},
};

const struct cli_command cli_check = {
    .name = "check",
    .summary = "run a program headless and report its leaks (exit status for CI)",
    .synopsis = "[OPTIONS] -- PROGRAM [ARGS]",
    .about = "Runs PROGRAM (and the programs it starts) under libculeak.so and reports the GPU memory\n"
             "still allocated at exit, or when its context was destroyed or its device reset, grouped\n"
             "by call site with the full stack, then a line\n"
             "  LEAK SUMMARY: N bytes leaked in K allocations from S call sites\n"
             "Memory still held by a caching allocator (PyTorch, CuPy, XLA) is reported apart, not as\n"
             "a leak, and so is what culeak's default suppressions match: memory the CUDA libraries\n"
             "(cuDNN, cuBLAS, NCCL, XLA's set-up) allocate once and hold until exit. When the program starts other traced processes (torchrun, mpirun), each one is\n"
             "reported apart, with its pid and rank. The report goes to stderr; the program's own\n"
             "output is left alone. The CUDA runtime linked into a program (cuda*, libcudart_static_*,\n"
             "cuda_runtime.h) is looked through by default, and $CULEAK_SKIP_MODULES and\n"
             "$CULEAK_SKIP_FUNCTIONS add to --skip and --skip-function. In --output and --log-file,\n"
             "%p is the program's pid, %h its host, %r its rank.\n"
             "Exit status: the program's when it failed (a non-zero status, or 128+N when killed\n"
             "by signal N), whether it leaked or not; else N (--error-exitcode, default 1; 0: off)\n"
             "when leaks were found; else 2 when a recording is incomplete, a process could not be\n"
             "recorded or a program of the job ran untraced (set-user-ID); else 0.\n",
    .options = check_options,
    .program = 1,
    .run = cmd_check,
};

struct check_args {
    long error_exit, depth;
    const struct report_format *format;
    const char *output, *log_file;
    int gen_suppressions, no_default_suppressions;
    struct cli_call_sites sites;
    struct report_options ro;
    struct suppressions *supp;
};

static int on_option(void *ctx, int key, const char *arg)
{
    struct check_args *a = ctx;
    switch ((enum check_opt)key) {
    case OPT_ERROR_EXITCODE:
        return cli_int(&cli_check, key, arg, 0, 255, &a->error_exit);
    case OPT_FORMAT:
        a->format = report_format_find(arg);
        if (!a->format || !(a->format->use & FORMAT_CHECK)) {
            char list[128];
            return cli_error(&cli_check, "--format takes %s, not '%s'", report_format_list(FORMAT_CHECK, list, sizeof list),
                             arg);
        }
        return 0;
    case OPT_OUTPUT:
        a->output = arg;
        return 0;
    case OPT_LOG_FILE:
        a->log_file = arg;
        return 0;
    case OPT_SUPPRESSIONS:
        return cli_load_suppressions(&cli_check, &a->supp, arg);
    case OPT_GEN_SUPPRESSIONS:
        a->gen_suppressions = 1;
        return 0;
    case OPT_NO_DEFAULT_SUPPRESSIONS:
        a->no_default_suppressions = 1;
        return 0;
    case OPT_GROUP:
        return cli_group_option(&cli_check, &a->ro.group, arg);
    case OPT_DEPTH:
        return cli_int(&cli_check, key, arg, 1, 256, &a->depth);
    case OPT_MERGE:
        a->ro.merge_processes = 1;
        return 0;
    case OPT_NO_POOL:
        culeak_no_pool_env();
        return 0;
    case OPT_HOLDERS:
        CLI_HOLDERS_ENV();
        return 0;
    case OPT_SKIP:
    case OPT_SKIP_FUNCTION:
    case OPT_MY_CODE:
        return cli_call_site_option(&cli_check, &a->sites, key, arg);
    }
    return cli_error(&cli_check, "option %d is not handled", key);
}

static int not_hidden(const struct dirent *e) { return e->d_name[0] != '.'; }

/* Loads every recording of dir into m (one per traced process), then removes them, in
 * name order so that the processes of a job come in the same order from run to run;
 * *damaged counts those cut off or unreadable. Returns the number of files, -1 when dir
 * cannot be read. */
static int load_dir(struct model *m, const char *dir, int *damaged)
{
    struct dirent **names;
    int n = scandir(dir, &names, not_hidden, alphasort);
    if (n < 0)
        return -1;
    for (int k = 0; k < n; k++) {
        char path[4096 + 256 + 2], err[512];
        snprintf(path, sizeof path, "%.4096s/%.256s", dir, names[k]->d_name);
        int r = model_load_file(m, path, err, sizeof err);
        if (r == 1)
            fprintf(stderr, "culeak: warning: %s\n", err);
        else if (r < 0)
            fprintf(stderr, "culeak: %s\n", err);
        *damaged += r != 0;
        unlink(path);
        free(names[k]);
    }
    free(names);
    rmdir(dir);
    return n;
}

/* The pid, host and rank that %p, %h and %r stand for: the program culeak started (the
 * root of the traced processes), else culeak itself. */
static void job_identity(struct model *m, long *pid, const char **host, const char **rank, char *rbuf, size_t len)
{
    *pid = (long)getpid();
    *host = NULL;
    *rank = NULL;
    int root = -1;
    for (int i = 0; i < model_process_count(m) && root < 0; i++)
        if (model_process(m, i)->ppid == (uint64_t)getpid())
            root = i;
    if (root < 0 && model_process_count(m) > 0)
        root = 0;
    if (root < 0)
        return;
    const struct model_process *p = model_process(m, root);
    *pid = (long)p->pid;
    *host = p->host;
    snprintf(rbuf, len, "%d", p->rank < 0 ? 0 : p->rank);
    *rank = rbuf;
}

/* The report in the --format to --output (or stderr), the text to --log-file, then
 * the suppressions with --gen-suppressions. */
static int write_reports(struct check_args *a, struct model *m, struct report_summary *sum)
{
    long pid;
    const char *host, *rank;
    char rbuf[32];
    job_identity(m, &pid, &host, &rank, rbuf, sizeof rbuf);
    int text = a->format == report_format_find("text");
    struct cli_sink out = {.f = stderr}, log = {.f = NULL};
    if (cli_sink_open(&cli_check, &out, a->output, pid, host, rank) != 0)
        return 2;
    if (a->log_file && cli_sink_open(&cli_check, &log, a->log_file, pid, host, rank) != 0) {
        cli_sink_close(&out);
        return 2;
    }
    /* the text goes to --log-file when there is one, any other format to --output */
    int r = a->format->write(text && log.f ? log.f : out.f, m, &a->ro, sum);
    if (r == 0 && !text && log.f)
        r = report_text(log.f, m, &a->ro, NULL);
    if (r == 0 && a->gen_suppressions) {
        FILE *g = log.f ? log.f : !text ? stderr : out.f;
        fputs("\n", g);
        r = report_suppressions(g, m, &a->ro);
    }
    int bad = cli_sink_close(&out) | cli_sink_close(&log);
    if (r != 0) {
        cli_fail(&cli_check, "the report could not be made");
        return 2;
    }
    return bad ? 2 : 0;
}

/* A program that failed made a report of what it did until then (often nothing, when
 * its first CUDA call failed): say so after it, with the failed allocations. */
static void say_program_failed(const char *prog, int st, struct model *m)
{
    char how[64];
    if (st < 0)
        snprintf(how, sizeof how, "could not be run");
    else if (WIFSIGNALED(st))
        snprintf(how, sizeof how, "was killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else
        snprintf(how, sizeof how, "failed (exit status %d)", WEXITSTATUS(st));
    size_t nf;
    const struct model_failure *f = model_failures(m, &nf);
    uint64_t failed = 0;
    for (int p = 0; p < model_process_count(m); p++)
        failed += model_process(m, p)->failed_allocs;
    if (failed && nf)
        fprintf(stderr, "culeak check: %s %s; %llu CUDA allocation%s failed, the first %s returning %llu; the "
                        "report above covers what it did until then\n",
                prog, how, (unsigned long long)failed, failed == 1 ? "" : "s", culeak_api_name(f[0].api),
                (unsigned long long)f[0].result);
    else
        fprintf(stderr, "culeak check: %s %s; the report above covers what it did until then\n", prog, how);
}

/* The program culeak started is its child: its wait status says how it ended when its
 * recording has no EXIT record (lost while the reader was stopped, or when the process
 * ended inside libc), rather than a guess. The last recording of that pid without one is
 * its last program (an exec'd one ends the others with EXIT). */
static void took_wait_status(struct model *m, long child, int st)
{
    int last = -1;
    for (int p = 0; p < model_process_count(m); p++) {
        const struct model_process *mp = model_process(m, p);
        if (child > 0 && mp->pid == (uint64_t)child && mp->ppid == (uint64_t)getpid() && !mp->exited &&
            !mp->truncated && !mp->corrupt)
            last = p;
    }
    /* its EXIT went with the events dropped while the reader was stopped; without such a
     * gap the end of the recording itself is missing (a full disk): only the status is kept */
    if (last >= 0 && st >= 0 && model_process(m, last)->lost_events)
        model_process_exited_by_status(m, last, st);
    else if (last >= 0 && st >= 0)
        model_process_set_exit_status(m, last, st);
}

int cmd_check(int argc, char **argv)
{
    struct check_args a = {.error_exit = 1, .format = report_format_find("text")};
    report_options_init(&a.ro);
    int status;
    int i = cli_parse(&cli_check, argc, argv, on_option, &a, &status);
    if (i >= argc) {
        i = -1;
        status = cli_error(&cli_check, "missing the program to run (culeak check [OPTIONS] -- PROGRAM [ARGS])");
    }
    /* a report that could not be written is known before the job runs */
    if (i >= 0 && (cli_check_output_dir(&cli_check, a.output) || cli_check_output_dir(&cli_check, a.log_file))) {
        i = -1;
        status = 2;
    }
    if (i >= 0 && (status = culeak_check_program(argv[i])) != 0) /* as a shell: 127 or 126 */
        i = -1;
    if (i >= 0 && !a.no_default_suppressions && (status = cli_load_default_suppressions(&cli_check, &a.supp)) != 0)
        i = -1;
    if (i < 0) {
        suppressions_free(a.supp);
        return status;
    }
    a.ro.supp = a.supp;

    const char *tmp = getenv("TMPDIR");
    char dir[4096], file[4200];
    snprintf(dir, sizeof dir, "%s/culeak-check-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        cli_fail(&cli_check, "cannot make a directory in %s: %s", tmp && *tmp ? tmp : "/tmp", strerror(errno));
        suppressions_free(a.supp);
        return 2;
    }
    /* %p: each process of the program (children too) writes its own recording */
    snprintf(file, sizeof file, "%s/trace.%%p.culeak", dir);
    struct culeak_run run;
    int st = culeak_run_traced_job(argv + i, file, (int)a.depth, &run);
    int program_status = st < 0 ? 127 : culeak_exit_code(st);

    struct model_options mo = cli_call_sites_model_options(&a.sites);
    struct model *m = model_new(&mo);
    if (!m) {
        suppressions_free(a.supp);
        return 2;
    }
    int damaged = 0;
    int loaded = load_dir(m, dir, &damaged);
    /* A recording that ends before its process did (killed with SIGKILL, or cut off:
     * a full disk) makes an incomplete report: check never passes on one. */
    int incomplete = damaged;
    took_wait_status(m, run.pid, st);
    if (run.unrecorded) { /* each one named on stderr as it was refused */
        cli_fail(&cli_check, "%lu process%s of the job could not be recorded: the report leaves %s out",
                 run.unrecorded, run.unrecorded == 1 ? "" : "es", run.unrecorded == 1 ? "it" : "them");
        incomplete += (int)(run.unrecorded < 1000000 ? run.unrecorded : 1000000);
    }
    for (int p = 0; p < model_process_count(m); p++) {
        const struct model_process *mp = model_process(m, p);
        if (mp->untraced) {
            cli_fail(&cli_check, "process %llu: %s%s", (unsigned long long)mp->pid, mp->untraced_note,
                     mp->untraced > 1 ? " (and more)" : "");
            incomplete++;
        }
        if (mp->lost_events) {
            cli_fail(&cli_check, "process %llu: %llu events lost while the reader was stopped (its ring was full)",
                     (unsigned long long)mp->pid, (unsigned long long)mp->lost_events);
            incomplete++;
        }
        if (!mp->exited && !mp->truncated && !mp->corrupt) {
            if (mp->exit_status >= 0 && WIFSIGNALED(mp->exit_status))
                cli_fail(&cli_check, "the recording of process %llu ends before the process did (killed by "
                                     "signal %d, %s)",
                         (unsigned long long)mp->pid, WTERMSIG(mp->exit_status), strsignal(WTERMSIG(mp->exit_status)));
            else if (mp->exit_status >= 0 && WIFEXITED(mp->exit_status))
                cli_fail(&cli_check, "the recording of process %llu ends before the process did (it exited "
                                     "with status %d; the rest of its recording could not be written)",
                         (unsigned long long)mp->pid, WEXITSTATUS(mp->exit_status));
            else
                cli_fail(&cli_check, "the recording of process %llu ends before the process did (killed with "
                                     "SIGKILL, or the recording could not be written)",
                         (unsigned long long)mp->pid);
            incomplete++;
        }
    }
    if (incomplete && model_process_count(m) == 0) {
        cli_fail(&cli_check, "no recording could be read: no leak report");
        model_free(m);
        suppressions_free(a.supp);
        return 2;
    }
    if (loaded <= 0 || model_process_count(m) == 0) {
        /* nothing traced: the program made no CUDA call the shim saw (or did not start) */
        char why[128];
        if (culeak_program_is_static(argv[i])) {
            cli_fail(&cli_check, "no recording was written: %s is statically linked, out of a preloaded "
                                 "library's reach", argv[i]);
        } else if (culeak_program_is_secure(argv[i], why, sizeof why)) {
            cli_fail(&cli_check, "no recording was written: %s is %s; it ran untraced", argv[i], why);
            incomplete++;
        } else
            cli_fail(&cli_check, "no recording was written: %s made no CUDA calls culeak saw", argv[i]);
    } else if (st >= 0)
        model_process_set_exit_status(m, 0, st);
    struct report_summary sum;
    int rc = write_reports(&a, m, &sum);
    if (rc == 0 && program_status != 0)
        say_program_failed(argv[i], st, m);
    model_free(m);
    suppressions_free(a.supp);
    if (rc != 0)
        return rc;
    /* as compute-sanitizer and valgrind: --error-exitcode stands for what was found, and
     * never hides the program's own failure (its status, 128+N for a signal) */
    if (program_status != 0)
        return program_status;
    if (sum.allocations && a.error_exit) /* 0: off, then as if none were found */
        return (int)a.error_exit;
    if (incomplete) {
        cli_fail(&cli_check, "%d recording%s incomplete: the report above may miss leaks", incomplete,
                 incomplete == 1 ? " is" : "s are");
        return 2;
    }
    return program_status;
}
