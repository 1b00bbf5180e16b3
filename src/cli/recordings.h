/* The recordings of one job on disk: without %p in -o FILE, the first process writes
 * FILE and each other one FILE.PID (record, and report's note on files it was not given). */
#ifndef CULEAK_CLI_RECORDINGS_H
#define CULEAK_CLI_RECORDINGS_H

#include <stddef.h>
#include <time.h>

struct recording_list {
    char **paths;   /* sorted: FILE first, then FILE.PID by pid */
    size_t n;
};

/* Does path begin with a recording's magic? */
int recording_is_one(const char *path);
/* The recordings a job given -o tmpl wrote: tmpl and its tmpl.PID siblings, or, when tmpl
 * has %p, %h or %r, the files it expands to that were written at `since` or later. 0, or
 * -1 when out of memory (l then empty). */
int recordings_of_job(const char *tmpl, time_t since, struct recording_list *l);
/* tmpl.PID files next to tmpl (not tmpl itself). */
int recordings_siblings(const char *file, struct recording_list *l);
void recordings_free(struct recording_list *l);

#endif
