/* The ring readers of the console: one per traced process (ring_reader.h). */
#include "ring_reader.h"
#include "common/wire.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_PEERS 4096u /* processes traced at once, each with the descriptor of its copy */
#define WATCH_CHUNK 256 /* stacks per WATCH record: a record fits the command area */

static struct rlimit job_nofile; /* the limit before ring_readers_open raised it: the job's */
static int nofile_raised;

void ring_readers_job_limits(void)
{
    if (nofile_raised)
        setrlimit(RLIMIT_NOFILE, &job_nofile);
}

static int private_dir(const char *dir, char *err, size_t errlen)
{
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) {
        snprintf(err, errlen, "%s is not a directory owned by you: refusing to use it", dir);
        return -1;
    }
    if ((st.st_mode & 0777) != 0700 && chmod(dir, 0700) != 0) {
        snprintf(err, errlen, "cannot make %s private: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* Removes dir/name and everything in it (one level: the session directories are flat). */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char p[PATH_MAX + 300];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* In dir (private to this user): the session directories of consoles that no longer run
 * (a console killed with SIGKILL cannot clean up after itself). */
static void remove_dead_sessions(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        int pid = 0, n = 0;
        if (sscanf(e->d_name, "session-%d%n", &pid, &n) != 1 || e->d_name[n] || pid <= 0 || pid == (int)getpid() ||
            kill(pid, 0) == 0 || errno != ESRCH)
            continue;
        char p[PATH_MAX + 300];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        remove_dir(p);
    }
    closedir(d);
}

/* $XDG_CACHE_HOME/culeak (default ~/.cache/culeak), made private: where the stream copies
 * go, on disk (the runtime directory is usually memory). 0, or -1. */
static int cache_dir(char *out, size_t len)
{
    const char *cache = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char base[900];
    if (cache && cache[0] == '/')
        snprintf(base, sizeof base, "%s", cache);
    else if (home && *home)
        snprintf(base, sizeof base, "%s/.cache", home);
    else
        return -1;
    mkdir(base, 0700);
    snprintf(out, len, "%s/culeak", base);
    char err[64];
    return private_dir(out, err, sizeof err);
}

/* CULEAK_COPY_LIMIT: bytes, or with a K, M or G suffix (binary). Default 4 GiB. */
static uint64_t copy_limit(void)
{
    const char *v = getenv("CULEAK_COPY_LIMIT");
    char *end;
    if (!v || !*v)
        return (uint64_t)4 << 30;
    unsigned long long n = strtoull(v, &end, 10);
    int shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 : *end == 'G' || *end == 'g' ? 30 : 0;
    return (uint64_t)n << shift;
}

int ring_readers_open(struct ring_readers *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    if (!(s->hub = culeak_hub_new(1, err, errlen)))
        return -1;
    snprintf(s->path, sizeof s->path, "%s", culeak_hub_socket(s->hub));
    snprintf(s->session, sizeof s->session, "%s", culeak_hub_dir(s->hub));
    char cache[1024];
    if (cache_dir(cache, sizeof cache) == 0) {
        remove_dead_sessions(cache);
        snprintf(s->copies, sizeof s->copies, "%s/session-%d", cache, (int)getpid());
    }
    if (!s->copies[0] || private_dir(s->copies, err, errlen) != 0) /* no cache: beside the socket */
        snprintf(s->copies, sizeof s->copies, "%s", s->session);
    s->copy_limit = copy_limit();
    /* each process's copy holds a descriptor: the soft limit is raised as far as the hard
     * one lets, for MAX_PEERS processes */
    struct rlimit rl;
    rlim_t want = MAX_PEERS + 64;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
        struct rlimit up = {rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max, rl.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &up) == 0) {
            job_nofile = rl;
            nofile_raised = 1;
        }
    }
    return 0;
}

