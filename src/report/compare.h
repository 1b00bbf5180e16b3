/* Two runs compared (report --baseline, the console's compare): per call site, what is
 * new, gone, grown or shrunk from a baseline run to the run after it. Sites are matched by
 * their function and file:line (a site without line information by its function and
 * module, one without a function by module+offset), never by address: the two runs'
 * libraries load at other addresses. */
#ifndef CULEAK_COMPARE_H
#define CULEAK_COMPARE_H

#include "report.h"

#include <stdio.h>

enum compare_change { COMPARE_SAME, COMPARE_NEW, COMPARE_GONE, COMPARE_GROWN, COMPARE_SHRUNK };
const char *compare_change_name(enum compare_change c); /* "same", "new", "gone", ... */

/* The runs, [0] the baseline and [1] the run after it. */
struct compare_side {
    uint64_t bytes, count;      /* the site's memory in the report (leaks: live at the end) */
    int suspect;                /* a growth suspect of that run */
    int proc;                   /* the representative stack, in that run's model; -1: none */
    uint64_t stack;
};
struct compare_row {
    const char *key;            /* what matches it (owned by the compare) */
    const char *text;           /* as the later run names it (the baseline when gone) */
    const char *function, *file, *module;
    unsigned line;
    int blocks;                 /* a pool's blocks (kind block), matched apart */
    struct compare_side side[2];
    int64_t delta_bytes, delta_count;
    enum compare_change change;
};
struct compare_suspect {
    int run;                    /* 0 the baseline, 1 the later run */
    const char *text;           /* the site */
    int64_t per_mark;
    char forecast[256];
};
struct compare {
    struct compare_row *rows;   /* most growth first, then most shrink; unchanged rows last */
    size_t n;
    struct report_summary sum[2];
    int64_t delta_bytes, delta_count;
    size_t changes[5];          /* rows per enum compare_change */
    struct compare_suspect *suspects;
    size_t nsuspects;
    struct model *m[2];         /* the models compared (not owned) */
};

/* Compares the report o asks for (leaks by default, or the peak; the call sites of every
 * process added up) of run a (the baseline) and run b. 0, or -1 (out of memory, or a
 * report o cannot make). */
int compare_runs(struct model *a, struct model *b, const struct report_options *o, struct compare *c);
void compare_free(struct compare *c);

/* names[0], names[1]: what each run is called in the report (its recordings). */
int compare_text(FILE *f, const struct compare *c, const struct report_options *o, const char *const names[2]);
int compare_json(FILE *f, const struct compare *c, const struct report_options *o, const char *const names[2]);

/* The HTML page of run m (report_html) with the baseline's timeline drawn on the same axis
 * (each process's time from its start) and both runs' leaks in the header. */
int report_html_compare(FILE *f, struct model *m, const struct report_options *o, struct model *base,
                        const char *const names[2]);

#endif
