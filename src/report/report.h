/* Reports over a model: leaks (live at exit or ended by a reset), what was live at the
 * peak or in a snapshot, and diffs; as text, JSON or folded stacks. Shared by
 * `culeak check`, `culeak report` and the console's exit report. */
#ifndef CULEAK_REPORT_H
#define CULEAK_REPORT_H

#include "model/model.h"

#include <stdio.h>

struct suppressions; /* suppress.h */

/* The "version" of the JSON reports: raised when a key changes meaning or goes away
 * (new keys may appear without it). culeak(1) documents the schema. */
#define REPORT_JSON_VERSION 1

enum report_what { REPORT_LEAKS, REPORT_PEAK, REPORT_SNAPSHOT, REPORT_NOW, REPORT_DIFF };

struct report_options {
    enum report_what what;
    enum model_group group;
    int proc;                /* MODEL_ALL or one process */
    /* Several processes: 0 (default) reports each process apart, a row being (process,
     * site); 1 adds up every process into one row per site (one representative stack). */
    int merge_processes;
    int depth;               /* stack frames printed per row; 0: all */
    const char *snapshot;    /* REPORT_SNAPSHOT */
    const char *diff_a, *diff_b; /* REPORT_DIFF: snapshot names (diff_b NULL: now) */
    int diff_b_is_now;       /* diff_b names the present state (streams stopped there) */
    const char *title;       /* text: what the snapshot/diff is called ("mark iter10") */
    /* Leak reports: what these suppress is left out, and counted apart (what default
     * suppressions match as memory held by a library until exit). NULL: none. */
    const struct suppressions *supp;
    /* torch-snapshot: the events collected while the recordings were read (torch_snapshot.h) */
    struct torch_trace *torch_trace;
};
void report_options_init(struct report_options *o); /* leaks, by site, all processes */

/* Over every process of the report: a site shared by several processes counts once. */
struct report_summary {
    uint64_t bytes, allocations, sites;            /* leaks (or live, for other sources) */
    uint64_t cache_bytes, cache_allocations, cache_sites;
    uint64_t reset_bytes, reset_allocations;       /* of bytes: ended by a context reset */
    uint64_t suppressed_bytes, suppressed_allocations, suppressed_sites; /* the user's blocks of .supp */
    uint64_t held_bytes, held_allocations, held_sites; /* its default suppressions: held by a library until exit */
    uint64_t before_bytes, before_allocations;   /* leaks: live since before an attach, not judged */
    uint64_t end_bytes, end_allocations;         /* leaks: live when a recording without its
                                                    process's exit ends (model_row.unended), not judged */
    struct model_memory memory;   /* tensor tracking (memory.pools != 0): the rows in PyTorch's
                                     words (live reports; a leak report has no blocks) */
};

/* Each returns 0, or -1 when the query could not be made (unknown snapshot, no memory). */
int report_summarize(struct model *m, const struct report_options *o, struct report_summary *s);
int report_text(FILE *f, struct model *m, const struct report_options *o, struct report_summary *s);
int report_json(FILE *f, struct model *m, const struct report_options *o, struct report_summary *s);
int report_folded(FILE *f, struct model *m, const struct report_options *o);
/* One self-contained HTML page: timeline, flame graph and sites (picture.h). Draws the
 * moments the model kept: call model_keep_moments() before feeding it. A REPORT_DIFF's
 * marks A and B are the page's first comparison. */
int report_html(FILE *f, struct model *m, const struct report_options *o);
/* The report as a gzipped pprof profile (profile.proto): samples per stack with
 * alloc_objects, alloc_space, inuse_objects and inuse_space (inuse only for a diff, as
 * B minus A), labels rank, host, device, allocator and kind (report_pprof.c). */
int report_pprof(FILE *f, struct model *m, const struct report_options *o);
/* Growth suspects (suspects.h): the text of `report --suspects`, and the "suspects"
 * member (key included) that JSON reports carry (report_suspects.c). */
int report_suspects_text(FILE *f, struct model *m, const struct report_options *o);
int report_suspects_json(FILE *f, struct model *m, const struct report_options *o);
/* One suppression block per leak site (valgrind's syntax, culeak-suppressions(5)): the
 * frames from the call site outward that every stack of the site shares, at most
 * o->depth of them (default 12). Sites already suppressed get none. */
int report_suppressions(FILE *f, struct model *m, const struct report_options *o);

/* "stack":[frames...],"library_frames_hidden":N of a stack, as the JSON reports write it
 * (for other JSON writers: the console's export). */
void report_json_stack(FILE *f, struct model *m, int proc, uint64_t stack, int depth);
/* "processes":[...] of the processes of o->proc, as the JSON reports write it. */
void report_json_processes(FILE *f, struct model *m, const struct report_options *o);

/* "4.0 MiB (4194304 bytes)", "100 bytes" */
void report_format_bytes(char *buf, size_t len, uint64_t bytes);
/* "device", "device+pinned" */
void report_format_kinds(char *buf, size_t len, uint32_t kinds);

#endif
