/* Recordings opened with `culeak open`: every event and mark of every file, merged by
 * wall-clock time, replayed into the tracker up to a chosen point. */
#ifndef CULEAK_CONSOLE_TIMELINE_H
#define CULEAK_CONSOLE_TIMELINE_H

#include "decode.h"
#include "track.h"

#include <stddef.h>
#include <stdint.h>

struct tl_entry {
    double t;               /* seconds since the earliest process started */
    int proc;
    int is_mark;
    uint32_t label;         /* marks: index in labels */
    struct culeak_event e;
};

struct timeline {
    struct tl_entry *v;
    size_t n, cap;
    char **labels;
    size_t nlabels, caplabels;
    char **paths;           /* the files, for `save` */
    int npaths;
    size_t pos;             /* entries applied */
    size_t peak_pos, oom_pos; /* oom_pos == n: none */
    uint64_t peak_bytes;
};

/* Loads files into t's processes and the timeline; positions at the end. 0, or -1. */
int timeline_load(struct timeline *tl, struct tracker *t, char **files, int nfiles, char *err, size_t errlen);
/* Moves to position pos (entries applied), replaying from the start when going back. */
void timeline_seek(struct timeline *tl, struct tracker *t, size_t pos);
/* Resolves "peak", "oom", "end", "start", a mark label, or a time ("12.5s") to a
 * position. -1 (err set) when nothing matches. */
long timeline_find(const struct timeline *tl, const char *what, char *err, size_t errlen);
void timeline_describe(const struct timeline *tl, char *buf, size_t len);
void timeline_free(struct timeline *tl);

#endif
