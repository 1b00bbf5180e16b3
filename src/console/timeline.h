/* Recordings opened with `culeak open`: loaded into the model, whole, and the positions
 * `goto` moves to, each a source of that model: the end (now), the peak and the first
 * failed allocation; marks (a snapshot named by the label, as live --snapshot-at-marks
 * names it) and the start ("@start") armed before loading; a time ("@12.5s"), the state
 * of the recordings loaded up to then (wall clock, from the earliest process's start)
 * taken over as a snapshot. The model is never replaced, so snapshots, ids and
 * breakpoints outlive every goto. */
#ifndef CULEAK_CONSOLE_TIMELINE_H
#define CULEAK_CONSOLE_TIMELINE_H

#include "model/model.h"
#include "common/strpool.h"
#include "ui.h"

#include <stddef.h>
#include <stdint.h>

/* Mark labels armed as snapshots while loading; each keeps a state per process. */
#define TIMELINE_ARMED_MARKS 256

struct timeline {
    char **paths;           /* the files, for `save` and reloading */
    int npaths;
    const char **labels;    /* distinct mark labels, in order of appearance (in names) */
    size_t nlabels, labels_cap;
    struct strpool names;
    uint64_t nevents;       /* events in the recordings */
    /* Where the events' numbering ends: the highest event or mark number (seq, as info
     * marks numbers them) of each recording, added up; positions are numbered so too. */
    uint64_t last_seq;
    uint64_t t0_real;       /* earliest process start (wall ns) */
    uint64_t t_end_real;    /* the latest record (wall ns) */
    char where[160];        /* the position, in words */
    char damage[400];       /* the first recording found corrupt: read up to the damage */
    char warning[400];      /* the first recording cut off, or of a process read before */
};

/* Loads files into m (marks and the start armed as snapshots "LABEL", "@start");
 * positions at the end. A corrupt recording is read up to the damage, as culeak report
 * does (damage says where). 0, or -1 with err when nothing could be read. */
int timeline_load(struct timeline *tl, struct model *m, char **files, int nfiles, char *err, size_t errlen);
/* Moves to "peak", "oom", "end", "start", a mark label (or a snapshot's name) or a time
 * ("12.5s", not past the end): sets src. *m stays. 0, or -1 (err set). */
int timeline_goto(struct timeline *tl, struct model **m, const char *what, struct view_source *src, char *err,
                  size_t errlen);
/* Is name a mark label of the recordings (not an all-digit one, an event number)? */
int timeline_has_mark(const struct timeline *tl, const char *name);
/* Makes sure m has snapshot `name`: one already there, or, for a mark the loading left
 * unarmed (past the first TIMELINE_ARMED_MARKS labels), the state at that mark rebuilt
 * from the recordings. 0, or -1 (err set). */
int timeline_snapshot(struct timeline *tl, struct model *m, const char *name, char *err, size_t errlen);
void timeline_free(struct timeline *tl);

#endif
