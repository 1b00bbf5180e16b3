/* Recordings opened with `culeak open`: loaded into the model, and the positions `goto`
 * moves to. The end, the peak and the first failed allocation are sources of the model;
 * marks and the start are snapshots armed before loading; a time reloads the recordings
 * up to that moment (wall clock, from the earliest process's start). */
#ifndef CULEAK_CONSOLE_TIMELINE_H
#define CULEAK_CONSOLE_TIMELINE_H

#include "model.h"
#include "ui.h"

#include <stddef.h>
#include <stdint.h>

struct timeline {
    char **paths;           /* the files, for `save` and reloading */
    int npaths;
    char **labels;          /* distinct mark labels, in order of appearance */
    size_t nlabels;
    uint64_t nevents;       /* events in the recordings */
    uint64_t t0_real;       /* earliest process start (wall ns) */
    int cut;                /* the model holds the recordings up to a time only */
    char where[160];        /* the position, in words */
    char damage[400];       /* the first recording found corrupt: read up to the damage */
};

/* Loads files into m (marks and the start armed as snapshots "@LABEL", "@start");
 * positions at the end. A corrupt recording is read up to the damage, as culeak report
 * does (damage says where). 0, or -1 with err when nothing could be read. */
int timeline_load(struct timeline *tl, struct model *m, char **files, int nfiles, char *err, size_t errlen);
/* Moves to "peak", "oom", "end", "start", a mark label or a time ("12.5s"): sets src,
 * and for a time (or back from one) replaces *m with a reloaded model. 0, or -1 (err set). */
int timeline_goto(struct timeline *tl, struct model **m, const char *what, struct view_source *src, char *err,
                  size_t errlen);
void timeline_free(struct timeline *tl);

#endif
