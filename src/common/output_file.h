/* The files culeak writes for the user (reports, logs, saved recordings, exports, saved
 * breakpoints): written into a fresh temporary file beside the target (O_EXCL |
 * O_NOFOLLOW) and renamed over it once complete. A symbolic link planted at the target
 * (in /tmp, by another user) is replaced, never followed, so no file of anyone's choice
 * is overwritten; a reader never sees half a file; a failed write leaves what was there.
 * A target that is a terminal, pipe or other device (/dev/stdout, a FIFO) is written in
 * place: there is no file to replace. */
#ifndef CULEAK_OUTPUT_FILE_H
#define CULEAK_OUTPUT_FILE_H

#include <stdio.h>

struct culeak_output {
    FILE *f;
    int in_place; /* a device or pipe: written as it is */
    char path[4096], tmp[4200];
};

/* Opens the output for path: 0 with o->f ready to write, or -1 with errno. The file is
 * made 0666 less the umask, as fopen makes one. */
int culeak_output_open(struct culeak_output *o, const char *path);
/* Finishes the output: flushed, closed and renamed over the target; failed (or a write
 * error of o->f): dropped, the target left as it was. 0, or -1 with errno (EIO for a
 * write error without one). */
int culeak_output_close(struct culeak_output *o, int failed);

#endif
