/* The outgoing stream: a double buffer filled under one lock, written by a flush thread
 * every FLUSH_MS (so a live console stays current) or by the appending thread when the
 * buffer is full (blocking: backpressure, nothing is dropped). On a socket, the flush
 * thread also reads the console's commands, and threads whose allocation the console
 * holds wait here for RELEASE.
 *
 * Lock order: write_mu -> lk -> hold_mu. Nothing waits for I/O while holding lk. */
#include "shim.h"
#include "apis.h"
#include "wire.h"
#include "stream_lock.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUF_SIZE (64u << 10)
#define FLUSH_MS 15
#define FRAME_MAX (CULEAK_REC_HEADROOM + 3 * CULEAK_UVARINT_MAX)
#define EVENT_MAX (CULEAK_REC_HEADROOM + 14 * CULEAK_UVARINT_MAX)
#define LABEL_MAX 4096

struct waiter {
    uint64_t seq;
    int released;
    struct waiter *next;
};

struct stream {
    struct culeak_slock lk;   /* buffer, trace tree, seq, watch settings (stream_lock.h) */
    pthread_mutex_t write_mu; /* one writer at a time, in buffer order */
    uint8_t *cur, *spare;
    size_t len, cap, spare_cap;
    int fd, is_socket;
    uint64_t seq, t_last;
    struct culeak_tree *tree;
    uint64_t *watch;
    size_t nwatch, watch_cap;
    int hold_new, hold_all;
    pthread_mutex_t hold_mu;
    pthread_cond_t hold_cv;
    struct waiter *waiters;
};

static struct stream *S;

int culeak_stream_open(int fd, int is_socket, uint64_t t0)
{
    struct stream *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    s->cur = malloc(BUF_SIZE);
    s->spare = malloc(BUF_SIZE);
    s->tree = culeak_tree_new();
    if (!s->cur || !s->spare || !s->tree) {
        free(s->cur);
        free(s->spare);
        free(s);
        return -1;
    }
    s->cap = s->spare_cap = BUF_SIZE;
    s->fd = culeak_sink_adopt(fd, is_socket);
    s->is_socket = is_socket;
    s->t_last = t0;
    culeak_slock_init(&s->lk); /* biased to this thread, which records the first event */
    pthread_mutex_init(&s->write_mu, NULL);
    pthread_mutex_init(&s->hold_mu, NULL);
    pthread_cond_init(&s->hold_cv, NULL);
    __atomic_store_n(&S, s, __ATOMIC_RELEASE);
    return 0;
}

void culeak_stream_reset_child(void)
{
    /* The parent's locks may be held by threads that do not exist here: leak them. */
    __atomic_store_n(&S, NULL, __ATOMIC_RELEASE);
}

static int active(void) { return __atomic_load_n(&culeak_state, __ATOMIC_ACQUIRE) == CULEAK_ACTIVE; }

static void write_all(struct stream *s, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t k = culeak_sink_write(p, n);
        if (k < 0 && errno == EBADF) {
            culeak_stop(s->is_socket ? "the program closed or reused the console connection's descriptor; "
                                       "tracing stopped, the program continues"
                                     : "the recording cannot be reopened after the program closed its "
                                       "descriptor; tracing stopped, the program continues");
            return;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            char why[160];
            if (s->is_socket)
                snprintf(why, sizeof why, "console went away (%s); tracing stopped, the program continues",
                         k < 0 ? strerror(errno) : "closed");
            else
                snprintf(why, sizeof why, "cannot write the recording (%s); tracing stopped, the program continues",
                         k < 0 ? strerror(errno) : "short write");
            culeak_stop(why);
            return;
        }
        p += k;
        n -= (size_t)k;
    }
}

/* Writes out what the buffer holds; try: unless another thread holds it (then 0). */
static int flush(struct stream *s, int try)
{
    enum culeak_held h;
    if (try) {
        if (pthread_mutex_trylock(&s->write_mu) != 0)
            return 0;
        if ((h = culeak_slock_trylock(&s->lk)) == CULEAK_HELD_NOT) {
            pthread_mutex_unlock(&s->write_mu);
            return 0;
        }
    } else {
        pthread_mutex_lock(&s->write_mu);
        h = culeak_slock_lock(&s->lk, 0);
    }
    uint8_t *full = s->cur;
    size_t n = s->len, cap = s->cap;
    s->cur = s->spare;
    s->cap = s->spare_cap;
    s->len = 0;
    s->spare = full;
    s->spare_cap = cap;
    culeak_slock_unlock(&s->lk, h);
    if (n && active())
        write_all(s, full, n);
    pthread_mutex_unlock(&s->write_mu);
    return 1;
}

