/* The reader of a launched job's rings (collect.h): the rings come from the hub
 * (ring_hub.h), shared with the console, and are read every poll: a writer never wakes
 * the reader, it only waits (bounded) when its ring is full. */
#include "collect.h"
#include "common/outpath.h"
#include "common/path_match.h"
#include "common/text_escape.h"
#include "ring_hub.h"
#include "common/wire.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An idle ring's writer is looked for in /proc at one poll in DEAD_LOOK (a system call
 * per ring: thousands of processes at once would make every poll that many); the end
 * its writer marked in the ring is seen at once. */
#define DEAD_LOOK 64

struct ring_out {
    int active; /* the hub's ring of this slot is read here */
    int out;    /* the recording; -1: not made yet */
    int failed; /* it could not be made: what the ring holds is dropped */
};

struct culeak_collector {
    struct culeak_hub *hub;
    char *attach_out; /* attached: the recording of rings that name none */
    char *pattern;    /* launched: the output pattern the job was given (NULL: none) */
    struct ring_out *outs; /* one per slot of the hub, by its index */
    size_t n;
    long *pids; /* of every ring taken (culeak_collector_has) */
    size_t npids, cappids;
    unsigned long unrecorded; /* processes refused, or whose recording could not be made */
    unsigned long refused_seen; /* of the hub's refusals, those counted in unrecorded */
    unsigned polls;
    struct culeak_collect_tap tap; /* bytes NULL: none */
};

struct culeak_collector *culeak_collector_new(void)
{
    struct culeak_collector *c = calloc(1, sizeof *c);
    char err[300];
    if (c && !(c->hub = culeak_hub_new(0, err, sizeof err))) {
        fprintf(stderr, "culeak: %s\n", err);
        free(c);
        return NULL;
    }
    return c;
}

struct culeak_collector *culeak_collector_attach(const char *out)
{
    struct culeak_collector *c = culeak_collector_new();
    if (!c)
        return NULL;
    if (!(c->attach_out = strdup(out))) {
        culeak_collector_free(c);
        return NULL;
    }
    culeak_hub_started(c->hub); /* no program gets the first ring */
    return c;
}

int culeak_collector_expect(struct culeak_collector *c, const char *pattern)
{
    free(c->pattern);
    c->pattern = pattern ? strdup(pattern) : NULL;
    return pattern && !c->pattern ? -1 : 0;
}

const char *culeak_collector_socket(const struct culeak_collector *c) { return culeak_hub_socket(c->hub); }

int culeak_collector_has(const struct culeak_collector *c, long pid)
{
    for (size_t i = 0; i < c->npids; i++)
        if (c->pids[i] == pid)
            return 1;
    return 0;
}

unsigned long culeak_collector_unrecorded(const struct culeak_collector *c) { return c ? c->unrecorded : 0; }

int culeak_collector_child_env(struct culeak_collector *c) { return culeak_hub_child_env(c->hub); }

void culeak_collector_started(struct culeak_collector *c) { culeak_hub_started(c->hub); }

/* An entry for each slot the hub has; 0, or -1 (rings past it wait for the next poll). */
static int grow_outs(struct culeak_collector *c)
{
    size_t n = culeak_hub_count(c->hub);
    if (n <= c->n)
        return 0;
    struct ring_out *p = realloc(c->outs, n * sizeof *p);
    if (!p)
        return -1;
    for (size_t i = c->n; i < n; i++)
        p[i] = (struct ring_out){0, -1, 0};
    c->outs = p;
    c->n = n;
    return 0;
}

static void remember_pid(struct culeak_collector *c, long pid)
{
    if (c->npids == c->cappids) {
        size_t cap = c->cappids ? c->cappids * 2 : 16;
        long *p = realloc(c->pids, cap * sizeof *p);
        if (!p)
            return;
        c->pids = p;
        c->cappids = cap;
    }
    c->pids[c->npids++] = pid;
}

