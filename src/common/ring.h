/* The ring a traced process writes its stream into, shared with its reader (a memfd mapped
 * MAP_SHARED by both): culeak-stream(5), "The ring", is its normative description.
 *
 * One writer at a time (the shim's stream lock) and one reader. The writer reserves room
 * at head, writes a record there and commits it with a release store of commit; the
 * reader takes the bytes from tail to commit and stores tail. No system call on either
 * path: only a writer that finds the ring full waits (FUTEX_WAIT, bounded), and then
 * drops what it was writing, counted in the header's lost words. */
#ifndef CULEAK_RING_H
#define CULEAK_RING_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define CULEAK_RING_MAGIC "CULEAKR1"
#define CULEAK_RING_HEADER 8192u
#define CULEAK_RING_PATH_MAX 4096u
#define CULEAK_REC_PAD 9   /* one byte: the rest of the data area is filler */
#define CULEAK_RING_CMD 2048u /* the console's commands: a ring of this many bytes */

/* The header: each word the writer or reader stores on a line of its own. */
struct culeak_ring_header {
    char magic[8];
    uint64_t size;               /* of the data area: a power of two */
    uint8_t pad0[48];
    uint64_t head;               /* writer: bytes reserved since the start */
    uint8_t pad1[56];
    uint64_t commit;             /* writer, release: bytes whose records are complete */
    uint8_t pad2[56];
    uint64_t tail;               /* reader, release: bytes taken */
    uint32_t tail_gen;           /* reader: bumped after each store of tail (futex word) */
    uint32_t waiting;            /* writer: 1 while it waits on tail_gen */
    uint8_t pad3[48];
    uint64_t lost, lost_first, lost_last; /* writer: events dropped, their seqs */
    uint64_t lost_told;          /* writer: how many of them a LOST record said */
    uint64_t pad_at;             /* writer: where its last PAD is (~0: none yet) */
    uint8_t pad4[24];
    uint32_t pid, ended;         /* writer: its process, and 1 once it ended */
    uint32_t path_shared;        /* writer: 1 when path is the job's shared name (the first
                                  * process takes it, the others add .PID) */
    uint8_t pad5[52];
    /* The console's commands (culeak-stream(5), The ring, Commands): words the reader
     * stores and the writer loads, and a small ring of command records the reader alone
     * writes (from cmd_tail to cmd_head, position mod CULEAK_RING_CMD). */
    uint32_t hold_new, hold_all; /* reader: 0 or 1 */
    uint32_t released;           /* reader: bumped after RELEASE records (futex word) */
    uint32_t reader_pid;         /* the reader's process: a held thread goes when it is gone */
    uint32_t reader_gone;        /* reader: 1 once it reads no more (quit, detach) */
    uint32_t console;            /* reader: 1 when it is a console (it answers HELLO) */
    uint32_t answered;           /* reader: 1 once it answered HELLO (hold_new is its own) */
    uint32_t beat;               /* reader: bumped each time it looks at the ring */
    uint8_t pad6[32];
    uint64_t cmd_head;           /* reader, release: command bytes written */
    uint8_t pad7[56];
    uint64_t cmd_tail;           /* writer, release: command bytes taken */
    uint8_t pad8[56];
    uint8_t cmd[CULEAK_RING_CMD];
    uint8_t pad9[3520 - CULEAK_RING_CMD];
    char path[CULEAK_RING_PATH_MAX]; /* writer, before its first commit: the recording's
                                      * path for a reader that writes one ("": none) */
};
_Static_assert(sizeof(struct culeak_ring_header) == CULEAK_RING_HEADER, "the header is 8192 bytes");

struct culeak_ring {
    struct culeak_ring_header *h;
    uint8_t *data;
    uint64_t size;
};

/* A new ring of data_size bytes (a power of two, at least 4096): its memfd (close-on-
 * exec, its size sealed) in *fd, mapped into r; fd NULL: anonymous memory of this process alone. 0, or -1
 * with errno. */
int culeak_ring_create(size_t data_size, int *fd, struct culeak_ring *r);
/* Maps the ring of fd (a reader, or a process given its ring): 0, or -1 with errno
 * (EINVAL: not a ring, or one whose file is shorter than its header says or may shrink:
 * culeak_ring_create's size is sealed). fd may be closed after. */
