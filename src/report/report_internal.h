/* Shared helpers of the report writers. */
#ifndef CULEAK_REPORT_INTERNAL_H
#define CULEAK_REPORT_INTERNAL_H

#include "common/apis.h"
#include "report.h"

#define REPORT_MAX_FRAMES 512
#define REPORT_HOLDER_CHANGES 10 /* marks at which who holds a row changed, the latest */

int report_query(struct model *m, const struct report_options *o, struct model_table *t);
void summarize_table(const struct model_table *t, struct report_summary *s);
/* Adds one set of PyTorch-words totals (pools, allocated, reserved, other) to another. */
void report_memory_add(struct model_memory *to, const struct model_memory *from);
size_t report_stack(struct model *m, int proc, uint64_t stack, int depth, struct model_frame *out, size_t max,
                    size_t *hidden);
/* A stack in a text report (leaks, diffs, suspects): from the call site outward; each run
 * of looked-through frames after it (the Python interpreter between Python frames, a
 * library calling back) folded into one line, as the console lists stacks. Frame numbers
 * count every frame from the site. */
/* [{"by","blocks","bytes"},...]: who holds a row's blocks, for the JSON and the page */
void report_json_holder_list(FILE *f, const struct model_holders *h, size_t n);
void report_print_stack(FILE *f, struct model *m, int proc, uint64_t stack, int depth);

/* The suppression block (index) of a stack for an allocation of kind, or -1. */
int report_stack_suppression(struct model *m, const struct suppressions *supp, int proc, uint64_t stack,
                             unsigned kind);
/* Fills the suppressed_* fields of s (zeros without suppressions or outside leak
 * reports); with used (room for suppressions_count() entries each), the bytes and
 * allocations each block suppressed. 0, or -1 out of memory. */
int report_count_suppressed(struct model *m, const struct report_options *o, struct report_summary *s,
                            uint64_t *used_bytes, uint64_t *used_count);

/* Several processes in the report and not merged: one section per process. */
int report_split(const struct model *m, const struct report_options *o);
/* Did process proc reach snapshot `name` armed at a mark (or after an event seq)? */
int report_has_snapshot(const struct model *m, const char *name, int proc);
/* "process 101 (rank 1)", with " on HOST" when the report's processes run on several hosts */
void report_process_name(const struct model *m, const struct report_options *o, int proc, char *buf, size_t len);

/* The report's table of one process. */
struct report_part {
    int proc;
    int present;              /* REPORT_SNAPSHOT: the process reached the mark */
    struct model_table t;
    struct report_summary s;
};
struct report_parts {
    struct report_part *p;
    int n;
    struct report_summary total; /* over the parts; a site shared by processes counts once */
};
int report_query_parts(struct model *m, const struct report_options *o, struct report_parts *ps);
void report_parts_free(struct report_parts *ps);

/* The diff of one process between its own marks A and B. */
struct report_diff_part {
    int proc;
    int has_a, has_b;         /* the process reached A / B; d is empty unless both */
    struct model_diff d;
};
struct report_diff_parts {
    struct report_diff_part *p;
    int n;
    int64_t delta_bytes;      /* over the parts with both marks */
    uint64_t new_bytes, new_count;
    int64_t delta_block_bytes; /* pool blocks, apart (they lie inside memory counted above) */
    int missing;              /* processes lacking A or B */
};
/* The diff of process proc (or MODEL_ALL) from snapshot A to B, or to now when B is now. */
int report_diff_query(struct model *m, const struct report_options *o, int proc, struct model_diff *d);
/* -1 when A (or B, unless it is now) is no snapshot, or out of memory */
int report_diff_parts(struct model *m, const struct report_options *o, struct report_diff_parts *dp);
void report_diff_parts_free(struct report_diff_parts *dp);

#endif