void culeak_stream_flush(void)
{
    struct stream *s = __atomic_load_n(&S, __ATOMIC_ACQUIRE);
    if (s)
        flush(s, 0);
}

/* With lk held (*h: how): makes room for `need` bytes, writing the buffer out (lk
 * dropped meanwhile) or growing it for an oversized record. -1: tracing stopped. */
static int room_slow(struct stream *s, size_t need, enum culeak_held *h, int records)
{
    while (s->cap - s->len < need) {
        if (s->len == 0) {
            uint8_t *p = realloc(s->cur, need);
            if (!p)
                return -1;
            s->cur = p;
            s->cap = need;
            break;
        }
        culeak_slock_unlock(&s->lk, *h);
        culeak_stream_flush();
        *h = culeak_slock_lock(&s->lk, records);
    }
    return active() ? 0 : -1;
}

static inline int room(struct stream *s, size_t need, enum culeak_held *h, int records)
{
    if (s->cap - s->len >= need && active())
        return 0;
    return room_slow(s, need, h, records);
}

void culeak_stream_append(const uint8_t *rec, size_t len)
{
    struct stream *s = __atomic_load_n(&S, __ATOMIC_ACQUIRE);
    if (!s)
        return;
    enum culeak_held h = culeak_slock_lock(&s->lk, 0);
    if (room(s, len, &h, 0) == 0) {
        memcpy(s->cur + s->len, rec, len);
        s->len += len;
    }
    culeak_slock_unlock(&s->lk, h);
}

static void put_frame(void *arg, uint32_t id, uint32_t parent, uintptr_t ip)
{
    struct stream *s = arg;
    uint8_t *rec = s->cur + s->len, *p = rec + CULEAK_REC_SHORT;
    size_t k = culeak_put_u(p, id);
    k += culeak_put_u(p + k, parent);
    k += culeak_put_u(p + k, ip);
    s->len += culeak_rec_finish_short(rec, CULEAK_REC_FRAME, k);
}

/* With lk held: the next seq and the time since the previous timed record, for a
 * record made at `now` (read before lk was taken: another thread's record may come
 * first with a later time, then this one's dt is 0). */
static inline size_t put_seq_dt_at(struct stream *s, uint8_t *p, uint64_t now)
{
    uint64_t dt = now > s->t_last ? now - s->t_last : 0;
    s->t_last = now > s->t_last ? now : s->t_last;
    size_t k = culeak_put_u(p, ++s->seq);
    return k + culeak_put_u(p + k, dt);
}

static size_t put_seq_dt(struct stream *s, uint8_t *p) { return put_seq_dt_at(s, p, culeak_now_ns()); }

static int watched(const struct stream *s, uint64_t stack)
{
    for (size_t i = 0; i < s->nwatch; i++)
        if (s->watch[i] == stack)
            return 1;
    return 0;
}

static void wait_release(struct stream *s, struct waiter *w)
{
    pthread_mutex_lock(&s->hold_mu);
    while (!w->released && active())
        pthread_cond_wait(&s->hold_cv, &s->hold_mu);
    for (struct waiter **pp = &s->waiters; *pp; pp = &(*pp)->next)
        if (*pp == w) {
            *pp = w->next;
            break;
        }
    pthread_mutex_unlock(&s->hold_mu);
}

