/* The cross-rank view: one summary per recording (host, rank, device, peak, live at the
 * end, growth per iteration, fastest suspect, time to fill the device, its call sites and
 * its live bytes at its marks), made from a model holding that one process and kept
 * after the model is freed; then the ranks that differ from the rest and the call sites
 * merged across ranks, written as text, JSON or one HTML page (a ranks x marks heat map).
 *
 * The rule for "differs": over the ranks' growth per iteration g (that of each rank's
 * fastest growth suspect, 0 without one), with m the median and MAD the median of
 * |g - m|, a rank differs when |g - m| > 3 x 1.4826 x MAD and |g - m| >= 4 KiB. 1.4826 x
 * MAD estimates the standard deviation of normal data without letting a few outliers
 * widen it; the 4 KiB floor keeps a rank whose growth is a page of allocator rounding
 * from being named when all the others are exactly flat (MAD 0). Both medians are lower
 * medians (of an even count, the lower middle value): of two ranks, one flat and one
 * growing, the growing one differs (a mean of the middle two would put both at the same
 * distance). */
#ifndef CULEAK_REPORT_RANKS_H
#define CULEAK_REPORT_RANKS_H

#include "report/report.h"

#include <stdint.h>
#include <stdio.h>

#define RANK_SITES_MAX 64     /* call sites kept per rank: the most bytes first */
#define RANK_MARKS_MAX 1024   /* marks kept per rank (every k-th when more) */
#define RANK_SAMPLES_MAX 256  /* timeline samples kept per rank */
#define RANKS_COLUMNS_MAX 64  /* heat-map columns */
#define RANKS_MAD_SCALE 1.4826
#define RANKS_MAD_TIMES 3.0
#define RANKS_GROWTH_FLOOR 4096

struct rank_site {
    char *text;              /* "train_step at data.py:88" */
    uint64_t bytes, count;   /* leaked (live at the end) */
    int64_t per_mark;        /* growth per iteration when a suspect; 0 */
};

struct rank_mark {
    char *label;
    uint64_t live_bytes;
};

struct rank_sample {
    uint64_t t_ns, live_bytes;
};

struct rank_summary {
    char *file, *host, *error; /* error: why the recording could not be read (the rest 0) */
    int rank;                  /* -1: the recording carries none */
    uint64_t pid;
    int device;                /* the first device it used; -1 none */
    int devices;               /* how many */
    uint64_t peak_bytes, live_bytes;       /* device memory */
    uint64_t leaked_bytes, leaked_count;   /* the leak report's (suppressions applied) */
    int unended, truncated;
    int64_t growth;            /* per iteration, of the fastest suspect; 0: none */
    char *suspect;             /* its site; NULL: none */
    char *series;              /* its marks' pattern, "iteration #" */
    int forecast;              /* fill_* known */
    int fill_device;
    double fill_s, fill_marks;
    struct rank_site *sites;
    size_t nsites;
    struct rank_mark *marks;
    size_t nmarks;
    struct rank_sample *samples;
    size_t nsamples;
};

/* The summary of process proc of m (o: the leak report's suppressions); 0, or -1 out of
 * memory. file is copied. */
int rank_summarize(struct model *m, int proc, const char *file, const struct report_options *o,
                   struct rank_summary *out);
void rank_summary_free(struct rank_summary *s);

struct ranks_site {
    const char *text;
    uint64_t bytes, count;
    size_t nranks;           /* ranks that show it (leaked or growing there) */
    size_t first;            /* the first of them (index into the summaries) */
    size_t fastest;          /* the one growing fastest there; SIZE_MAX none grows */
    int64_t per_mark;        /* its growth */
    size_t *which;           /* the first RANKS_SITE_LIST of them */
    size_t nwhich;
    size_t last;             /* the latest summary counted (a rank counts once) */
};
#define RANKS_SITE_LIST 8

struct ranks_view {
    struct rank_summary *v;  /* in rank order (host, then pid, for ranks alike) */
    size_t n;                /* summaries read; unreadable ones are left out of the rest */
    size_t ok;               /* the readable ones: v[0..ok) (the unreadable sort last) */
    size_t hosts;
    double median, mad;      /* of growth, over the readable ones */
    int *differs;            /* per summary */
    size_t ndiffer;
    size_t first_full;       /* the rank that fills its device first; SIZE_MAX none */
    struct ranks_site *sites;/* most bytes first, then most ranks */
    size_t nsites;
    const char **columns;    /* heat-map marks (labels) */
    size_t ncolumns;
    uint64_t leaked_bytes, leaked_count;
};

/* Takes the n summaries (sorts them, owns them after): 0, or -1 out of memory. */
int ranks_view_build(struct rank_summary *v, size_t n, struct ranks_view *out);
void ranks_view_free(struct ranks_view *r);
/* Live bytes of summary i at column c; 0 with *known 0 when it has no such mark. */
uint64_t ranks_cell(const struct ranks_view *r, size_t i, size_t c, int *known);
/* "rank 13 on b7" (or "pid 4242 on b7" without a rank) */
void ranks_name(const struct rank_summary *s, char *buf, size_t len);

/* The writers: text (the table, the ranks that differ, the sites across ranks), the
 * "cross_rank" JSON member (key included), a whole HTML page. 0, or -1. */
int ranks_text(FILE *f, const struct ranks_view *r, const struct report_options *o);
int ranks_json(FILE *f, const struct ranks_view *r, const struct report_options *o);
int ranks_html(FILE *f, const struct ranks_view *r, const struct report_options *o);

#endif