/* The rings that came, each read from its slot; the processes refused, said. */
static void take_new(struct culeak_collector *c)
{
    long i, pid;
    char why[160];
    while (culeak_hub_refusal(c->hub, &pid, why, sizeof why))
        fprintf(stderr, "culeak: process %ld is not traced: %s\n", pid, why);
    c->unrecorded += culeak_hub_refused(c->hub) - c->refused_seen;
    c->refused_seen = culeak_hub_refused(c->hub);
    while (grow_outs(c) == 0 && (i = culeak_hub_take(c->hub)) >= 0) {
        c->outs[i] = (struct ring_out){1, -1, 0};
        remember_pid(c, culeak_hub_pid(c->hub, (size_t)i));
    }
}

/* The recording of ring i, at the path its writer put in the header. */
static void open_out(struct culeak_collector *c, size_t i)
{
    struct ring_out *o = &c->outs[i];
    struct culeak_ring *r = culeak_hub_ring(c->hub, i);
    long pid = culeak_hub_pid(c->hub, i);
    char path[CULEAK_RING_PATH_MAX], made[CULEAK_RING_PATH_MAX + 32];
    memcpy(path, r->h->path, sizeof path);
    path[sizeof path - 1] = 0;
    int shared = r->h->path_shared != 0;
    o->failed = 1;
    if (path[0] == '/' && !(c->pattern && culeak_path_matches(c->pattern, pid, path))) {
        /* written only where culeak said: a ring's header is its writer's to fill */
        char shown[2 * CULEAK_RING_PATH_MAX];
        fprintf(stderr, "culeak: process %ld names a recording culeak did not give it (%s): it is not recorded\n",
                pid, text_escape(shown, sizeof shown, path));
        c->unrecorded++;
        return;
    }
    if (path[0] != '/' && c->attach_out) { /* an attached process names no recording */
        snprintf(path, sizeof path, "%s", c->attach_out);
        shared = 1;
    }
    if (path[0] != '/')
        return; /* no recording asked for */
    o->out = culeak_create_recording(path, shared, pid, made, sizeof made);
    if (o->out < 0)
        fprintf(stderr, "culeak: cannot create %s (%s): process %ld is not recorded\n", made, strerror(errno), pid);
    o->failed = o->out < 0;
    c->unrecorded += o->failed;
    /* the stream's MAGIC is no record: the ring starts at HELLO */
    if (o->out >= 0 && write(o->out, CULEAK_MAGIC, CULEAK_MAGIC_LEN) != CULEAK_MAGIC_LEN) {
        fprintf(stderr, "culeak: cannot write %s (%s): process %ld is not recorded\n", made, strerror(errno), pid);
        close(o->out);
        o->out = -1;
        o->failed = 1;
        c->unrecorded++;
    }
}

void culeak_collector_tap(struct culeak_collector *c, const struct culeak_collect_tap *tap)
{
    c->tap = tap ? *tap : (struct culeak_collect_tap){0};
}

static void write_full(struct culeak_collector *c, size_t i, const uint8_t *p, size_t n)
{
    struct ring_out *o = &c->outs[i];
    if (c->tap.bytes && n)
        c->tap.bytes(c->tap.ctx, i, p, n);
    while (n > 0 && o->out >= 0) {
        ssize_t k = write(o->out, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            fprintf(stderr, "culeak: cannot write the recording of process %ld (%s): it is cut off here\n",
                    culeak_hub_pid(c->hub, i), k < 0 ? strerror(errno) : "short write");
            close(o->out);
            o->out = -1;
            return;
        }
        p += k;
        n -= (size_t)k;
    }
}

/* What ring i holds, written out: one pass, the bytes up to the ring's end and those
 * after it went round, not what the process commits meanwhile. Reading on behind a writer
 * that keeps writing would take each cache line the moment it is written, from the other
 * processor, and write a few kilobytes per system call: under a job that allocates
 * without pause, 1.7 times the CPU of the whole run; the next poll comes within
 * POLL_BUSY_MS, and the ring holds several of them. */