void culeak_stream_event(const struct culeak_ev *e, const uintptr_t *ips, int n)
{
    struct stream *s = __atomic_load_n(&S, __ATOMIC_ACQUIRE);
    if (!s)
        return;
    struct waiter w = {0, 0, NULL};
    int fresh = 0, held = 0;
    /* read outside the lock: the counter's read overlaps the work before it */
    uint64_t now = culeak_now_ns();
    enum culeak_held h = culeak_slock_lock(&s->lk, 1);
    if (room(s, (size_t)n * FRAME_MAX + EVENT_MAX, &h, 1) < 0) {
        culeak_slock_unlock(&s->lk, h);
        return;
    }
    uint32_t leaf = culeak_tree_intern(s->tree, ips, n, put_frame, s, &fresh);
    held = s->is_socket && e->op == CULEAK_OP_ALLOC &&
           (s->hold_all || (s->hold_new && fresh) || watched(s, leaf));
    uint8_t *rec = s->cur + s->len, *p = rec + CULEAK_REC_SHORT;
    size_t k = put_seq_dt_at(s, p, now);
    k += culeak_put_u(p + k, culeak_tid());
    k += culeak_put_u(p + k, e->op);
    k += culeak_put_u(p + k, e->api);
    k += culeak_put_u(p + k, e->kind);
    k += culeak_put_z(p + k, e->device);
    k += culeak_put_u(p + k, e->ctx);
    k += culeak_put_u(p + k, e->size);
    k += culeak_put_u(p + k, e->addr);
    k += culeak_put_u(p + k, e->aux);
    k += culeak_put_u(p + k, e->result);
    k += culeak_put_u(p + k, leaf);
    k += culeak_put_u(p + k, held ? CULEAK_EVENT_HELD : 0);
    s->len += culeak_rec_finish_short(rec, CULEAK_REC_EVENT, k);
    if (held) {
        /* Registered before the event can reach the console, so no RELEASE is missed. */
        w.seq = s->seq;
        pthread_mutex_lock(&s->hold_mu);
        w.next = s->waiters;
        s->waiters = &w;
        pthread_mutex_unlock(&s->hold_mu);
    }
    culeak_slock_unlock(&s->lk, h);
    if (fresh) /* a new call site may sit in a library loaded since the last MODULES */
        culeak_modules_send_if_changed();
    if (held) {
        culeak_stream_flush();
        wait_release(s, &w);
    }
}

void culeak_stream_mark(const char *label, unsigned flags)
{
    struct stream *s = __atomic_load_n(&S, __ATOMIC_ACQUIRE);
    if (!s)
        return;
    size_t n = label ? strnlen(label, LABEL_MAX) : 0;
    int dev = -1;
    uint64_t mem_free = 0, mem_total = 0;
    int has_mem = !(flags & CULEAK_MARK_POP) && culeak_devmem(&dev, &mem_free, &mem_total);
    enum culeak_held h = culeak_slock_lock(&s->lk, 1);
    if (room(s, EVENT_MAX + n, &h, 1) == 0) {
        uint8_t *rec = s->cur + s->len, *p = rec + CULEAK_REC_HEADROOM;
        size_t k = put_seq_dt(s, p);
        k += culeak_put_u(p + k, culeak_tid());
        k += culeak_put_s(p + k, label ? label : "", n);
        k += culeak_put_u(p + k, flags);
        if (has_mem) {
            k += culeak_put_z(p + k, dev);
            k += culeak_put_u(p + k, mem_free);
            k += culeak_put_u(p + k, mem_total);
        }
        s->len += culeak_rec_finish(rec, CULEAK_REC_MARK, k);
    }
    culeak_slock_unlock(&s->lk, h);
}

/* With lk held: appends the EXIT record (written out first when there is no room). */
static void put_exit(struct stream *s, unsigned reason)
{
    if (s->cap - s->len < EVENT_MAX) {
        write_all(s, s->cur, s->len);
        s->len = 0;
    }
    uint8_t *rec = s->cur + s->len, *p = rec + CULEAK_REC_HEADROOM;
    size_t k = put_seq_dt(s, p);
    k += culeak_put_u(p + k, reason);
    s->len += culeak_rec_finish(rec, CULEAK_REC_EXIT, k);
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
    if (pthread_mutex_timedlock(&s->write_mu, &until) != 0)
        return;
    enum culeak_held h = culeak_slock_lock_until(&s->lk, &until);
    if (h != CULEAK_HELD_NOT) {
        /* the buffer holds whole records only: len grows after a record is complete */
        if (exit_reason)
            put_exit(s, exit_reason);
        write_all(s, s->cur, s->len);
        s->len = 0;
        culeak_slock_unlock(&s->lk, h);
    }
    pthread_mutex_unlock(&s->write_mu);
}

