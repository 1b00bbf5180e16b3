/* `culeak report FILE...`: leaks, the peak, a mark, or a diff between two marks, from
 * recordings; several files (the ranks of one job) are merged with processes kept apart. */
#include "commands.h"
#include "launch.h"
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HTML_MOMENTS 256 /* moments kept per process for the page (model_keep_moments) */

static int usage(FILE *f, int rc)
{
    fputs("usage: culeak report FILE... [--leaks | --peak | --at MARK | --diff A B | --suspects]\n"
          "                      [--group site|function|file|module|stack] [--format text|json|folded|html]\n"
          "                      [--merge-processes] [--depth N] [--skip GLOB] [--skip-function GLOB]\n"
          "                      [-o FILE]\n"
          "Reports from recordings: leaks (default: live at exit, or when their context was destroyed),\n"
          "what was live at the peak of device memory, at a mark, or what changed between two marks\n"
          "(A and B are mark labels, or event seq numbers), or the growth suspects: call sites whose\n"
          "live bytes rose at 8 of the last 10 marks of one label pattern (\"iteration N\"; with fewer\n"
          "marks, 80% of them and at least 4) and are higher than 10 marks ago, with their growth per\n"
          "iteration (the median), the mark since which they grow, and when they would fill the device\n"
          "(its free memory at the latest mark). JSON reports always carry them (\"suspects\").\n"
          "Several files (the ranks of one job) are read together and each process is reported\n"
          "apart: a section per process in text, rows\n"
          "with their process's pid and rank in JSON, a root frame per process in folded stacks;\n"
          "--diff compares each process between its own marks A and B. --merge-processes adds the\n"
          "processes up instead (one row per site). --skip adds modules to look through when\n"
          "finding call sites (also $CULEAK_SKIP_MODULES); --skip-function adds functions, or source\n"
          "files with a GLOB containing '/' (also $CULEAK_SKIP_FUNCTIONS; the CUDA runtime linked\n"
          "into a program, cuda*, libcudart_static_* and cuda_runtime.h, is looked through by\n"
          "default). --format html writes one self-contained page (timeline, flame graph, sites;\n"
          "with --diff, coloured by the growth from A to B). Exit status: 0, or 1 when a\n"
          "recording could not be read (whatever could be\n"
          "read is still reported).\n",
          f);
    return rc;
}

struct report_args {
    const char **files;
    int nfiles;
    struct report_options ro;
    const char *format, *output, *at;
    int suspects;
    char skip[4096], skip_fn[4096];
};

static int append_skip(char *skip, size_t len, const char *glob)
{
    size_t n = strlen(skip);
    int w = snprintf(skip + n, len - n, "%s%s", n ? "," : "", glob);
    return w < 0 || (size_t)w >= len - n ? -1 : 0;
}

static int parse(int argc, char **argv, struct report_args *a)
{
    report_options_init(&a->ro);
    a->format = "text";
    a->files = calloc((size_t)argc, sizeof *a->files);
    if (!a->files)
        return 2;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(s, "-h") || !strcmp(s, "--help"))
            return usage(stdout, 0) - 1;
        else if (!strcmp(s, "--leaks"))
            a->ro.what = REPORT_LEAKS;
        else if (!strcmp(s, "--peak"))
            a->ro.what = REPORT_PEAK;
        else if (!strcmp(s, "--suspects"))
            a->suspects = 1;
        else if (!strcmp(s, "--merge-processes"))
            a->ro.merge_processes = 1;
        else if (!strcmp(s, "--at") && more) {
            a->ro.what = REPORT_SNAPSHOT;
            a->at = argv[++i];
        } else if (!strcmp(s, "--diff") && i + 2 < argc) {
            a->ro.what = REPORT_DIFF;
            a->ro.diff_a = argv[++i];
            a->ro.diff_b = argv[++i];
        } else if (!strcmp(s, "--group") && more) {
            int g = model_group_by_name(argv[++i]);
            if (g < 0) {
                fprintf(stderr, "culeak report: --group takes site, function, file, module or stack\n");
                return 2;
            }
            a->ro.group = (enum model_group)g;
        } else if (!strcmp(s, "--format") && more) {
            a->format = argv[++i];
            if (strcmp(a->format, "text") && strcmp(a->format, "json") && strcmp(a->format, "folded") &&
                strcmp(a->format, "html")) {
                fprintf(stderr, "culeak report: --format takes text, json, folded or html\n");
                return 2;
            }
        } else if (!strcmp(s, "--depth") && more) {
            long d = culeak_parse_count(argv[++i]);
            if (d < 1 || d > 4096) {
                fprintf(stderr, "culeak report: --depth takes 1 to 4096\n");
                return 2;
            }
            a->ro.depth = (int)d;
        } else if (!strcmp(s, "--skip") && more) {
            if (append_skip(a->skip, sizeof a->skip, argv[++i]) != 0)
                return 2;
        } else if (!strcmp(s, "--skip-function") && more) {
            if (append_skip(a->skip_fn, sizeof a->skip_fn, argv[++i]) != 0)
                return 2;
        } else if ((!strcmp(s, "-o") || !strcmp(s, "--output")) && more) {
            a->output = argv[++i];
        } else if (s[0] == '-' && s[1]) {
            fprintf(stderr, "culeak report: unknown option %s\n", s);
            return usage(stderr, 2);
        } else {
            a->files[a->nfiles++] = s;
        }
    }
    if (!a->nfiles)
        return usage(stderr, 2);
    if (a->suspects && !strcmp(a->format, "folded")) {
        fprintf(stderr, "culeak report: --suspects prints text or json\n");
        return 2;
    }
    if (a->ro.what == REPORT_DIFF && !strcmp(a->format, "folded")) {
        fprintf(stderr, "culeak report: --diff prints text or json\n");
        return 2;
    }
    return 0;
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

