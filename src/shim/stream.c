/* The outgoing stream: records are encoded under one lock straight into a ring
 * (src/common/ring.h, culeak-stream(5) "The ring"), committed with a release store: no
 * system call per event.
 *
 * A shared ring (launched by culeak: record, check) is drained by the culeak process
 * itself, which maps the same memory: what is committed survives the process, SIGKILL
 * included, and the process keeps no descriptor for it. When it is full the writer waits
 * for the reader at most WAIT_MS, then drops the event and counts it; the next record
 * that fits is preceded by a LOST record. While such a gap is open it does not wait again.
 *
 * A console reads the same kind of ring and commands through it (culeak-stream(5), The
 * ring, Commands): hold words in the header, and a small ring of WATCH, UNWATCH and
 * RELEASE records taken at the next event (one acquire load when nothing is new). A
 * thread whose allocation the console holds waits here on the header's released word
 * (FUTEX_WAIT) until its RELEASE comes, tracing stops, or the console is gone.
 *
 * A private ring (CULEAK_OUTPUT without culeak's reader: the shim writes the recording
 * itself) is drained by the process: by a flush thread every FLUSH_MS or by the appending
 * thread when the ring is full (blocking on the file's write: nothing is dropped).
 *
 * Lock order: write_mu -> lk -> hold_mu. Nothing waits for I/O while holding lk. */
#include "shim.h"
#include "common/apis.h"
#include "common/wire.h"
#include "common/wire_encode.h"
#include "stream_lock.h"
#include "common/ring.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PRIVATE_RING (128u << 10)
#define WAIT_MS 50
#define FLUSH_MS 15
#define LABEL_MAX 4096
#define HOLD_CHECK_MS 100 /* a held thread looks whether the console still lives this often */
#define START_HOLD_MS 2000 /* a hold at the start waits no longer for a console that does not run */
#define READER_CHECK_TICKS 64 /* the flush thread looks whether the reader lives every ~1 s */

struct waiter {
    uint64_t seq;
    int released;
    struct waiter *next;
};

struct stream {
    struct culeak_slock lk;   /* buffer, trace tree, seq, watch settings (stream_lock.h) */
    pthread_mutex_t write_mu; /* a private ring's drain: one at a time */
    struct culeak_ring ring;
    int shared;               /* the ring is drained by culeak's reader */
    uint8_t *w0, *w;          /* the record being written: its start, the write position */
    int fd;
    int magic_out;            /* a private ring's MAGIC is written (it is no record) */
    struct culeak_enc enc;    /* the seq, and what the next record steps from */
    struct culeak_tree *tree;
    uint64_t *watch;
    size_t nwatch, watch_cap;
    pthread_mutex_t hold_mu;  /* the waiters */
    struct waiter *waiters;
    int start_hold_over;      /* the console did not answer HELLO in time: hold_new is not
                               * the console's yet, and holds nothing */
    int ended;                /* an EXIT record other than EXEC's is written: the process
                               * ends, and writes no other (an exec may fail and trace on) */
};

static struct stream *S;

static struct stream *stream_new(uint64_t t0)
{
    struct stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->tree = culeak_tree_new();
    if (!s->tree) {
        free(s);
        return NULL;
    }
    s->fd = -1;
    s->enc.t_last = t0;
    culeak_slock_init(&s->lk); /* biased to this thread, which records the first event */
    pthread_mutex_init(&s->write_mu, NULL);
    pthread_mutex_init(&s->hold_mu, NULL);
    return s;
}

int culeak_stream_open(int fd, uint64_t t0)
{
    struct stream *s = stream_new(t0);
    if (!s)
        return -1;
    if (culeak_ring_create(PRIVATE_RING, NULL, &s->ring) != 0) {
        free(s);
        return -1;
    }
    s->fd = culeak_sink_adopt(fd);
    __atomic_store_n(&S, s, __ATOMIC_RELEASE);
    return 0;
}