void culeak_stream_exit(void)
{
    struct stream *s = __atomic_load_n(&S, __ATOMIC_ACQUIRE);
    if (!s)
        return;
    enum culeak_held h = culeak_slock_lock(&s->lk, 0);
    if (room(s, EVENT_MAX, &h, 0) == 0) {
        uint8_t *rec = s->cur + s->len, *p = rec + CULEAK_REC_HEADROOM;
        size_t k = put_seq_dt(s, p);
        k += culeak_put_u(p + k, 0);
        s->len += culeak_rec_finish(rec, CULEAK_REC_EXIT, k);
    }
    culeak_slock_unlock(&s->lk, h);
    culeak_stream_flush();
}

void culeak_stream_release_all(void)
{
    struct stream *s = __atomic_load_n(&S, __ATOMIC_ACQUIRE);
    if (!s)
        return;
    pthread_mutex_lock(&s->hold_mu);
    for (struct waiter *w = s->waiters; w; w = w->next)
        w->released = 1;
    pthread_cond_broadcast(&s->hold_cv);
    pthread_mutex_unlock(&s->hold_mu);
}

static void release(struct stream *s, uint64_t seq)
{
    pthread_mutex_lock(&s->hold_mu);
    for (struct waiter *w = s->waiters; w; w = w->next)
        if (w->seq == seq)
            w->released = 1;
    pthread_cond_broadcast(&s->hold_cv);
    pthread_mutex_unlock(&s->hold_mu);
}

static void command(struct stream *s, uint8_t type, const uint8_t *payload, size_t len)
{
    struct culeak_cursor c = {payload, payload + len, 0};
    switch (type) {
    case CULEAK_CMD_WATCH: {
        uint64_t count = culeak_get_u(&c);
        enum culeak_held h = culeak_slock_lock(&s->lk, 0);
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
        culeak_slock_unlock(&s->lk, h);
        break;
    }
    case CULEAK_CMD_UNWATCH: {
        enum culeak_held h = culeak_slock_lock(&s->lk, 0);
        s->nwatch = 0;
        culeak_slock_unlock(&s->lk, h);
        break;
    }
    case CULEAK_CMD_HOLD_NEW:
    case CULEAK_CMD_HOLD_ALL: {
        int on = culeak_get_u(&c) != 0;
        enum culeak_held h = culeak_slock_lock(&s->lk, 0);
        *(type == CULEAK_CMD_HOLD_NEW ? &s->hold_new : &s->hold_all) = on;
        culeak_slock_unlock(&s->lk, h);
        break;
    }
    case CULEAK_CMD_RELEASE: {
        uint64_t seq = culeak_get_u(&c);
        if (!c.bad)
            release(s, seq);
        break;
    }
    default: /* unknown commands are skipped */
        break;
    }
}

/* Reads what the console sent; returns -1 when it closed the connection. */
static int read_commands(struct stream *s, uint8_t *buf, size_t *have, size_t cap)
{
    int fd = culeak_sink_fd();
    if (fd < 0)
        return -1;
    ssize_t k = recv(fd, buf + *have, cap - *have, MSG_DONTWAIT);
    if (k < 0)
        return errno == EINTR || errno == EAGAIN ? 0 : -1;
    if (k == 0)
        return -1;
    *have += (size_t)k;
    size_t off = 0;
    for (;;) {
        uint8_t type;
        const uint8_t *payload;
        size_t plen;
        long used = culeak_next_record(buf + off, *have - off, &type, &payload, &plen);
        if (used < 0 || (used == 0 && off == 0 && *have == cap)) {
            *have = 0; /* garbage or a command larger than the buffer: drop it */
            return 0;
        }
        if (used == 0)
            break;
        command(s, type, payload, plen);
        off += (size_t)used;
    }
    memmove(buf, buf + off, *have - off);
    *have -= off;
    return 0;
}

static void *flusher(void *arg)
{
    struct stream *s = arg;
    uint8_t cmd[4096];
    size_t have = 0;
    while (active() && __atomic_load_n(&S, __ATOMIC_ACQUIRE) == s) {
        if (s->is_socket) {
            struct pollfd pfd = {culeak_sink_fd(), POLLIN, 0};
            int r = poll(&pfd, 1, FLUSH_MS);
            if (r > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR)) &&
                read_commands(s, cmd, &have, sizeof cmd) < 0) {
                culeak_stop("console went away; tracing stopped, the program continues");
                break;
            }
        } else {
            struct timespec ts = {0, FLUSH_MS * 1000000L};
            nanosleep(&ts, NULL);
        }
        culeak_clock_calibrate();
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
