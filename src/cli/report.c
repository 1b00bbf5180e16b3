/* `culeak report FILE...`: leaks, the peak, a mark, or a diff between two marks, from
 * recordings; several files (the ranks of one job) are merged with processes kept apart. */
#include "commands.h"
#include "console/fmt.h"
#include "options.h"
#include "recordings.h"
#include "report/formats.h"
#include "report/torch_snapshot.h"
#include "report_io.h"
#include "report_ranks.h"
#include "model/suppress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HTML_MOMENTS 256 /* moments kept per process for the page (model_keep_moments) */
/* Up to this many ranks, each process's own report follows the cross-rank view. */
#define RANKS_DETAIL_MAX 8

/* One line per option: --suspects and the like are a line here and a case below. */
enum report_opt {
    OPT_FORMAT = 'f', OPT_OUTPUT = 'o', OPT_DEPTH = 'd', OPT_LEAKS = 256, OPT_PEAK, OPT_AT, OPT_DIFF, OPT_GROUP,
    OPT_MERGE, OPT_SKIP, OPT_SKIP_FUNCTION, OPT_MY_CODE, OPT_LOG_FILE, OPT_SUPPRESSIONS, OPT_ERROR_EXITCODE,
    OPT_SUSPECTS, OPT_NO_DEFAULT_SUPPRESSIONS, OPT_BASELINE, OPT_MAX_INCREASE, OPT_FROM, OPT_TO,
};

static const struct cli_option report_options[] = {
    {"leaks", OPT_LEAKS, NULL, "what was live at exit, or when its context was destroyed (default)"},
    {"peak", OPT_PEAK, NULL, "what was live at the peak of device memory"},
    {"at", OPT_AT, "MARK", "what was live at a mark (a label, or an event seq number)"},
    {"diff", OPT_DIFF, "A B", "what changed from mark A to mark B, and what was made after A\n"
                              "and is still live at B"},
    {"baseline", OPT_BASELINE, "FILE", "compare with the run FILE recorded (repeatable: its processes'\n"
                                       "recordings): per call site what is new, gone, grown or shrunk"},
    {"max-increase", OPT_MAX_INCREASE, "BYTES", "with --baseline and --error-exitcode: the leaked bytes the\n"
                                                "run may add to the baseline's (default 0; 64MiB, 1.5GiB)"},
    {"suspects", OPT_SUSPECTS, NULL, "the growth suspects: sites whose live bytes rose at 8 of the last\n"
                                     "10 marks of one label pattern, with a forecast (see culeak(1))"},
    {"format", OPT_FORMAT, "FORMAT", "text (default), json, folded (flamegraph.pl), suppressions,\n"
                                     "html: one self-contained page (timeline, flame graph, sites), or\n"
                                     "pprof: gzipped profile.proto (go tool pprof, Pyroscope, Parca), or\n"
                                     "torch-snapshot: PyTorch's memory snapshot (pytorch.org/memory_viz)"},
    {"from", OPT_FROM, "MARK", "torch-snapshot: the trace starts at MARK (default: the last 10\n"
                               "iterations, reaching back to the peak or a failed allocation)"},
    {"to", OPT_TO, "MARK", "torch-snapshot: the trace and the segments end at MARK (default:\n"
                           "the end, or the last allocation of a process that exited)"},
    {"output", OPT_OUTPUT, "FILE", "write the report to FILE instead of stdout (%p, %h, %r expand)"},
    {"log-file", OPT_LOG_FILE, "FILE", "write the text report to FILE (%p, %h, %r expand), also with\n"
                                       "another --format"},
    {"suppressions", OPT_SUPPRESSIONS, "FILE", "leave out the leaks FILE suppresses (culeak-suppressions(5));\n"
                                               "repeatable"},
    CLI_NO_DEFAULT_SUPPRESSIONS(OPT_NO_DEFAULT_SUPPRESSIONS),
    {"error-exitcode", OPT_ERROR_EXITCODE, "N", "exit status when the recordings show leaks (0 to 255); with\n"
                                                "--baseline, when they leak more than the baseline"},
    {"group", OPT_GROUP, "G", "group by site, function, file, module or stack"},
    {"merge-processes", OPT_MERGE, NULL, "add the processes up per call site (one row per site)"},
    {"depth", OPT_DEPTH, "N", "print at most N frames per stack (1 to 4096)"},
    CLI_CALL_SITE_OPTIONS(OPT_SKIP, OPT_SKIP_FUNCTION, OPT_MY_CODE),
    CLI_HELP,
    {0},
};

