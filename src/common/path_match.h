/* Whether a recording's path is one culeak's output pattern gives a process: the reader
 * writes a ring's recording at the path its writer names only then, so a process of the
 * same user that hands over a ring naming a file of its choice gets no file written. */
#ifndef CULEAK_PATH_MATCH_H
#define CULEAK_PATH_MATCH_H

/* 1 when path is tmpl expanded for process pid (outpath.h: %p that pid, %h and %r any
 * name without a '/', %% a percent sign), alone or with ".PID" after it (the name of a
 * forked child, or of a process after the first of a shared name); else 0. */
int culeak_path_matches(const char *tmpl, long pid, const char *path);

#endif
