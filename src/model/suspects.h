/* Growth suspects: call sites whose live bytes rose at most of the recent marks, with how
 * much they grow per mark interval (an iteration, when the job marks its iterations),
 * since when, and when they would fill the device at that pace.
 *
 * The rule. The marks of a process are grouped into series by label, digits aside
 * ("iteration 5" and "iteration 6" are the series "iteration #"; range pops are not
 * marks here); up to MODEL_SUSPECT_SERIES series per process, the first ones seen, until
 * a pattern whose numbers rise recurs with all taken: it replaces the lowest ranked one
 * (seen once, then numbers that do not rise: operator names; counting up by one ranks
 * above merely rising) from that mark on. A site suspect in several series is reported
 * with the highest ranked, then the one with the most marks. At
 * each mark of a series the model keeps every site's live bytes (device-resident kinds
 * added up; pinned host, registered host and a program's own pool blocks apart), in a
 * ring of the last MODEL_SUSPECT_WINDOW + 1 marks per site. Over the last W intervals,
 * W = min(MODEL_SUSPECT_WINDOW, marks - 1) and at least MODEL_SUSPECT_MIN_INTERVALS, a
 * site is a suspect when its live bytes rose at >= ceil(0.8 W) of them (8 of 10, 4 of
 * 4, 4 of 5, 5 of 6, ...) and are higher now than W marks ago. A site that allocates
 * and frees within every iteration (same bytes at every mark) or goes up and down is
 * not one, nor is a site that fell back to the least it held since it first held bytes
 * while its live bytes are no higher than the most it held before that fall (a cycle:
 * the input of variable-length batches); a leak keeps making new highs. Its growth per iteration is the median of its W interval changes; "since" is
 * the last mark at which its live bytes were at their lowest so far.
 *
 * Growth in steps (a leak on a path taken every few iterations, an error path) is a
 * suspect too, marked stepwise: a site whose live bytes never fell over a whole window
 * (MODEL_SUSPECT_WINDOW intervals: with fewer marks, the rule above only), rose
 * at MODEL_SUSPECT_STEP_MIN marks or more since they last fell, and are higher now than
 * W marks ago. Its growth per iteration is the mean since it last fell.
 *
 * The forecast divides the free memory of the device, as the latest mark that carried
 * it said (cuMemGetInfo in the marking thread's context, culeak-stream(5)), by the
 * growth per iteration, and multiplies by the median time between the series' marks.
 * Suspects come soonest to fill their device first (then those without a forecast,
 * fastest growing first): the first one is the one to fix first. */
#ifndef CULEAK_SUSPECTS_H
#define CULEAK_SUSPECTS_H

#include "model.h"

#define MODEL_SUSPECT_WINDOW 10       /* mark intervals looked at */
#define MODEL_SUSPECT_MIN_INTERVALS 4 /* fewer: no verdict yet */
#define MODEL_SUSPECT_SERIES 8        /* label patterns followed per process (<= 8) */
#define MODEL_SUSPECT_STEP_MIN 3      /* rises since a site last fell: growth in steps */

struct model_suspect {
    int proc;
    uint32_t site;            /* id of the site's row (MODEL_GROUP_SITE) */
    int kind;                 /* MODEL_KIND_DEVICE_MEMORY, or the culeak_kind of the bytes */
    uint64_t stack;           /* the member stack with the most bytes at the latest mark */
    const char *text, *module;/* the site's names (NULL unless asked for) */
    const char *series;       /* the label pattern of the marks: "iteration #" */
    unsigned intervals, rises;/* the window W, and at how many of its intervals it rose */
    uint64_t marks;           /* marks of the series so far */
    const char *last_label;   /* the latest mark */
    uint64_t live_bytes;      /* at the latest mark */
    uint64_t window_bytes;    /* W marks before it */
    int64_t per_mark;         /* median change per interval (> 0); step-wise: the mean */
    int stepwise;             /* 1: it grows in steps, at fewer marks than the rule's 80%
                               * (see below), never falling */
    const char *since_label;  /* the last mark at which it was at its lowest */
    uint64_t since_seq, since_bytes, since_marks; /* ... its seq, bytes then, marks ago */
    double interval_s;        /* median time between the series' marks */
    int forecast;             /* 1: the fields below are known */
    int device;
    uint64_t free_bytes, total_bytes; /* the device's, at the latest mark carrying them */
    double fill_marks, fill_s;        /* until the device is full at this pace */
    int running;              /* its process runs on (no exit, its stream open): the forecast
                               * speaks of what comes, else of what would have come */
};

struct model_suspects {
    struct model_suspect *v;  /* soonest to fill its device first */
    size_t n;
};

/* The suspects of proc (or MODEL_ALL: each process apart). names: fill text and module
 * (resolves symbols). 0, or -1 when out of memory. */
int model_suspects(struct model *m, int proc, int names, struct model_suspects *out);
void model_suspects_free(struct model_suspects *s);

/* The words (suspect_words.c). "at +16.0 KiB per iteration (0.30 s each), this site
 * fills device 0 in ~41,000 iterations (~3.4 h)"; of a process that ended, "... this site
 * would have filled device 0 in ~41,000 more iterations (~3.4 h)"; or why there is no
 * forecast. Marks all at one instant leave the times out. */
void model_suspect_forecast(const struct model_suspect *s, char *buf, size_t len);
/* Its part from "fills": "fills device 0 in ~41,000 iterations (~3.4 h)" (s->forecast). */
void model_suspect_fill_text(const struct model_suspect *s, char *buf, size_t len);
/* "rose at 8 of the last 10 marks"; growth in steps: "rose in steps at 3 of the last 10
 * marks and never fell" */
void model_suspect_rise_words(const struct model_suspect *s, char *buf, size_t len);
/* "16.0 KiB", "512 B", "4.00 GiB" */
void model_format_size(char *buf, size_t len, double bytes);
/* "~7", "~41,000", "~3.5 million", "~120 million", "~1.5 billion" */
void model_format_count(char *buf, size_t len, double n);
/* "under a second", "~40 s", "~12 min", "~3.4 h", "~2.1 days", "~5 months", "~75 years" */
void model_format_duration(char *buf, size_t len, double seconds);
/* The time between marks: "0.30 s", "12.5 ms", "40 µs"; 0 (and "") when it is none. */
int model_format_interval(char *buf, size_t len, double seconds);

#endif