int culeak_stream_open_shared(const struct culeak_ring *r, uint64_t t0)
{
    struct stream *s = stream_new(t0);
    if (!s)
        return -1;
    s->ring = *r;
    s->shared = 1;
    /* a console that launched the job answers HELLO with what to watch: until then, an
     * allocation at a new stack waits (culeak's other readers never answer: they start
     * their jobs without CULEAK_HOLD_AT_START) */
    if (culeak_hold_at_start)
        __atomic_store_n(&r->h->hold_new, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&S, s, __ATOMIC_RELEASE);
    return 0;
}

void culeak_stream_reset_child(void)
{
    /* The parent's locks may be held by threads that do not exist here: leak them. Its
     * shared ring is the parent's, never written here. */
    struct stream *s = __atomic_load_n(&S, __ATOMIC_ACQUIRE);
    __atomic_store_n(&S, NULL, __ATOMIC_RELEASE);
    if (s && s->shared)
        culeak_ring_unmap(&s->ring);
}

static int active(void) { return __atomic_load_n(&culeak_state, __ATOMIC_ACQUIRE) == CULEAK_ACTIVE; }

static void write_all(struct stream *s, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t k = culeak_sink_write(p, n);
        if (k < 0 && errno == EBADF) {
            culeak_stop("the recording cannot be reopened after the program closed its descriptor; tracing "
                        "stopped, the program continues");
            return;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            char why[160];
            snprintf(why, sizeof why, "cannot write the recording (%s); tracing stopped, the program continues",
                     k < 0 ? strerror(errno) : "short write");
            culeak_stop(why);
            return;
        }
        p += k;
        n -= (size_t)k;
    }
}

/* With write_mu held: writes out what a private ring holds committed. */
static void write_out(struct stream *s)
{
    const uint8_t *p;
    size_t n;
    while ((n = culeak_ring_peek(&s->ring, &p)) > 0) {
        if (!s->magic_out && active()) {
            s->magic_out = 1;
            write_all(s, (const uint8_t *)CULEAK_MAGIC, CULEAK_MAGIC_LEN);
        }
        if (active())
            write_all(s, p, n);
        culeak_ring_consume(&s->ring, n);
    }
}

/* A private ring: writes out what is committed; try: unless another thread is at it
 * (then 0). Needs no stream lock: the ring has one reader (under write_mu). */
static int flush(struct stream *s, int try)
{
    if (s->shared)
        return 1;
    if (try) {
        if (pthread_mutex_trylock(&s->write_mu) != 0)
            return 0;
    } else {
        pthread_mutex_lock(&s->write_mu);
    }
    write_out(s);
    pthread_mutex_unlock(&s->write_mu);
    return 1;
}

void culeak_stream_flush(void)
{
    struct stream *s = __atomic_load_n(&S, __ATOMIC_ACQUIRE);
    if (s)
        flush(s, 0);
}

/* With lk held: a LOST record for the events dropped since the last one, at p. */
static size_t put_lost(struct stream *s, uint8_t *p)
{
    uint64_t first, last, n = culeak_ring_untold(&s->ring, &first, &last);
    culeak_ring_told(&s->ring);
    return culeak_enc_lost(p, n, first, last);
}

/* With lk held (*h: how): room for a record of at most `need` bytes, s->w0 and s->w at
 * its start (after a LOST record when a gap is open). -1: no room (the caller drops the
 * record, counted by dropped()) or tracing stopped. A private ring is written out to
 * make room (lk dropped meanwhile); a shared one is waited for, WAIT_MS at most, unless
 * a gap is open already. */
static int room_slow(struct stream *s, size_t need, enum culeak_held *h, int records)
{
    int gap = s->ring.h->lost != s->ring.h->lost_told;
    if (gap)
        need += CULEAK_ENC_LOST_MAX;
    uint8_t *p;
    while (!(p = culeak_ring_reserve(&s->ring, need, 0))) {
        if (need >= s->ring.size || !active())
            return -1;
        if (s->shared) {
            p = gap ? NULL : culeak_ring_reserve(&s->ring, need, WAIT_MS);
            if (!p)
                return -1;
            break;
        }
        culeak_slock_unlock(&s->lk, *h);
        culeak_stream_flush();
        *h = culeak_slock_lock(&s->lk, records);
    }
    if (!active())
        return -1;
    s->w0 = s->w = p;
    if (gap)
        s->w += put_lost(s, p);
    return 0;
}