int culeak_ring_map(int fd, struct culeak_ring *r);
/* 1 when fd is a ring culeak_ring_create made (a memfd of that name with the magic). */
int culeak_ring_is_ring(int fd);
/* Hands ring descriptor fd to the reader at the other end of Unix socket sock: one byte
 * with fd as SCM_RIGHTS (MSG_NOSIGNAL: a reader gone is EPIPE, not SIGPIPE; EINTR tried
 * again). 0 when sent, -1 with errno. */
int culeak_ring_send_fd(int sock, int fd);
/* The writer claims a ring it was given: 0 when no process claimed it before (its pid
 * is stored), -1 otherwise. */
int culeak_ring_claim(struct culeak_ring *r, uint32_t pid);
void culeak_ring_unmap(struct culeak_ring *r);

/* ---- the writer ---- */
/* Room for len contiguous bytes at head (a PAD record fills the area's end when they
 * would not fit before it), waiting for the reader at most wait_ms when the ring is
 * full; NULL when there is none: the caller then drops what it was writing
 * (culeak_ring_drop). */
uint8_t *culeak_ring_reserve(struct culeak_ring *r, size_t len, int wait_ms);
/* culeak_ring_reserve's common case, inline: room at head with no wait and no PAD;
 * NULL sends the caller to culeak_ring_reserve. */
static inline uint8_t *culeak_ring_reserve_fast(struct culeak_ring *r, size_t len)
{
    uint64_t head = r->h->head, off = head & (r->size - 1);
    if (len >= r->size - off || head + len - __atomic_load_n(&r->h->tail, __ATOMIC_ACQUIRE) > r->size)
        return NULL;
    return r->data + off;
}
/* The clock (CLOCK_MONOTONIC) and the sleep (FUTEX_WAIT on word while it holds val, at
 * most ns) of culeak_ring_reserve's bounded wait: a test puts fakes here, and pins the
 * wait in its unit without timing anything. */
extern int (*culeak_ring_clock)(clockid_t, struct timespec *);
extern void (*culeak_ring_sleep)(uint32_t *word, uint32_t val, long ns);
/* The len bytes written at the last reservation are complete. */
void culeak_ring_commit(struct culeak_ring *r, size_t len);
/* An event (sequence number seq) was dropped for want of room. */
void culeak_ring_drop(struct culeak_ring *r, uint64_t seq);
/* Events dropped that no LOST record has said yet: their count, first and last seq. */
uint64_t culeak_ring_untold(const struct culeak_ring *r, uint64_t *first, uint64_t *last);
/* A LOST record was written for them. */
void culeak_ring_told(struct culeak_ring *r);
/* The writer's process ended (its last record is committed). */
void culeak_ring_end(struct culeak_ring *r);

/* Takes the console's command records that came since the last call (whole records,
 * as the reader wrote them): up to cap bytes into buf, the count returned; 0 when there
 * is nothing new (one acquire load, no system call). */
size_t culeak_ring_cmd_take(struct culeak_ring *r, uint8_t *buf, size_t cap);
/* 1 while the ring's reader reads: it has not said it is gone (reader_gone) and its
 * process lives (a reader killed with SIGKILL says nothing). */
int culeak_ring_reader_alive(const struct culeak_ring *r);
/* Waits at most ms milliseconds for the reader to bump released from gen (FUTEX_WAIT). */
void culeak_ring_wait_released(struct culeak_ring *r, uint32_t gen, int ms);
/* Bumps released and wakes every thread that waits on it. */
void culeak_ring_wake_released(struct culeak_ring *r);

/* ---- the reader ---- */
/* Puts a command record (len bytes, whole) in the command ring: 0, or -1 when it does
 * not fit now (the writer has not taken what is there: the caller keeps it for later,
 * it never waits). */
int culeak_ring_cmd_put(struct culeak_ring *r, const uint8_t *rec, size_t len);
/* The committed bytes from tail that lie together (PAD records skipped): *p and the
 * count; 0 when there are none. */
size_t culeak_ring_peek(struct culeak_ring *r, const uint8_t **p);
/* n of them taken: tail moves on, and a waiting writer is woken. */
void culeak_ring_consume(struct culeak_ring *r, size_t n);

#endif
