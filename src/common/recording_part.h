/* Whether a recording file is a later part of a rolled recording (record --roll): the
 * MAGIC, its process's HELLO again, then a ROLL record naming the part before it. Such a
 * part continues that stream; a reader reads it after the part before it, from
 * header_len on (culeak-stream(5), Rolled recordings). */
#ifndef CULEAK_RECORDING_PART_H
#define CULEAK_RECORDING_PART_H

#include <stddef.h>
#include <stdint.h>

struct culeak_part_head {
    uint64_t pid, realtime_ns, monotonic_ns; /* the process (its HELLO) */
    char host[256];
    uint64_t part, offset;                   /* its number (2 on) and the stream's bytes before it */
    char previous[256];                      /* the part before it: its file name */
    size_t header_len;                       /* the bytes of MAGIC, HELLO and ROLL */
};

/* 1: path is a later part (h filled); 0: it is not (or it is no recording: the reader
 * that opens it says why). */
int culeak_part_head(const char *path, struct culeak_part_head *h);

#endif
