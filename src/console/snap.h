/* Snapshots of every stack's live counters, and diffs between them (no curses). */
#ifndef CULEAK_CONSOLE_SNAP_H
#define CULEAK_CONSOLE_SNAP_H

#include "track.h"

struct snap_proc {
    uint64_t *bytes, *count; /* by stackstat index */
    size_t n;
};

struct snapshot {
    char name[64];
    double t;              /* seconds since the session began */
    uint64_t live_bytes, live_count;
    struct snap_proc *procs;
    size_t nprocs;
};

struct snap_list {
    struct snapshot *v;
    size_t n, cap;
    unsigned auto_seq;
};

/* Takes a snapshot; name NULL or empty picks "sN". Returns NULL (err set) when the name
 * is taken or memory runs out. Also makes it the base of the table's change column. */
struct snapshot *snap_take(struct snap_list *l, struct tracker *t, const char *name, double now, char *err,
                           size_t errlen);
struct snapshot *snap_find(struct snap_list *l, const char *name);
void snap_free(struct snap_list *l);
/* A stack's values in a snapshot (0 when it did not exist yet). */
uint64_t snap_bytes(const struct snapshot *s, int proc, size_t stat);
uint64_t snap_count(const struct snapshot *s, int proc, size_t stat);

#endif