const struct cli_command cli_report = {
    .name = "report",
    .summary = "report leaks, peaks and diffs from recordings",
    .synopsis = "FILE... [OPTIONS]",
    .about = "Reports from recordings: leaks (default), what was live at the peak of device memory,\n"
             "at a mark, or what changed between two marks. Several files (the ranks of one job) are\n"
             "read together and each process is reported apart: a section per process in text, rows\n"
             "with their process's pid and rank in JSON, a root frame per process in folded stacks;\n"
             "--diff compares each process between its own marks A and B. A DIR given is searched\n"
             "for recordings (run/ of -o 'run/%h/%r.culeak'). The leak report of two ranks or more\n"
             "opens with the cross-rank view: a table of ranks (host, rank, device, peak, live at the\n"
             "end, growth per iteration, time to fill the device, fastest suspect), the ranks whose\n"
             "growth differs from the rest (beyond 3 x 1.4826 x MAD and 4 KiB from the median), and\n"
             "the call sites across ranks with how many ranks show each; JSON \"cross_rank\"; html\n"
             "a ranks x marks heat map. Over 8 recordings the view comes alone, read on every core.\n"
             "$CULEAK_SKIP_MODULES and $CULEAK_SKIP_FUNCTIONS add to --skip and --skip-function;\n"
             "the CUDA runtime linked into a program is looked through by default. In --output and\n"
             "--log-file, %p, %h and %r are the pid, host and rank of the first process read.\n"
             "--format html writes one page that opens from disk in a browser; with --diff it opens\n"
             "on the comparison of A and B.\n"
             "Growth suspects (--suspects; JSON reports always carry them in \"suspects\"): call\n"
             "sites whose live bytes rose at 8 of the last 10 marks of one label pattern (\"iteration\n"
             "N\"; with fewer marks at 80% of them, at least 4) and are higher than 10 marks ago, each\n"
             "with its median growth per iteration, the mark since which it grows, and when it would\n"
             "fill the device at that pace (the device's free memory at the latest mark, the median\n"
             "time between marks). A site that allocates and frees every iteration is not one.\n"
             "--baseline FILE compares the run of FILE with the run of the other recordings, call\n"
             "site by call site matched by function and file:line (never by address), with each\n"
             "run's totals and growth suspects; --format html then draws both timelines.\n"
             "A FILE may be a PyTorch memory snapshot (torch.cuda.memory._dump_snapshot()): it is\n"
             "read as a recording, by a reader that runs nothing in it; --format torch-snapshot\n"
             "writes one for pytorch.org/memory_viz (see culeak(1), PYTORCH SNAPSHOTS).\n"
             "Exit status: N (--error-exitcode) when leaks were found (with --baseline: when the run\n"
             "leaked more than --max-increase bytes more than the baseline), else 0, or 1 when a\n"
             "recording could not be read (whatever could be read is still reported).\n",
    .options = report_options,
    .program = 0,
    .run = cmd_report,
};

struct report_args {
    struct report_options ro;
    const struct report_format *format;
    const char *output, *log_file, *at;
    const char *what_option; /* the --leaks, --peak, --at or --diff given */
    int suspects;
    long error_exit; /* -1: none */
    struct cli_call_sites sites;
    struct suppressions *supp;
    int no_default_suppressions;
    const char *from, *to;   /* torch-snapshot's window */
    const char **baseline;   /* --baseline FILEs */
    int nbaseline;
    uint64_t max_increase;
};