static inline int room(struct stream *s, size_t need, enum culeak_held *h, int records)
{
    uint8_t *p;
    if (s->ring.h->lost == s->ring.h->lost_told && (p = culeak_ring_reserve_fast(&s->ring, need)) && active()) {
        s->w0 = s->w = p;
        return 0;
    }
    return room_slow(s, need, h, records);
}

/* With lk held, after room: the record written from s->w0 to s->w is complete. */
static inline void commit(struct stream *s) { culeak_ring_commit(&s->ring, (size_t)(s->w - s->w0)); }

/* With lk held: a record found no room; its seq is counted as lost (shared rings). */
static void dropped(struct stream *s, uint64_t seq)
{
    if (s->shared && active())
        culeak_ring_drop(&s->ring, seq);
}

void culeak_stream_append(const uint8_t *rec, size_t len)
{
    struct stream *s = __atomic_load_n(&S, __ATOMIC_ACQUIRE);
    if (!s)
        return;
    enum culeak_held h = culeak_slock_lock(&s->lk, 0);
    if (room(s, len, &h, 0) == 0) {
        memcpy(s->w, rec, len);
        s->w += len;
        commit(s);
    } else {
        dropped(s, s->enc.seq);
    }
    culeak_slock_unlock(&s->lk, h);
}

void culeak_stream_note(const char *text, size_t len)
{
    uint8_t rec[CULEAK_ENC_NOTE_MAX(CULEAK_NOTE_MAX)];
    culeak_stream_append(rec, culeak_enc_note(rec, text, len < CULEAK_NOTE_MAX ? len : CULEAK_NOTE_MAX));
}

/* A trace-tree node of a new stack, as the tree interns it (culeak_enc_node). */
static void put_frame(void *arg, uint32_t id, uint32_t parent, uintptr_t ip)
{
    struct stream *s = arg;
    s->w += culeak_enc_node(&s->enc, s->w, id, parent, ip);
}

static int watched(const struct stream *s, uint64_t stack)
{
    for (size_t i = 0; i < s->nwatch; i++)
        if (s->watch[i] == stack)
            return 1;
    return 0;
}

static void take_commands(struct stream *s);

/* With lk held: whether an allocation at stack leaf (fresh: new to the process) waits
 * for the console. The hold words are loaded before the commands are taken: what the
 * console wrote before it stored them is then taken too. */
static inline int holds(struct stream *s, uint32_t leaf, int fresh)
{
    if (!s->shared)
        return 0;
    int all = __atomic_load_n(&s->ring.h->hold_all, __ATOMIC_ACQUIRE) != 0;
    int new = __atomic_load_n(&s->ring.h->hold_new, __ATOMIC_ACQUIRE) != 0 &&
              (!__atomic_load_n(&s->start_hold_over, __ATOMIC_RELAXED) ||
               __atomic_load_n(&s->ring.h->answered, __ATOMIC_ACQUIRE));
    if (__atomic_load_n(&s->ring.h->cmd_head, __ATOMIC_ACQUIRE) != s->ring.h->cmd_tail)
        take_commands(s);
    return all || (new && fresh) || watched(s, leaf);
}

static int released(struct stream *s, const struct waiter *w)
{
    pthread_mutex_lock(&s->hold_mu);
    int r = w->released;
    pthread_mutex_unlock(&s->hold_mu);
    return r;
}

/* Milliseconds since *t (CLOCK_MONOTONIC). */
static long ms_since(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - t->tv_sec) * 1000L + (now.tv_nsec - t->tv_nsec) / 1000000L;
}

/* The thread of a held allocation waits for its RELEASE: it takes the commands each time
 * the console bumps released, and looks every HOLD_CHECK_MS whether the console still
 * reads (a console killed with SIGKILL never releases anything). A hold at the start,
 * before the console answered HELLO, is no pause the user asked for: it waits no longer
 * than START_HOLD_MS for a console that does not run (stopped with Ctrl-Z), which then
 * holds nothing more until it answers. */