struct ring_reader *ring_readers_accept(struct ring_readers *s, struct model *m)
{
    culeak_hub_service(s->hub);
    struct ring_reader *c = calloc(1, sizeof *c);
    if (c && !(c->ms = model_stream_open(m))) {
        free(c);
        c = NULL;
    }
    if (!c)
        return NULL; /* the rings wait for the next turn */
    /* the launched program's ring once it claimed it, then hand-overs in order */
    long i = culeak_hub_take(s->hub);
    if (i < 0) {
        model_stream_close(c->ms);
        free(c);
        return NULL;
    }
    c->ring = culeak_hub_ring(s->hub, (size_t)i);
    c->ring_i = (size_t)i;
    c->proc = -1;
    long pid = culeak_hub_pid(s->hub, (size_t)i);
    c->pid = pid;
    snprintf(c->tee_path, sizeof c->tee_path, "%s/conn-%u-%ld.culeak", s->copies, ++s->nreaders_total, pid);
    c->tee_fd = open(c->tee_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (c->tee_fd < 0)
        snprintf(c->tee_lost, sizeof c->tee_lost, "its copy could not be created: %s", strerror(errno));
    /* the stream's MAGIC is no record of the ring: the copy and the model start with it */
    if (c->tee_fd >= 0 && write(c->tee_fd, CULEAK_MAGIC, CULEAK_MAGIC_LEN) != CULEAK_MAGIC_LEN) {
        close(c->tee_fd);
        c->tee_fd = -1;
        snprintf(c->tee_lost, sizeof c->tee_lost, "its copy could not be written: %s", strerror(errno));
    }
    model_stream_feed(c->ms, (const uint8_t *)CULEAK_MAGIC, CULEAK_MAGIC_LEN);
    c->rings = s;
    return c;
}

static void stop_copy(struct ring_reader *c, const char *why)
{
    snprintf(c->tee_lost, sizeof c->tee_lost, "its copy stopped after %llu bytes: %s",
             (unsigned long long)c->tee_bytes, why);
    close(c->tee_fd);
    c->tee_fd = -1;
}

long ring_reader_pump(struct ring_reader *c, uint8_t *buf, size_t cap, int end_check)
{
    if (!c->ring)
        return 0;
    /* the process sees the console run (a hold at its start waits only for a console that runs) */
    __atomic_store_n(&c->ring->h->beat, c->ring->h->beat + 1, __ATOMIC_RELEASE);
    /* looked at before reading: what a process committed before it ended is read now */
    int live = !end_check || (c->rings->hub ? culeak_hub_writer_live(c->rings->hub, c->ring_i)
                                          : !__atomic_load_n(&c->ring->h->ended, __ATOMIC_ACQUIRE));
    const uint8_t *p;
    size_t n = culeak_ring_peek(c->ring, &p);
    if (n == 0 && live)
        return -2;
    if (n == 0) {
        /* events the process dropped after its last record (it ended while the console
         * was stopped): the LOST record it could not write, at the stream's end */
        uint64_t first, last, lost = culeak_ring_untold(c->ring, &first, &last);
        if (!lost || cap < CULEAK_REC_HEADROOM + 3 * CULEAK_UVARINT_MAX)
            return 0;
        culeak_ring_told(c->ring);
        uint8_t *q = buf + CULEAK_REC_HEADROOM;
        size_t k = culeak_put_u(q, lost);
        k += culeak_put_u(q + k, first);
        k += culeak_put_u(q + k, last);
        n = culeak_rec_finish(buf, CULEAK_REC_LOST, k);
    } else {
        if (n > cap)
            n = cap;
        memcpy(buf, p, n); /* the model reads a copy: the process can write its ring any time */
        culeak_ring_consume(c->ring, n);
    }
    if (c->tee_fd >= 0) {
        /* up to the limit: a copy cut there is still read up to the cut */
        uint64_t room = c->rings->copy_limit > c->rings->copy_total ? c->rings->copy_limit - c->rings->copy_total : 0;
        size_t want = (uint64_t)n < room ? n : (size_t)room, off = 0;
        while (off < want) {
            ssize_t w = write(c->tee_fd, buf + off, want - off);
            if (w <= 0) {
                if (w < 0 && errno == EINTR)
                    continue;
                stop_copy(c, w < 0 ? strerror(errno) : "a short write");
                break;
            }
            off += (size_t)w;
        }
        c->tee_bytes += off;
        c->rings->copy_total += off;
        if (c->tee_fd >= 0 && want < n)
            stop_copy(c, "the session's copies reached CULEAK_COPY_LIMIT");
    }
    return model_stream_feed(c->ms, buf, n) == MODEL_FEED_CORRUPT ? -3 : (long)n;
}

int ring_reader_flush_out(struct ring_reader *c)
{
    if (!c->ring)
        return -1;
    size_t off = 0;
    while (off < c->outq_len) {
        uint8_t type;
        const uint8_t *payload;
        size_t plen;
        long used = culeak_next_record(c->outq + off, c->outq_len - off, &type, &payload, &plen);
        if (used <= 0) { /* never: the queue holds whole records this file made */
            off = c->outq_len;
            break;
        }
        if (culeak_ring_cmd_put(c->ring, c->outq + off, (size_t)used) != 0)
            break;
        off += (size_t)used;
    }
    if (off) {
        memmove(c->outq, c->outq + off, c->outq_len - off);
        c->outq_len -= off;
        culeak_ring_wake_released(c->ring); /* a held thread takes the commands now */
    }
    return 0;
}

/* Queues one command record of vals. 0, or -1. */
static int queue_record(struct ring_reader *c, uint8_t type, const uint64_t *vals, size_t nvals)
{
    size_t cap = CULEAK_REC_HEADROOM + (nvals + 1) * CULEAK_UVARINT_MAX;
    if (c->outq_len + cap > RING_READER_OUTQ_MAX)
        return -1;
    if (c->outq_cap - c->outq_len < cap) {
        size_t ncap = c->outq_cap ? c->outq_cap : 4096;
        while (ncap - c->outq_len < cap)
            ncap *= 2;
        uint8_t *q = realloc(c->outq, ncap);
        if (!q)
            return -1;
        c->outq = q;
        c->outq_cap = ncap;
    }
    uint8_t *rec = c->outq + c->outq_len, *p = rec + CULEAK_REC_HEADROOM;
    size_t n = 0;
    for (size_t i = 0; i < nvals; i++)
        n += culeak_put_u(p + n, vals[i]);
    c->outq_len += culeak_rec_finish(rec, type, n);
    return 0;
}

int ring_reader_send(struct ring_reader *c, uint8_t type, const uint64_t *vals, size_t nvals)
{
    if (!c->ring)
        return -1;
    if (type == CULEAK_CMD_HOLD_NEW || type == CULEAK_CMD_HOLD_ALL) {
        uint32_t on = nvals && vals[0] != 0;
        __atomic_store_n(type == CULEAK_CMD_HOLD_NEW ? &c->ring->h->hold_new : &c->ring->h->hold_all, on,
                         __ATOMIC_RELEASE);
        if (type == CULEAK_CMD_HOLD_NEW) { /* the answer to HELLO: the start's hold is over */
            __atomic_store_n(&c->ring->h->answered, 1, __ATOMIC_RELEASE);
            /* now, not at the held thread's next look (100 ms): a job of many short
             * processes would wait that long for each one */
            culeak_ring_wake_released(c->ring);
        }
        return 0;
    }
    if (type == CULEAK_CMD_WATCH) { /* count, stacks...: in records that fit the area */
        uint64_t v[1 + WATCH_CHUNK];
        size_t count = nvals ? (size_t)(vals[0] < nvals - 1 ? vals[0] : nvals - 1) : 0;
        for (size_t i = 0; i < count; i += WATCH_CHUNK) {
            size_t k = count - i < WATCH_CHUNK ? count - i : WATCH_CHUNK;
            v[0] = k;
            memcpy(v + 1, vals + 1 + i, k * sizeof *v);
            if (queue_record(c, type, v, k + 1) != 0)
                return -1;
        }
    } else if (queue_record(c, type, vals, nvals) != 0) {
        return -1;
    }
    return ring_reader_flush_out(c);
}

int ring_readers_refusal(struct ring_readers *s, long *pid, char *why, size_t len)
{
    return s->hub ? culeak_hub_refusal(s->hub, pid, why, len) : 0;
}

void ring_reader_done(struct ring_reader *c)
{
    if (c->ring && c->rings && c->rings->hub)
        culeak_hub_release(c->rings->hub, c->ring_i); /* its slot for a later process */
    c->ring = NULL;
}

void ring_reader_let_go(struct ring_reader *c)
{
    if (!c->ring)
        return;
    __atomic_store_n(&c->ring->h->reader_gone, 1, __ATOMIC_RELEASE);
    culeak_ring_wake_released(c->ring);
}

void ring_reader_close(struct ring_reader *c)
{
    if (!c)
        return;
    if (c->tee_fd >= 0)
        close(c->tee_fd);
    model_stream_close(c->ms);
    free(c->outq);
    free(c);
}

void ring_readers_close(struct ring_readers *s)
{
    culeak_hub_free(s->hub); /* every process let go */
    s->hub = NULL;
    if (s->copies[0] && strcmp(s->copies, s->session) != 0)
        remove_dir(s->copies);
    if (s->session[0])
        remove_dir(s->session);
}