/* --leaks, --peak, --at and --diff each name the one moment reported: one of them. */
static int what_option(struct report_args *a, enum report_what what, const char *name)
{
    if (a->what_option && strcmp(a->what_option, name))
        return cli_error(&cli_report, "%s and %s report different moments: give one of --leaks, --peak, --at, "
                                      "--diff", a->what_option, name);
    a->what_option = name;
    a->ro.what = what;
    return 0;
}

static int on_option(void *ctx, int key, const char *arg)
{
    struct report_args *a = ctx;
    char list[128];
    switch ((enum report_opt)key) {
    case OPT_LEAKS:
        return what_option(a, REPORT_LEAKS, "--leaks");
    case OPT_PEAK:
        return what_option(a, REPORT_PEAK, "--peak");
    case OPT_AT:
        a->at = arg;
        return what_option(a, REPORT_SNAPSHOT, "--at");
    case OPT_DIFF:
        if (what_option(a, REPORT_DIFF, "--diff"))
            return 2;
        a->ro.diff_a = arg;
        if (!(a->ro.diff_b = cli_next_arg()))
            return cli_error(&cli_report, "--diff takes two marks: --diff A B");
        return 0;
    case OPT_FORMAT:
        if (!(a->format = report_format_find(arg)))
            return cli_error(&cli_report, "--format takes %s, not '%s'", report_format_list(0, list, sizeof list), arg);
        return 0;
    case OPT_OUTPUT:
        a->output = arg;
        return 0;
    case OPT_LOG_FILE:
        a->log_file = arg;
        return 0;
    case OPT_SUPPRESSIONS:
        return cli_load_suppressions(&cli_report, &a->supp, arg);
    case OPT_NO_DEFAULT_SUPPRESSIONS:
        a->no_default_suppressions = 1;
        return 0;
    case OPT_ERROR_EXITCODE:
        return cli_int(&cli_report, key, arg, 0, 255, &a->error_exit);
    case OPT_GROUP:
        return cli_group_option(&cli_report, &a->ro.group, arg);
    case OPT_MERGE:
        a->ro.merge_processes = 1;
        return 0;
    case OPT_SUSPECTS:
        a->suspects = 1;
        return 0;
    case OPT_BASELINE: {
        const char **v = realloc(a->baseline, (size_t)(a->nbaseline + 1) * sizeof *v);
        if (!v)
            return cli_error(&cli_report, "out of memory");
        a->baseline = v;
        a->baseline[a->nbaseline++] = arg;
        return 0;
    }
    case OPT_FROM:
        a->from = arg;
        return 0;
    case OPT_TO:
        a->to = arg;
        return 0;
    case OPT_MAX_INCREASE:
        if (parse_size(arg, &a->max_increase) != 0)
            return cli_error(&cli_report, "--max-increase takes bytes (4096, 64MiB, 1.5GiB), not '%s'", arg);
        return 0;
    case OPT_DEPTH: {
        long d;
        if (cli_int(&cli_report, key, arg, 1, 4096, &d))
            return 2;
        a->ro.depth = (int)d;
        return 0;
    }
    case OPT_SKIP:
    case OPT_SKIP_FUNCTION:
    case OPT_MY_CODE:
        return cli_call_site_option(&cli_report, &a->sites, key, arg);
    }
    return cli_error(&cli_report, "option %d is not handled", key);
}

