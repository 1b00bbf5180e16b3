/* PyTorch's memory snapshot (the dict torch.cuda.memory._snapshot() returns, pickled):
 * report --format torch-snapshot. The snapshot's trace is the events of a window, so
 * they are collected while the recordings are read (torch_trace_attach, before feeding
 * the model); the writer then adds the segments live at the end and their blocks. One
 * process is written: the first one that allocates. The end is --to's mark, or the
 * process's last allocation: the frees of its exit are left out. */
#ifndef CULEAK_REPORT_TORCH_SNAPSHOT_H
#define CULEAK_REPORT_TORCH_SNAPSHOT_H

#include "model/live_table.h"
#include "model/model.h"
#include "report/report.h"

#include <stdint.h>
#include <stdio.h>

/* The default window: this many iterations (the intervals between the marks of the most
 * frequent label pattern), from the mark before them, with what follows the last. */
#define TORCH_TRACE_ITERATIONS 10
#define TORCH_TRACE_RING (TORCH_TRACE_ITERATIONS + 1)

struct torch_trace_event {
    uint64_t seq, t_ns, addr, size, stack;
    uint16_t api;
    uint8_t op, kind;
    int8_t device;
    uint8_t failed;
};

struct torch_trace_pattern {
    char words[96];   /* the label with its numbers as '#' */
    uint64_t count;
    size_t at[TORCH_TRACE_RING]; /* event index at its last marks (a ring) */
    const char *label[TORCH_TRACE_RING];
};

struct torch_trace {
    struct model *m;
    const char *from, *to;  /* --from and --to marks; NULL: the default window */
    int proc;               /* the process written; -1 until one allocates */
    struct torch_trace_event *ev;
    size_t n, cap;
    /* Events before the window are dropped when this many are kept (the default window's
     * start as the marks say so far: a run of millions of events keeps about its window) */
    size_t compact_at;
    uint64_t dropped;
    int oom;                /* out of memory: events dropped past TORCH_TRACE_MAX */
    size_t from_at;         /* --from: the event index of its mark; SIZE_MAX: not seen */
    int to_seen;
    struct torch_trace_pattern pat[16];
    size_t npat;
    struct live_table live; /* the process's memory live now (its own, not the model's) */
    uint64_t live_bytes, peak_bytes;
    size_t peak_at, oom_at; /* event index after the peak; of the first failed allocation */
    struct {
        const char *label; /* NULL: marks are copied here */
        uint64_t t_ns, flags;
        int device;
    } *marks;
    size_t nmarks, capmarks;
    /* what the writer wrote, for the message */
    uint64_t bytes, entries, segments, blocks;
    const char *window_from; /* the mark the window starts at; NULL: the recording's start */
    size_t exit_left_out;    /* frees of the process's exit after its last allocation */
};

/* Collects the events of m's processes from now on (m's observer is taken). NULL when
 * out of memory. */
struct torch_trace *torch_trace_attach(struct model *m, const char *from, const char *to);
void torch_trace_free(struct torch_trace *t);

/* The index of the window's first event: --from's mark, or the mark TORCH_TRACE_ITERATIONS
 * iterations before the last of the most frequent label pattern, reaching back to the
 * last time at the peak and to the first failed allocation (sets window_from). */
size_t torch_trace_window_start(struct torch_trace *t);

/* The snapshot of t (o->torch_trace) as a pickle: 0, or -1 (nothing to write). */
int report_torch_snapshot(FILE *f, struct model *m, const struct report_options *o);

#endif