int cmd_report(int argc, char **argv)
{
    struct report_args a;
    memset(&a, 0, sizeof a);
    int rc = parse(argc, argv, &a);
    if (rc) {
        free(a.files);
        return rc < 0 ? 0 : rc;
    }
    struct model_options mo = {.skip_modules = a.skip[0] ? a.skip : NULL,
                               .skip_functions = a.skip_fn[0] ? a.skip_fn : NULL};
    struct model *m = model_new(&mo);
    if (!m) {
        free(a.files);
        return 1;
    }
    /* snapshots are taken as the marks go by; a diff stops each stream at B so that
     * "allocated after A, still live at B" is exact */
    if (a.at)
        model_snapshot_at_mark(m, a.at, a.at);
    int html = !strcmp(a.format, "html");
    if (html) /* the page shows the whole run: its moments, not a stop at B */
        model_keep_moments(m, HTML_MOMENTS, 0);
    if (a.ro.what == REPORT_DIFF) {
        model_snapshot_at_mark(m, a.ro.diff_a, a.ro.diff_a);
        model_snapshot_at_mark(m, a.ro.diff_b, a.ro.diff_b);
        if (!html)
            model_stop_at_mark(m, a.ro.diff_b);
    }
    a.ro.snapshot = a.at;
    int status = 0;
    for (int i = 0; i < a.nfiles; i++) {
        char err[512];
        int r = model_load_file(m, a.files[i], err, sizeof err);
        if (r == 1)
            fprintf(stderr, "culeak: warning: %s\n", err);
        else if (r < 0) {
            fprintf(stderr, "culeak: %s\n", err);
            status = 1;
        }
    }
    if (model_process_count(m) == 0) {
        fprintf(stderr, "culeak: nothing to report\n");
        model_free(m);
        free(a.files);
        return 1;
    }
    const char *missing = NULL;
    if (a.at && !snapshot_taken(m, a.at))
        missing = a.at;
    else if (a.ro.what == REPORT_DIFF && !snapshot_taken(m, a.ro.diff_a))
        missing = a.ro.diff_a;
    else if (a.ro.what == REPORT_DIFF && !snapshot_taken(m, a.ro.diff_b))
        missing = a.ro.diff_b;
    if (missing) {
        fprintf(stderr, "culeak: no mark '%s' (and no event with that seq) in the recordings\n", missing);
        model_free(m);
        free(a.files);
        return 1;
    }
    /* every stream stopped at mark B (or ended before it): the model's "now" is B */
    if (a.ro.what == REPORT_DIFF && !html && model_snapshot_find(m, a.ro.diff_b) >= 0 &&
        !model_label_is_seq(a.ro.diff_b))
        a.ro.diff_b_is_now = 1;
    FILE *out = stdout;
    if (a.output && !(out = fopen(a.output, "w"))) {
        perror(a.output);
        model_free(m);
        free(a.files);
        return 1;
    }
    int r;
    if (html)
        r = report_html(out, m, &a.ro);
    else if (!strcmp(a.format, "json"))
        r = report_json(out, m, &a.ro, NULL);
    else if (!strcmp(a.format, "folded"))
        r = report_folded(out, m, &a.ro);
    else if (a.suspects)
        r = report_suspects_text(out, m, &a.ro);
    else
        r = report_text(out, m, &a.ro, NULL);
    if (r != 0) {
        fprintf(stderr, "culeak: the report could not be made\n");
        status = 1;
    }
    if (out != stdout)
        fclose(out);
    else
        fflush(stdout);
    model_free(m);
    free(a.files);
    return status;
}