/* The options that go together: 0, or 2 after the message. */
static int check_args(const struct report_args *a)
{
    int diff = a->ro.what == REPORT_DIFF;
    unsigned use = a->format->use;
    char list[128];
    if (diff && !(use & FORMAT_DIFF))
        return cli_error(&cli_report, "--diff prints %s", report_format_list(FORMAT_DIFF, list, sizeof list));
    if (a->suspects && !(use & FORMAT_SUSPECTS))
        return cli_error(&cli_report, "--suspects prints %s", report_format_list(FORMAT_SUSPECTS, list, sizeof list));
    if (a->error_exit >= 0 && a->ro.what != REPORT_LEAKS)
        return cli_error(&cli_report, "--error-exitcode goes with the leak report (not --peak, --at or --diff)");
    if (!(use & FORMAT_OTHER_SOURCES) && a->ro.what != REPORT_LEAKS)
        return cli_error(&cli_report, "--format %s reports leaks (not --peak or --at)", a->format->name);
    if (a->nbaseline && a->ro.what != REPORT_LEAKS && a->ro.what != REPORT_PEAK)
        return cli_error(&cli_report, "--baseline compares the leaks or the peak (not --at or --diff)");
    if (a->nbaseline && (!(use & FORMAT_BASELINE) || a->suspects))
        return cli_error(&cli_report, "--baseline prints %s (each run's suspects included)",
                         report_format_list(FORMAT_BASELINE, list, sizeof list));
    if ((use & FORMAT_BINARY) && !a->output && isatty(STDOUT_FILENO))
        return cli_error(&cli_report, "--format %s writes binary data: give -o FILE (or a pipe)", a->format->name);
    if ((a->from || a->to) && strcmp(a->format->name, "torch-snapshot"))
        return cli_error(&cli_report, "--from and --to go with --format torch-snapshot");
    if (a->max_increase && !a->nbaseline)
        return cli_error(&cli_report, "--max-increase goes with --baseline");
    if (a->max_increase && a->error_exit < 0) /* its threshold: alone it would be ignored */
        return cli_error(&cli_report, "--max-increase goes with --error-exitcode");
    return 0;
}

static int has_mark(struct model *m, const char *name)
{
    for (int i = 0; i < model_process_count(m); i++) {
        size_t n;
        const struct model_mark *mk = model_marks(m, i, &n);
        for (size_t k = 0; k < n; k++)
            if (!strcmp(mk[k].label, name))
                return 1;
    }
    return 0;
}

/* The recordings read again whole (a diff stops at B): a mark A after B is said so, an
 * unknown one with the nearest marks there are. */
static int no_mark(const struct report_args *a, const char **files, int nfiles, const char *name)
{
    struct model_options mo = cli_call_sites_model_options(&a->sites);
    struct model *all = model_new(&mo);
    for (int i = 0; all && i < nfiles; i++) {
        char err[512];
        model_load_file(all, files[i], err, sizeof err); /* said when first read */
    }
    if (all && a->ro.what == REPORT_DIFF && name == a->ro.diff_a && has_mark(all, name)) {
        cli_fail(&cli_report, "mark '%s' comes after mark '%s': --diff takes the earlier mark first (--diff '%s' '%s')",
                 a->ro.diff_a, a->ro.diff_b, a->ro.diff_b, a->ro.diff_a);
        model_free(all);
        return 1;
    }
    const char *near[3];
    size_t k = all ? model_nearest_marks(all, name, near, 3) : 0;
    char hint[512] = "";
    for (size_t i = 0, n = 0; i < k && n < sizeof hint; i++) {
        int w = snprintf(hint + n, sizeof hint - n, "%s'%.100s'", i ? ", " : "; the nearest: ", near[i]);
        if (w < 0)
            break;
        n += (size_t)w;
    }
    cli_fail(&cli_report, "no mark '%s' (and no event with that seq) in the recordings%s", name, hint);
    model_free(all);
    return 1;
}

/* Was the snapshot taken in at least one process? */
static int snapshot_taken(struct model *m, const char *name)
{
    if (model_snapshot_find(m, name) < 0)
        return 0;
    for (int i = 0; i < model_process_count(m); i++) {
        size_t n;
        const struct model_mark *mk = model_marks(m, i, &n);
        for (size_t k = 0; k < n; k++)
            if (!strcmp(mk[k].label, name))
                return 1;
        const struct model_process *p = model_process(m, i);
        char *end;
        unsigned long long seq = strtoull(name, &end, 10);
        if (!*end && *name && p->last_seq >= seq)
            return 1;
    }
    return 0;
}