static size_t drain(struct culeak_collector *c, size_t i)
{
    struct culeak_ring *r = culeak_hub_ring(c->hub, i);
    const uint8_t *p;
    size_t n, total = 0;
    for (int part = 0; part < 2 && (n = culeak_ring_peek(r, &p)) > 0; part++) {
        if (c->outs[i].out < 0 && !c->outs[i].failed)
            open_out(c, i);
        write_full(c, i, p, n);
        culeak_ring_consume(r, n);
        total += n;
    }
    return total;
}

/* Events the writer dropped after its last record (it ended while its reader was
 * stopped): the LOST record it could not write, at the recording's end. */
static void say_last_gap(struct culeak_collector *c, size_t i);

/* Ring i read to its end: the recording closed, the slot given back for a later process
 * (a job of any number of processes over its life holds only those that run). */
static void finish(struct culeak_collector *c, size_t i)
{
    say_last_gap(c, i);
    if (c->outs[i].out >= 0)
        close(c->outs[i].out);
    if (c->tap.ended)
        c->tap.ended(c->tap.ctx, i);
    c->outs[i] = (struct ring_out){0, -1, 0};
    culeak_hub_release(c->hub, i);
}

static int writer_gone(struct culeak_collector *c, size_t i)
{
    if (__atomic_load_n(&culeak_hub_ring(c->hub, i)->h->ended, __ATOMIC_ACQUIRE))
        return 1;
    return (i + c->polls) % DEAD_LOOK == 0 && !culeak_hub_writer_live(c->hub, i);
}

size_t culeak_collector_poll(struct culeak_collector *c, int timeout_ms)
{
    struct pollfd fds[CULEAK_HUB_POLLFDS];
    size_t nf = culeak_hub_pollfds(c->hub, fds, CULEAK_HUB_POLLFDS);
    if (poll(fds, nf, timeout_ms) > 0)
        culeak_hub_service(c->hub);
    take_new(c);
    size_t total = 0;
    c->polls++;
    for (size_t i = 0; i < c->n; i++) {
        if (!c->outs[i].active)
            continue;
        size_t got = drain(c, i);
        /* nothing came: whether its writer ended is looked at before the last read, so
         * what it committed before it ended is read */
        if (!got && writer_gone(c, i)) {
            got = drain(c, i);
            const uint8_t *p;
            if (!culeak_ring_peek(culeak_hub_ring(c->hub, i), &p))
                finish(c, i);
        }
        total += got;
    }
    if (c->tap.turn)
        c->tap.turn(c->tap.ctx);
    return total;
}

int culeak_collector_busy(struct culeak_collector *c)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->outs[i].active)
            return 1;
    /* a hand-over under way (its process lives), or a ring not taken yet */
    for (size_t i = 0; i < culeak_hub_count(c->hub); i++)
        if ((i >= c->n || !c->outs[i].active) && culeak_hub_writer_live(c->hub, i))
            return 1;
    return culeak_hub_pending(c->hub);
}

static void say_last_gap(struct culeak_collector *c, size_t i)
{
    uint64_t first, last, n = culeak_ring_untold(culeak_hub_ring(c->hub, i), &first, &last);
    if (!n || (c->outs[i].out < 0 && !c->tap.bytes))
        return;
    uint8_t rec[CULEAK_REC_HEADROOM + 3 * CULEAK_UVARINT_MAX], *p = rec + CULEAK_REC_HEADROOM;
    size_t k = culeak_put_u(p, n);
    k += culeak_put_u(p + k, first);
    k += culeak_put_u(p + k, last);
    write_full(c, i, rec, culeak_rec_finish(rec, CULEAK_REC_LOST, k));
}

void culeak_collector_free(struct culeak_collector *c)
{
    if (!c)
        return;
    culeak_collector_poll(c, 0);
    for (size_t i = 0; i < c->n; i++)
        if (c->outs[i].active)
            finish(c, i);
    culeak_hub_free(c->hub);
    free(c->outs);
    free(c->pids);
    free(c->attach_out);
    free(c->pattern);
    free(c);
}
