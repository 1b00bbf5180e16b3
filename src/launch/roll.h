/* A recording rolled into parts (record --roll): at a boundary of time or size the stream
 * goes on in a new file. The parts are one stream cut between records, not recordings of
 * their own: a later part starts with the MAGIC, the process's HELLO again (so that the
 * file says whose it is) and a ROLL record naming the part before it; the part before
 * ends with a ROLL record naming it. A reader reads them in order as one stream
 * (culeak-stream(5), Rolled recordings). */
#ifndef CULEAK_ROLL_H
#define CULEAK_ROLL_H

#include <stddef.h>
#include <stdint.h>

struct culeak_roll_opts {
    uint64_t seconds; /* a part lasts this long at most; 0: any time */
    uint64_t bytes;   /* a part ends once it holds this many bytes; 0: any size */
};

struct culeak_roller {
    struct culeak_roll_opts opt;
    char *tmpl;         /* the parts' name: %t and %n to expand (.PID added where the first took it) */
    char *name;         /* the current part's file */
    unsigned part;      /* the current part's number, from 1 */
    uint64_t offset;    /* the stream's bytes written (after MAGIC; no part's header) */
    uint64_t part_bytes;
    long long started;  /* when the current part began (seconds since the epoch) */
    uint8_t *hello;     /* the stream's HELLO record, whole, repeated at each part's start */
    size_t hello_len;
};

/* The first part of process pid's recording at path (culeak_create_recording: shared,
 * the first process takes the name, another one adds .PID), made at now; its MAGIC
 * written. The name used goes to made[cap]. The descriptor, or -1 with errno. */
int culeak_roller_start(struct culeak_roller *r, const struct culeak_roll_opts *opt, const char *path, int shared,
                        long pid, long long now, char *made, size_t cap);
/* n bytes of the stream (whole records) were written to the current part. */
void culeak_roller_wrote(struct culeak_roller *r, const uint8_t *p, size_t n);
/* 1 when the current part is due to end before more is written. */
int culeak_roller_due(const struct culeak_roller *r, long long now);
/* Ends the part written to *fd and starts the next one, made at now: *fd is then the new
 * part's descriptor. 0; or -1 with errno, *fd and the part unchanged (tried again later:
 * the name is taken, as a second part in the same second under a %t-only name). */
int culeak_roller_next(struct culeak_roller *r, int *fd, long long now);
void culeak_roller_free(struct culeak_roller *r);

#endif