/* What a torch-snapshot holds, and its size: a page must open in a browser. */
static void say_snapshot(const struct report_args *a, struct model *m)
{
    const struct torch_trace *t = a->ro.torch_trace;
    char size[64];
    report_format_bytes(size, sizeof size, t->bytes);
    const struct model_process *p = model_process(m, t->proc);
    const char *from = t->from ? t->from : t->window_from;
    char start[600], end[600];
    if (from)
        snprintf(start, sizeof start, "mark '%.500s'", from);
    else
        snprintf(start, sizeof start, "the start");
    if (a->to)
        snprintf(end, sizeof end, "mark '%.500s'", a->to);
    else
        snprintf(end, sizeof end, "%s", t->exit_left_out ? "the last allocation (the frees of its exit left out)"
                                                          : "the end");
    fprintf(stderr,
            "culeak: wrote %s: %s; %llu trace entries from %s to %s, %llu segments, %llu blocks (process %llu)\n",
            a->output ? a->output : "the snapshot", size, (unsigned long long)t->entries, start, end,
            (unsigned long long)t->segments, (unsigned long long)t->blocks, (unsigned long long)(p ? p->pid : 0));
}

/* The report in the --format to --output (or stdout), the text to --log-file; with rv,
 * the cross-rank view first (m NULL: the view alone). */
