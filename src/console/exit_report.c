/* The leak report at the job's end, in the output pane (cut to its largest sites when
 * long) and, with --log-file, whole in a file. */
#include "console.h"
#include "common/outpath.h"
#include "common/output_file.h"
#include "fmt.h"
#include "report/report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --log-file: the exit report goes to a file as well; %p, %h and %r are those of the
 * job's first process. */
static void write_log_file(struct console *c, const char *text, size_t len)
{
    const struct model_process *p = model_process_count(c->u.m) ? model_process(c->u.m, 0) : NULL;
    char rank[32], path[4096], line[4400];
    snprintf(rank, sizeof rank, "%d", p && p->rank >= 0 ? p->rank : 0);
    struct culeak_output out;
    int bad = 1;
    errno = ENAMETOOLONG;
    if (culeak_expand_path(c->opt.log_file, p ? (long)p->pid : (long)getpid(), p ? p->host : NULL, rank, path,
                           sizeof path) >= 0 &&
        culeak_output_open(&out, path) == 0)
        bad = culeak_output_close(&out, fwrite(text, 1, len, out.f) != len) != 0;
    int err = errno;
    if (bad)
        snprintf(line, sizeof line, "[culeak] cannot write the leak report to %s: %s", path, strerror(err));
    else
        snprintf(line, sizeof line, "[culeak] leak report written to %s", path);
    outbuf_add_line(&c->u.out, line);
}

/* Lines of the exit report the output pane takes: a longer one would push itself (and
 * what the job printed) out of the scrollback. */
#define REPORT_PANE_LINES 2000

static void add_report_line(struct console *c, const char *p, size_t n)
{
    char line[1200];
    snprintf(line, sizeof line, "[culeak]   %.*s", (int)(n < 1100 ? n : 1100), p);
    outbuf_add_line(&c->u.out, line);
}

/* The report's lines into the output pane: all of them when they fit; else its first
 * sites (the largest), cut at a blank line between two sites, a line saying where the
 * rest is, and its summary. */
static void add_report_lines(struct console *c, const char *text)
{
    size_t lines = 0;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    const char *summary = strstr(text, "\nLEAK SUMMARY:"), *cut = NULL;
    if (summary && lines > REPORT_PANE_LINES) {
        summary++;
        size_t n = 0;
        const char *p = text, *blank = NULL;
        for (const char *nl; p < summary && n < REPORT_PANE_LINES - 20 && (nl = strchr(p, '\n')); p = nl + 1, n++)
            if (nl == p)
                blank = p;
        cut = blank ? blank : p;
    }
    for (const char *p = text, *nl; p && *p; p = nl ? nl + 1 : NULL) {
        if (p == cut) {
            size_t left = 0;
            for (const char *q = cut; q < summary; q++)
                left += *q == '\n';
            char note[300];
            snprintf(note, sizeof note, "[culeak]   ... %zu more lines, of smaller sites: the whole report goes to "
                     "--log-file FILE (or save FILE, then culeak report FILE)", left);
            outbuf_add_line(&c->u.out, "[culeak]");
            outbuf_add_line(&c->u.out, note);
            p = summary;
        }
        nl = strchr(p, '\n');
        add_report_line(c, p, nl ? (size_t)(nl - p) : strlen(p));
    }
}

void console_report_options(const struct console *c, struct report_options *o)
{
    report_options_init(o);
    o->depth = 8;
    o->supp = c->opt.supp;
}

/* The most refusals the exit report lists one by one; the rest are counted. */
#define REFUSALS_LISTED 64

void console_note_refusal(struct console *c, const char *text)
{
    if (c->nrefused < REFUSALS_LISTED) {
        if (c->nrefused == c->caprefused) {
            size_t cap = c->caprefused ? c->caprefused * 2 : 8;
            char **v = realloc(c->refused, cap * sizeof *v);
            if (!v)
                return;
            c->refused = v;
            c->caprefused = cap;
        }
        c->refused[c->nrefused] = strdup(text);
        if (!c->refused[c->nrefused])
            return;
    }
    c->nrefused++;
}

/* After the report: every process the job had is in it, or named here with why. */
static void say_refusals_again(struct console *c)
{
    if (!c->nrefused)
        return;
    char line[400];
    snprintf(line, sizeof line, "[culeak]   NOT TRACED: %zu process%s the report does not hold:", c->nrefused,
             c->nrefused == 1 ? "" : "es");
    outbuf_add_line(&c->u.out, line);
    for (size_t i = 0; i < c->nrefused && i < REFUSALS_LISTED; i++) {
        snprintf(line, sizeof line, "[culeak]     %s", c->refused[i]);
        outbuf_add_line(&c->u.out, line);
    }
    if (c->nrefused > REFUSALS_LISTED) {
        snprintf(line, sizeof line, "[culeak]     ... and %zu more", c->nrefused - REFUSALS_LISTED);
        outbuf_add_line(&c->u.out, line);
    }
}

void console_leak_report(struct console *c)
{
    struct report_options o;
    console_report_options(c, &o);
    struct report_summary sum;
    char *text = NULL;
    size_t len = 0;
    if (model_process_count(c->u.m) == 0) { /* not "no leaks": nothing was seen */
        outbuf_add_line(&c->u.out, "[culeak] ==== no leak report: no process of the job connected (it made no "
                                   "CUDA call culeak saw) ====");
        return;
    }
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return;
    int rc = report_text(f, c->u.m, &o, &sum);
    fclose(f);
    char line[1200], a[32];
    if (rc == 0) {
        snprintf(line, sizeof line, "[culeak] ==== leak report: %s in %llu allocation%s still live ====",
                 fmt_size(a, sizeof a, sum.bytes), (unsigned long long)sum.allocations, plural(sum.allocations));
        outbuf_add_line(&c->u.out, line);
        if (!sum.allocations && !sum.cache_allocations && !sum.held_allocations && !sum.suppressed_allocations &&
            !sum.before_allocations && !sum.end_allocations)
            outbuf_add_line(&c->u.out, "[culeak]   no leaks: every allocation was freed");
        add_report_lines(c, text);
        say_refusals_again(c);
        if (c->opt.log_file)
            write_log_file(c, text, len);
    }
    free(text);
}
