/* The rings of the job's processes, read by the console (culeak-stream(5), The ring): one
 * ring_reader per traced process, its stream taken from the ring it shares with the
 * console and its commands put in the ring's header. Nothing here waits on a process. */
#ifndef CULEAK_CONSOLE_RING_READER_H
#define CULEAK_CONSOLE_RING_READER_H

#include "model/model.h"
#include "launch/ring_hub.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

struct ring_reader {
    struct culeak_ring *ring; /* the process's ring (the hub's); NULL once it is done */
    size_t ring_i;            /* its slot in the hub, until ring_reader_done gives it back */
    long pid;                 /* its writer, as the hub knows it (before any HELLO) */
    int proc;               /* model process index, -1 before HELLO */
    struct model_stream *ms; /* every byte read goes into the model through it */
    int tee_fd;             /* raw bytes, for `save` */
    char tee_path[PATH_MAX];
    uint64_t tee_bytes;     /* in the copy so far */
    char tee_lost[160];     /* why the copy stopped before the stream's end; "" while whole */
    int tee_lost_said;      /* the console said so in the output pane */
    uint64_t lost_said;     /* events lost (LOST records) the console has said so far */
    struct ring_readers *rings;
    void *owner;
    uint8_t *outq;          /* commands that did not fit the ring's command area yet */
    size_t outq_len, outq_cap;
};

struct ring_readers {
    struct culeak_hub *hub; /* the rings and their hand-over socket */
    char path[1100];        /* the hand-over socket */
    char session[1100];     /* per-session directory (stderr.log): the hub's, private */
    char copies[1100];      /* per-session directory of the stream copies, on disk:
                             * $XDG_CACHE_HOME/culeak/session-PID (~/.cache) */
    unsigned nreaders_total;
    uint64_t copy_total;    /* bytes in every copy of this session */
    uint64_t copy_limit;    /* CULEAK_COPY_LIMIT (default 4 GiB): copies stop there */
};

/* The hub (its private directory, made afresh: mkdtemp) and the copies' directory, after
 * removing those of consoles of this user that died (killed before they could clean
 * up). 0, or -1 with err. */
int ring_readers_open(struct ring_readers *s, char *err, size_t errlen);
/* In the job's process before exec: the descriptor limit ring_readers_open raised for the
 * console goes back to what it was. */
void ring_readers_job_limits(void);
/* Takes the hand-overs that came (never waiting), and makes the next ring not yet taken
 * into a reader with a stream into m; NULL when there is none. */
struct ring_reader *ring_readers_accept(struct ring_readers *s, struct model *m);
/* Reads what the ring holds: >0 bytes fed, -2 nothing now, 0 when the stream ended (the
 * writer ended or is gone, and everything it committed was read). Bytes go to the copy
 * and the model (corrupt stream: -3, model_stream_error says why). A copy that cannot be
 * written, or would pass the session's limit, stops: tee_lost says why, and `save`
 * reports it. end_check: also look whether the writer still lives (a system call). */
long ring_reader_pump(struct ring_reader *c, uint8_t *buf, size_t cap, int end_check);
/* Sends a command (wire.h), never waiting: HOLD_NEW and HOLD_ALL are header words;
 * WATCH, UNWATCH and RELEASE go into the ring's command area, or are queued while it is
 * full and put there by ring_reader_flush_out. 0, or -1 when the reader is done or its
 * queue passed RING_READER_OUTQ_MAX (a process that takes no commands: this one is dropped). */
int ring_reader_send(struct ring_reader *c, uint8_t type, const uint64_t *vals, size_t nvals);
#define RING_READER_OUTQ_MAX (1u << 20)
/* Puts what is queued in the command area, as much as fits now, and wakes the process's
 * held threads. -1 when the reader is done. */
int ring_reader_flush_out(struct ring_reader *c);
/* The process is let go: its held threads return and its tracing stops (the console
 * reads it no more). */
void ring_reader_let_go(struct ring_reader *c);
/* The stream is done (read to its end, or dropped): the ring goes back to the hub, which
 * gives its slot to a later process. */
void ring_reader_done(struct ring_reader *c);
/* The next process the hub refused (at 4096 read at once, or a ring that could not be
 * received or mapped): 1 with its pid and why[len], or 0. */
int ring_readers_refusal(struct ring_readers *s, long *pid, char *why, size_t len);
void ring_reader_close(struct ring_reader *c); /* frees; the tee file stays */
/* Lets every process go, removes the hand-over socket and the session directories (with
 * the copies). */
void ring_readers_close(struct ring_readers *s);

#endif
