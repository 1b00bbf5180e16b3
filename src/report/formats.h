/* The report formats: one row each (name, what it writes, what it goes with, its
 * writers), read by `culeak report`, `culeak check` and the console's `export`. A new
 * format is one writer file and one row of formats.c; the options' checks, the error
 * messages listing the formats and --help's list follow from the row. */
#ifndef CULEAK_REPORT_FORMATS_H
#define CULEAK_REPORT_FORMATS_H

#include "report/compare.h"
#include "report/ranks.h"
#include "report/report.h"

#include <stdio.h>

/* What a format goes with, besides the leak report every format writes. */
enum report_format_use {
    FORMAT_OTHER_SOURCES = 1 << 0, /* --peak, --at and --diff (what was live, not what leaked) */
    FORMAT_DIFF = 1 << 1,          /* --diff A B */
    FORMAT_SUSPECTS = 1 << 2,      /* --suspects */
    FORMAT_BASELINE = 1 << 3,      /* --baseline: two runs compared */
    FORMAT_CHECK = 1 << 4,         /* culeak check --format */
    FORMAT_EXPORT = 1 << 5,        /* the console's `export FILE.EXT` of the model, by the file's extension
                                      (.json and .csv export the table on screen instead) */
    FORMAT_BINARY = 1 << 6,        /* bytes for a program, not text: never to a terminal */
    FORMAT_RANKS = 1 << 7,         /* the leak report of several ranks opens with the cross-rank view */
};

struct report_format {
    const char *name;      /* --format NAME; also the extension `export` recognizes */
    const char *what;      /* for --help and the man page: "one self-contained page" */
    unsigned use;          /* enum report_format_use */
    int (*write)(FILE *f, struct model *m, const struct report_options *o, struct report_summary *s);
    int (*suspects)(FILE *f, struct model *m, const struct report_options *o);         /* FORMAT_SUSPECTS */
    int (*baseline)(FILE *f, struct model *m, const struct report_options *o, struct model *base,
                    const struct compare *c, const char *const names[2]);               /* FORMAT_BASELINE */
    /* FORMAT_RANKS: the view r, then the report of m when the processes were read into
     * one model too (m NULL: too many of them; the view alone) */
    int (*ranks)(FILE *f, struct model *m, const struct ranks_view *r, const struct report_options *o);
};

/* The `ranks` writers (ranks_report.c). */
int ranks_report_text(FILE *f, struct model *m, const struct ranks_view *r, const struct report_options *o);
int ranks_report_json(FILE *f, struct model *m, const struct ranks_view *r, const struct report_options *o);
int ranks_report_html(FILE *f, struct model *m, const struct ranks_view *r, const struct report_options *o);

/* The format called name; NULL when there is none. */
const struct report_format *report_format_find(const char *name);
/* The formats that go with every use of `use` (0: all), as a list in words into buf:
 * "text, json or html". */
const char *report_format_list(unsigned use, char *buf, size_t len);
/* The format of an exported file by its extension ("out.json" -> json); NULL when the
 * extension names no format `export` writes. */
const struct report_format *report_format_of_path(const char *path);

#endif