static void wait_release(struct stream *s, struct waiter *w)
{
    uint32_t beat = __atomic_load_n(&s->ring.h->beat, __ATOMIC_ACQUIRE);
    struct timespec beat_seen;
    clock_gettime(CLOCK_MONOTONIC, &beat_seen);
    while (active()) {
        uint32_t gen = __atomic_load_n(&s->ring.h->released, __ATOMIC_ACQUIRE);
        enum culeak_held h = culeak_slock_lock(&s->lk, 0);
        take_commands(s);
        culeak_slock_unlock(&s->lk, h);
        if (released(s, w))
            break;
        if (!culeak_ring_reader_alive(&s->ring)) {
            culeak_stop("console went away; tracing stopped, the program continues");
            break;
        }
        if (!__atomic_load_n(&s->ring.h->answered, __ATOMIC_ACQUIRE)) {
            uint32_t b = __atomic_load_n(&s->ring.h->beat, __ATOMIC_ACQUIRE);
            if (b != beat) {
                beat = b;
                clock_gettime(CLOCK_MONOTONIC, &beat_seen);
            } else if (ms_since(&beat_seen) >= START_HOLD_MS) {
                __atomic_store_n(&s->start_hold_over, 1, __ATOMIC_RELAXED);
                break;
            }
        }
        culeak_ring_wait_released(&s->ring, gen, HOLD_CHECK_MS);
    }
    pthread_mutex_lock(&s->hold_mu);
    for (struct waiter **pp = &s->waiters; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    pthread_mutex_unlock(&s->hold_mu);
}

/* A free without stack, device or context, the most common event with its allocation:
 * nothing to intern, nothing to hold. */
static void bare_free(struct stream *s, const struct culeak_ev *e)
{
    uint64_t now = culeak_now_ns(); /* read outside the lock: the clock is no work done under it */
    enum culeak_held h = culeak_slock_lock(&s->lk, 1);
    if (room(s, CULEAK_ENC_EVENT_MAX, &h, 1) < 0) {
        dropped(s, ++s->enc.seq);
    } else {
        s->w += culeak_enc_free(&s->enc, s->w, e, now, culeak_tid());
        commit(s);
    }
    culeak_slock_unlock(&s->lk, h);
}

void culeak_stream_event(const struct culeak_ev *e, const uintptr_t *ips, int n, uint64_t tag)
{
    struct stream *s = __atomic_load_n(&S, __ATOMIC_ACQUIRE);
    if (!s)
        return;
    if (n <= 0 && e->op == CULEAK_OP_FREE && e->device == -1 && !e->ctx) {
        bare_free(s, e);
        return;
    }
    uint64_t now = culeak_now_ns();
    enum culeak_held h = culeak_slock_lock(&s->lk, 1);
    if (room(s, (size_t)n * CULEAK_ENC_NODE_MAX + CULEAK_ENC_EVENT_MAX, &h, 1) < 0) {
        dropped(s, ++s->enc.seq); /* its stack is not interned: no FRAME goes missing */
        culeak_slock_unlock(&s->lk, h);
        return;
    }
    int fresh = 0;
    uint32_t leaf = culeak_tree_intern(s->tree, ips, n, tag, put_frame, s, &fresh);
    int held = 0;
    if (e->op == CULEAK_OP_ALLOC) {
        held = holds(s, leaf, fresh);
        s->w += culeak_enc_alloc(&s->enc, s->w, e, now, culeak_tid(), leaf, held);
    } else {
        s->w += culeak_enc_event(&s->enc, s->w, e, now, culeak_tid(), leaf);
    }
    commit(s);
    struct waiter w = {0, 0, NULL};
    if (held) {
        /* Registered before the event can reach the console, so no RELEASE is missed. */
        w.seq = s->enc.seq;
        pthread_mutex_lock(&s->hold_mu);
        w.next = s->waiters;
        s->waiters = &w;
        pthread_mutex_unlock(&s->hold_mu);
    }
    culeak_slock_unlock(&s->lk, h);
    if (fresh) /* a new call site may sit in a library loaded since the last MODULES */
        culeak_modules_send_if_changed();
    if (held)
        wait_release(s, &w);
}

void culeak_stream_mark(const char *label, unsigned flags)
{
    struct stream *s = __atomic_load_n(&S, __ATOMIC_ACQUIRE);
    if (!s)
        return;
    size_t n = label ? strnlen(label, LABEL_MAX) : 0;
    struct culeak_enc_mem mem = {-1, 0, 0};
    int has_mem = !(flags & CULEAK_MARK_POP) && culeak_devmem(&mem.device, &mem.free, &mem.total);
    enum culeak_held h = culeak_slock_lock(&s->lk, 1);
    if (room(s, CULEAK_ENC_EVENT_MAX + n, &h, 1) == 0) {
        s->w += culeak_enc_mark(&s->enc, s->w, culeak_now_ns(), culeak_tid(), label, n, flags, has_mem ? &mem : NULL);
        commit(s);
    } else {
        dropped(s, ++s->enc.seq);
    }
    culeak_slock_unlock(&s->lk, h);
}

/* With lk held (*h: how): the EXIT record; a shared ring is then ended (its reader
 * stops waiting for the process). A full private ring is written out first. */
static void put_exit(struct stream *s, unsigned reason, enum culeak_held *h)
{
    if (s->ended)
        return;
    if (room(s, CULEAK_ENC_EVENT_MAX, h, 0) == 0) {
        s->ended = reason != CULEAK_EXIT_EXEC;
        s->w += culeak_enc_exit(&s->enc, s->w, culeak_now_ns(), reason);
        commit(s);
    }
    if (s->shared)
        culeak_ring_end(&s->ring);
}

void culeak_stream_end_abrupt(unsigned exit_reason, int timeout_ms)
{
    struct stream *s = __atomic_load_n(&S, __ATOMIC_ACQUIRE);
    if (!s || !active())
        return;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    until.tv_sec += timeout_ms / 1000 + until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    enum culeak_held h = culeak_slock_lock_until(&s->lk, &until);
    if (h == CULEAK_HELD_NOT)
        return;
    /* a record is committed whole: what the ring holds ends at a record's end; no room
     * without writing out, which needs the drain's lock: then no EXIT */
    if (culeak_ring_reserve(&s->ring, CULEAK_ENC_EVENT_MAX, 0) || s->shared)
        put_exit(s, exit_reason, &h);
    culeak_slock_unlock(&s->lk, h);
    if (!s->shared && pthread_mutex_timedlock(&s->write_mu, &until) == 0) {
        write_out(s);
        pthread_mutex_unlock(&s->write_mu);
    }
}

void culeak_stream_exit(void)
{
    struct stream *s = __atomic_load_n(&S, __ATOMIC_ACQUIRE);
    if (!s)
        return;
    enum culeak_held h = culeak_slock_lock(&s->lk, 0);
    put_exit(s, CULEAK_EXIT_NORMAL, &h);
    culeak_slock_unlock(&s->lk, h);
    culeak_stream_flush();
}

int culeak_stream_unread(void)
{
    struct stream *s = __atomic_load_n(&S, __ATOMIC_ACQUIRE);
    return s && s->shared &&
           (__atomic_load_n(&s->ring.h->reader_gone, __ATOMIC_ACQUIRE) || !culeak_ring_reader_alive(&s->ring));
}

/* The stream is left as it is (never freed: a thread may still be appending to it); its
 * flush thread sees it is no longer S and ends. */
void culeak_stream_forget(void) { __atomic_store_n(&S, NULL, __ATOMIC_RELEASE); }

int culeak_stream_is(const void *s) { return __atomic_load_n(&S, __ATOMIC_ACQUIRE) == s; }

void culeak_stream_release_all(void)
{
    struct stream *s = __atomic_load_n(&S, __ATOMIC_ACQUIRE);
    if (!s)
        return;
    pthread_mutex_lock(&s->hold_mu);
    for (struct waiter *w = s->waiters; w; w = w->next)
        w->released = 1;
    pthread_mutex_unlock(&s->hold_mu);
    if (s->shared)
        culeak_ring_wake_released(&s->ring);
}

/* The held allocation seq goes back to its thread; another thread's is woken. */
static void release(struct stream *s, uint64_t seq)
{
    int other = 0;
    pthread_mutex_lock(&s->hold_mu);
    for (struct waiter *w = s->waiters; w; w = w->next)
        if (w->seq == seq && !w->released) {
            w->released = 1;
            other = 1;
        }
    pthread_mutex_unlock(&s->hold_mu);
    if (other)
        culeak_ring_wake_released(&s->ring);
}

/* With lk held: one command record of the console. */
static void command(struct stream *s, uint8_t type, const uint8_t *payload, size_t len)
{
    struct culeak_cursor c = {payload, payload + len, 0};
    switch (type) {
    case CULEAK_CMD_WATCH: {
        uint64_t count = culeak_get_u(&c);
        for (uint64_t i = 0; i < count && culeak_cursor_more(&c); i++) {
            uint64_t stack = culeak_get_u(&c);
            if (c.bad || watched(s, stack))
                continue;
            if (s->nwatch == s->watch_cap) {
                size_t cap = s->watch_cap ? s->watch_cap * 2 : 16;
                uint64_t *w = realloc(s->watch, cap * sizeof *w);
                if (!w)
                    break;
                s->watch = w;
                s->watch_cap = cap;
            }
            s->watch[s->nwatch++] = stack;
        }
        break;
    }
    case CULEAK_CMD_UNWATCH:
        s->nwatch = 0;
        break;
    case CULEAK_CMD_RELEASE: {
        uint64_t seq = culeak_get_u(&c);
        if (!c.bad)
            release(s, seq);
        break;
    }
    case CULEAK_CMD_HOLDERS:
        culeak_holders_command(payload, len);
        break;
    default: /* unknown commands are skipped */
        break;
    }
}

/* With lk held: the commands the console put in the ring since the last time. It writes
 * whole records; what does not parse is dropped. */
static void take_commands(struct stream *s)
{
    uint8_t buf[CULEAK_RING_CMD];
    size_t have = culeak_ring_cmd_take(&s->ring, buf, sizeof buf), off = 0;
    while (off < have) {
        uint8_t type;
        const uint8_t *payload;
        size_t plen;
        long used = culeak_next_record(buf + off, have - off, &type, &payload, &plen);
        if (used <= 0)
            break;
        command(s, type, payload, plen);
        off += (size_t)used;
    }
}

static void *flusher(void *arg)
{
    struct stream *s = arg;
    unsigned ticks = 0;
    while (active() && __atomic_load_n(&S, __ATOMIC_ACQUIRE) == s) {
        struct timespec ts = {0, FLUSH_MS * 1000000L};
        nanosleep(&ts, NULL);
        /* a reader that said it reads no more (a console that quit or detached), or
         * died: tracing stops, and the program no longer pays for it */
        if (s->shared && (__atomic_load_n(&s->ring.h->reader_gone, __ATOMIC_ACQUIRE) ||
                          (++ticks % READER_CHECK_TICKS == 0 && !culeak_ring_reader_alive(&s->ring)))) {
            culeak_stop_stream(s, __atomic_load_n(&s->ring.h->console, __ATOMIC_ACQUIRE)
                                      ? "console went away; tracing stopped, the program continues"
                                      : "culeak went away; tracing stopped, the program continues");
            break;
        }
        if (s->shared && __atomic_load_n(&s->ring.h->cmd_head, __ATOMIC_ACQUIRE) !=
                              __atomic_load_n(&s->ring.h->cmd_tail, __ATOMIC_RELAXED)) {
            enum culeak_held h = culeak_slock_trylock(&s->lk); /* a job that allocates nothing */
            if (h != CULEAK_HELD_NOT) {
                take_commands(s);
                culeak_slock_unlock(&s->lk, h);
            }
        }
        culeak_holders_tick();
        culeak_modules_send_if_changed();
        flush(s, 1);
    }
    return NULL;
}

void culeak_stream_start_flusher(void)
{
    struct stream *s = __atomic_load_n(&S, __ATOMIC_ACQUIRE);
    pthread_t t;
    pthread_attr_t attr;
    sigset_t all, old;
    /* The program's signal handlers must never run on the shim's thread. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, flusher, s) != 0)
        fputs("culeak: no flush thread; the stream is written when its buffer fills\n", stderr);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}