static int write_reports(struct report_args *a, struct model *m, const struct ranks_view *rv)
{
    const struct model_process *p = m ? model_process(m, 0) : NULL;
    long pid = p ? (long)p->pid : (long)rv->v[0].pid;
    const char *host = p ? p->host : rv->v[0].host;
    int prank = p ? p->rank : rv->v[0].rank;
    char rank[32];
    snprintf(rank, sizeof rank, "%d", prank < 0 ? 0 : prank);
    struct cli_sink out = {.f = stdout}, log = {.f = NULL};
    if (cli_sink_open(&cli_report, &out, a->output, pid, host, rank) != 0)
        return 1;
    if (a->log_file && cli_sink_open(&cli_report, &log, a->log_file, pid, host, rank) != 0) {
        cli_sink_close(&out);
        return 1;
    }
    int text = a->format == report_format_find("text"), r = 0;
    if (!text || !log.f || a->output) /* text with --log-file alone goes to the log only */
        r = rv ? a->format->ranks(out.f, m, rv, &a->ro)
               : a->suspects ? a->format->suspects(out.f, m, &a->ro) : a->format->write(out.f, m, &a->ro, NULL);
    if (r == 0 && log.f)
        r = rv ? ranks_report_text(log.f, m, rv, &a->ro) : report_text(log.f, m, &a->ro, NULL);
    int bad = cli_sink_close(&out) | cli_sink_close(&log);
    if (r != 0)
        cli_fail(&cli_report, "the report could not be made");
    else if (a->ro.torch_trace)
        say_snapshot(a, m);
    return r != 0 || bad ? 1 : 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Is file FILE.PID of a FILE given too (sorted: the names given)? Its own FILE.PID.N
 * siblings are then not looked for: a job of 10,000 processes would read the directory
 * 10,000 times. */
static int sibling_of_given(const char *file, const char **sorted, int n)
{
    size_t len = strlen(file), d = len;
    while (d > 0 && file[d - 1] >= '0' && file[d - 1] <= '9')
        d--;
    if (d == len || d < 2 || file[d - 1] != '.')
        return 0;
    char *parent = strndup(file, d - 1);
    int given = parent && bsearch(&parent, sorted, (size_t)n, sizeof *sorted, by_name) != NULL;
    free(parent);
    return given;
}

/* The other processes of a job recorded with -o FILE wrote FILE.PID: a report of FILE
 * alone would leave them out without a word. */
static void note_siblings(const char **files, int nfiles)
{
    const char **sorted = malloc((size_t)(nfiles ? nfiles : 1) * sizeof *sorted);
    if (sorted) {
        memcpy(sorted, files, (size_t)nfiles * sizeof *sorted);
        qsort(sorted, (size_t)nfiles, sizeof *sorted, by_name);
    }
    for (int i = 0; i < nfiles; i++) {
        struct recording_list l;
        if (sorted && sibling_of_given(files[i], sorted, nfiles))
            continue;
        if (recordings_siblings(files[i], &l) != 0)
            continue;
        size_t left = 0;
        for (size_t k = 0; k < l.n; k++) {
            int given = 0;
            for (int j = 0; j < nfiles && !given; j++)
                given = !strcmp(files[j], l.paths[k]);
            if (!given)
                l.paths[left++] = l.paths[k]; /* the rest is freed with the list */
            else
                free(l.paths[k]);
        }
        l.n = left;
        if (left) {
            fprintf(stderr, "culeak: warning: %zu more recording%s of the job that wrote %s %s not read:", left,
                    left == 1 ? "" : "s", files[i], left == 1 ? "is" : "are");
            for (size_t k = 0; k < left && k < 8; k++)
                fprintf(stderr, " %s", l.paths[k]);
            fprintf(stderr, "%s (culeak report %s %s.* reads them together)\n", left > 8 ? " ..." : "", files[i],
                    files[i]);
        }
        recordings_free(&l);
    }
    free(sorted);
}

/* Rolled recordings read up to a part whose next part was not given. */
static void say_unread_parts(const struct model *m)
{
    long pid;
    const char *next;
    for (size_t i = 0; (next = model_unread_part(m, i, &pid)); i++)
        cli_fail(&cli_report, "warning: the recording of process %ld goes on in %s, which was not read: what it "
                              "holds is missing", pid, next);
}

/* Reads each file into m: 0, or 1 when one could not be read (said on stderr). */
static int load_files(struct model *m, const char **files, int nfiles)
{
    int status = 0;
    for (int i = 0; i < nfiles; i++) {
        char err[512];
        int r = model_load_file(m, files[i], err, sizeof err);
        if (r == 1)
            cli_fail(&cli_report, "warning: %s", err);
        else if (r < 0) {
            cli_fail(&cli_report, "cannot read %s", err);
            status = 1;
        }
    }
    say_unread_parts(m);
    return status;
}

/* "a.culeak" or "a.culeak a.culeak.4242" */
static char *files_name(const char **files, int nfiles)
{
    size_t len = 1;
    for (int i = 0; i < nfiles; i++)
        len += strlen(files[i]) + 1;
    char *s = malloc(len), *p = s;
    for (int i = 0; s && i < nfiles; i++)
        p += sprintf(p, "%s%s", i ? " " : "", files[i]);
    if (s && !nfiles)
        *s = 0;
    return s;
}

/* --baseline: the run of the baseline's recordings against the run of m. */
static int report_baseline(struct report_args *a, struct model *m, const char **files, int nfiles)
{
    struct model_options mo = cli_call_sites_model_options(&a->sites);
    struct model *base = model_new(&mo);
    if (!base)
        return 1;
    int status = load_files(base, a->baseline, a->nbaseline);
    note_siblings(a->baseline, a->nbaseline);
    if (model_process_count(base) == 0) {
        cli_fail(&cli_report, "nothing to compare with: the baseline has no process");
        model_free(base);
        return 1;
    }
    const struct model_process *p = model_process(m, 0);
    char rank[32];
    snprintf(rank, sizeof rank, "%d", p->rank < 0 ? 0 : p->rank);
    struct cli_sink out = {.f = stdout};
    if (cli_sink_open(&cli_report, &out, a->output, (long)p->pid, p->host, rank) != 0) {
        model_free(base);
        return 1;
    }
    char *names[2] = {files_name(a->baseline, a->nbaseline), files_name(files, nfiles)};
    const char *cnames[2] = {names[0] ? names[0] : "baseline", names[1] ? names[1] : "after"};
    struct compare c;
    int r = compare_runs(base, m, &a->ro, &c);
    if (r == 0) {
        r = a->format->baseline(out.f, m, &a->ro, base, &c, cnames);
    }
    if (r == 0 && a->log_file) {
        struct cli_sink log = {.f = NULL};
        if (cli_sink_open(&cli_report, &log, a->log_file, (long)p->pid, p->host, rank) != 0)
            status = 1;
        else {
            r = compare_text(log.f, &c, &a->ro, cnames);
            status |= cli_sink_close(&log) ? 1 : 0;
        }
    }
    if (cli_sink_close(&out) != 0)
        status = 1;
    if (r != 0) {
        cli_fail(&cli_report, "the comparison could not be made");
        status = 1;
    } else if (a->error_exit >= 0 && c.delta_bytes > 0 && (uint64_t)c.delta_bytes > a->max_increase) {
        status = (int)a->error_exit;
    }
    if (r == 0)
        compare_free(&c);
    free(names[0]);
    free(names[1]);
    model_free(base);
    return status;
}

/* The leak report of several recordings opens with the cross-rank view (report/ranks.h)
 * in the formats that have one, unless another report was asked for. */
static int ranks_wanted(const struct report_args *a, int nfiles)
{
    return nfiles >= 2 && (a->format->use & FORMAT_RANKS) && a->ro.what == REPORT_LEAKS && !a->nbaseline &&
           !a->suspects && !a->ro.merge_processes && a->ro.group == MODEL_GROUP_SITE;
}

/* Ranks of a job: two recordings read or more, and ranks in them (the processes a
 * program forks are not ranks: their report stays one section per process). */
static int ranks_of_job(const struct ranks_view *rv)
{
    for (size_t i = 0; rv->ok >= 2 && i < rv->ok; i++)
        if (rv->v[i].rank >= 0)
            return 1;
    return 0;
}

/* The view alone, of more than RANKS_DETAIL_MAX recordings: what could not be read said
 * here (the summaries kept it), then the report. */
static int report_ranks_alone(struct report_args *a, const struct ranks_view *rv)
{
    int status = 0;
    for (size_t i = 0; i < rv->n; i++) {
        if (rv->v[i].error) {
            cli_fail(&cli_report, "cannot read %s", rv->v[i].error);
            status = 1;
        } else if (rv->v[i].truncated) {
            cli_fail(&cli_report, "warning: %s: the recording is cut off or damaged: read up to there", rv->v[i].file);
        }
    }
    if (rv->ok == 0) {
        if (!status)
            cli_fail(&cli_report, "nothing to report");
        return 1;
    }
    if (write_reports(a, NULL, rv) != 0)
        return 1;
    if (a->error_exit >= 0 && rv->leaked_count)
        return (int)a->error_exit;
    return status;
}

int cmd_report(int argc, char **argv)
{
    struct report_args a;
    memset(&a, 0, sizeof a);
    report_options_init(&a.ro);
    a.format = report_format_find("text");
    a.error_exit = -1;
    int status;
    int first = cli_parse(&cli_report, argc, argv, on_option, &a, &status);
    if (first >= 0 && first >= argc) {
        first = -1;
        status = cli_error(&cli_report, "missing the recordings to read (culeak report FILE... [OPTIONS])");
    }
    if (first >= 0 && (check_args(&a) || cli_check_output_dir(&cli_report, a.output) ||
                       cli_check_output_dir(&cli_report, a.log_file))) {
        first = -1;
        status = 2;
    }
    if (first >= 0 && !a.no_default_suppressions &&
        (status = cli_load_default_suppressions(&cli_report, &a.supp)) != 0)
        first = -1;
    if (first < 0) {
        suppressions_free(a.supp);
        free(a.baseline);
        return status;
    }
    a.ro.supp = a.supp;
    char **expanded;
    int nfiles;
    if (report_files_expand((const char *const *)argv + first, argc - first, &expanded, &nfiles) != 0) {
        suppressions_free(a.supp);
        free(a.baseline);
        return 1;
    }
    const char **files = (const char **)expanded;
    struct model_options mo = cli_call_sites_model_options(&a.sites);
    struct ranks_view view, *rv = NULL;
    if (ranks_wanted(&a, nfiles) && report_files_ranked((const char *const *)files, nfiles)) {
        if (report_ranks_read(files, nfiles, 0, &mo, &a.ro, &view) != 0) {
            cli_fail(&cli_report, "out of memory");
            report_files_free(expanded, nfiles);
            suppressions_free(a.supp);
            return 1;
        }
        rv = ranks_of_job(&view) ? &view : (ranks_view_free(&view), NULL);
    }
    if (rv && nfiles > RANKS_DETAIL_MAX) { /* each process's report too: not of so many */
        status = report_ranks_alone(&a, rv);
        ranks_view_free(rv);
        report_files_free(expanded, nfiles);
        suppressions_free(a.supp);
        free(a.baseline);
        return status;
    }
    struct model *m = model_new(&mo);
    if (!m) {
        if (rv)
            ranks_view_free(rv);
        report_files_free(expanded, nfiles);
        suppressions_free(a.supp);
        return 1;
    }
    /* snapshots are taken as the marks go by; a diff stops each stream at B so that
     * "allocated after A, still live at B" is exact */
    if (a.at)
        model_snapshot_at_mark(m, a.at, a.at);
    int html = a.format == report_format_find("html");
    if (html) /* the page shows the whole run: its moments, not a stop at B */
        model_keep_moments(m, HTML_MOMENTS, 0);
    if (a.ro.what == REPORT_DIFF) {
        model_snapshot_at_mark(m, a.ro.diff_a, a.ro.diff_a);
        model_snapshot_at_mark(m, a.ro.diff_b, a.ro.diff_b);
        if (!html)
            model_stop_at_mark(m, a.ro.diff_b);
    }
    if (a.format == report_format_find("torch-snapshot")) {
        if (!(a.ro.torch_trace = torch_trace_attach(m, a.from, a.to))) {
            model_free(m);
            suppressions_free(a.supp);
            return 1;
        }
        if (a.to)
            model_stop_at_mark(m, a.to);
    }
    a.ro.snapshot = a.at;
    status = load_files(m, files, nfiles);
    note_siblings(files, nfiles);
    if (model_process_count(m) == 0) {
        if (!status) /* else each recording unread said why */
            cli_fail(&cli_report, "nothing to report");
        status = 1;
    } else if (a.nbaseline) {
        int rb = report_baseline(&a, m, files, nfiles);
        if (rb) /* a recording of the baseline unread, or the exit status asked for */
            status = rb;
    } else if (a.ro.torch_trace && a.from && a.ro.torch_trace->from_at == SIZE_MAX) {
        status = no_mark(&a, files, nfiles, a.from);
    } else if (a.ro.torch_trace && a.to && !a.ro.torch_trace->to_seen) {
        status = no_mark(&a, files, nfiles, a.to);
    } else if (a.ro.torch_trace && a.ro.torch_trace->proc < 0) {
        cli_fail(&cli_report, "nothing to write: no device memory was allocated");
        status = 1;
    } else if (a.at && !snapshot_taken(m, a.at)) {
        status = no_mark(&a, files, nfiles, a.at);
    } else if (a.ro.what == REPORT_DIFF && !snapshot_taken(m, a.ro.diff_a)) {
        status = no_mark(&a, files, nfiles, a.ro.diff_a);
    } else if (a.ro.what == REPORT_DIFF && !snapshot_taken(m, a.ro.diff_b)) {
        status = no_mark(&a, files, nfiles, a.ro.diff_b);
    } else {
        /* every stream stopped at mark B (or ended before it): the model's "now" is B */
        if (a.ro.what == REPORT_DIFF && !html && model_snapshot_find(m, a.ro.diff_b) >= 0 &&
            !model_label_is_seq(a.ro.diff_b))
            a.ro.diff_b_is_now = 1;
        if (write_reports(&a, m, rv) != 0)
            status = 1;
        struct report_summary sum;
        if (a.error_exit >= 0 && report_summarize(m, &a.ro, &sum) == 0 && sum.allocations)
            status = (int)a.error_exit;
    }
    model_free(m);
    torch_trace_free(a.ro.torch_trace);
    if (rv)
        ranks_view_free(rv);
    report_files_free(expanded, nfiles);
    suppressions_free(a.supp);
    free(a.baseline);
    return status;
}
