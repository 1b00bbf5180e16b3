/* The reader of a launched job's rings (collect.h). The hand-over socket lives in a
 * directory only this user can enter (mkdtemp, 0700; under XDG_RUNTIME_DIR, else TMPDIR,
 * else /tmp), and each peer is checked with SO_PEERCRED as well. The rings are read every
 * poll: a writer never wakes the reader, it only waits (bounded) when its ring is full. */
#include "collect.h"
#include "outpath.h"
#include "ring.h"
#include "wire.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* 1 MiB: small enough to stay in the writer's cache as it goes round (4 MiB cost it a
 * quarter more per event), large enough for a few milliseconds of events */
#define DEFAULT_RING (1u << 20)
#define HANDOVER_WAIT_MS 200 /* for the ring's descriptor, once a process connected */

struct ring_out {
    struct culeak_ring r;
    long pid;   /* the writer (SO_PEERCRED); 0: the header's, once claimed */
    int out;    /* the recording; -1: not made yet */
    int failed; /* it could not be made: what the ring holds is dropped */
};

struct culeak_collector {
    int listen_fd, child_fd;
    char dir[PATH_MAX], sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
    struct ring_out *rings;
    size_t n, cap;
};

static size_t ring_size(void)
{
    const char *rs = getenv("CULEAK_RING_SIZE");
    unsigned long long size = rs && *rs ? strtoull(rs, NULL, 10) : 0;
    return size >= 4096 && size <= (1ull << 30) && !(size & (size - 1)) ? (size_t)size : DEFAULT_RING;
}

static int add_ring(struct culeak_collector *c, const struct culeak_ring *r, long pid)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        struct ring_out *p = realloc(c->rings, cap * sizeof *p);
        if (!p)
            return -1;
        c->rings = p;
        c->cap = cap;
    }
    c->rings[c->n++] = (struct ring_out){*r, pid, -1, 0};
    return 0;
}

/* A private directory for the socket: its path must fit sun_path. */
static int make_dir(struct culeak_collector *c)
{
    const char *bases[] = {getenv("XDG_RUNTIME_DIR"), getenv("TMPDIR"), "/tmp"};
    for (size_t i = 0; i < sizeof bases / sizeof *bases; i++) {
        struct stat st;
        if (!bases[i] || bases[i][0] != '/' || stat(bases[i], &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        int n = snprintf(c->dir, sizeof c->dir, "%s/culeak-XXXXXX", bases[i]);
        if (n <= 0 || (size_t)n + 6 >= sizeof c->sock || !mkdtemp(c->dir))
            continue;
        memcpy(c->sock, c->dir, (size_t)n);
        memcpy(c->sock + n, "/ring", 6);
        return 0;
    }
    return -1;
}

struct culeak_collector *culeak_collector_new(void)
{
    struct culeak_collector *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->listen_fd = c->child_fd = -1;
    struct culeak_ring r;
    if (make_dir(c) != 0) {
        fprintf(stderr, "culeak: cannot make a private directory for the job's rings: %s\n", strerror(errno));
        free(c);
        return NULL;
    }
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", c->sock);
    c->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (c->listen_fd < 0 || bind(c->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(c->listen_fd, 128) != 0 ||
        culeak_ring_create(ring_size(), &c->child_fd, &r) != 0 || add_ring(c, &r, 0) != 0) {
        fprintf(stderr, "culeak: cannot set up the job's ring: %s\n", strerror(errno));
        culeak_collector_free(c);
        return NULL;
    }
    return c;
}

int culeak_collector_child_env(struct culeak_collector *c)
{
    char fd[16];
    snprintf(fd, sizeof fd, "%d", c->child_fd);
    if (fcntl(c->child_fd, F_SETFD, 0) != 0)
        return -1;
    setenv("CULEAK_RING_FD", fd, 1);
    setenv("CULEAK_RING_SOCKET", c->sock, 1);
    return 0;
}

void culeak_collector_started(struct culeak_collector *c)
{
    if (c->child_fd >= 0)
        close(c->child_fd);
    c->child_fd = -1;
}

/* The ring a connected process sends (SCM_RIGHTS), from this user only. */
static void take_handover(struct culeak_collector *c, int conn)
{
    struct ucred cr;
    socklen_t crl = sizeof cr;
    if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cr, &crl) != 0 || cr.uid != geteuid())
        return;
    struct pollfd p = {conn, POLLIN, 0};
    if (poll(&p, 1, HANDOVER_WAIT_MS) <= 0)
        return;
    char byte, ctl[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {&byte, 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    if (recvmsg(conn, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT) != 1)
        return;
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof(int)))
        return;
    int fd;
    memcpy(&fd, CMSG_DATA(cm), sizeof fd);
    struct culeak_ring r;
    if (culeak_ring_is_ring(fd) && culeak_ring_map(fd, &r) == 0 && add_ring(c, &r, (long)cr.pid) != 0)
        culeak_ring_unmap(&r);
    close(fd);
}

static void accept_all(struct culeak_collector *c)
{
    int conn;
    while ((conn = accept4(c->listen_fd, NULL, NULL, SOCK_CLOEXEC)) >= 0 || errno == EINTR) {
        if (conn >= 0) {
            take_handover(c, conn);
            close(conn);
        }
    }
}

static long writer_pid(const struct ring_out *o)
{
    return o->pid ? o->pid : (long)__atomic_load_n(&o->r.h->pid, __ATOMIC_ACQUIRE);
}

/* The recording of a ring, at the path its writer put in the header. */
static void open_out(struct ring_out *o)
{
    char path[CULEAK_RING_PATH_MAX], made[CULEAK_RING_PATH_MAX + 32];
    memcpy(path, o->r.h->path, sizeof path);
    path[sizeof path - 1] = 0;
    o->failed = 1;
    if (path[0] != '/')
        return; /* no recording asked for */
    o->out = culeak_create_recording(path, o->r.h->path_shared != 0, writer_pid(o), made, sizeof made);
    if (o->out < 0)
        fprintf(stderr, "culeak: cannot create %s (%s): process %ld is not recorded\n", made, strerror(errno),
                writer_pid(o));
    o->failed = o->out < 0;
    /* the stream's MAGIC is no record: the ring starts at HELLO */
    if (o->out >= 0 && write(o->out, CULEAK_MAGIC, CULEAK_MAGIC_LEN) != CULEAK_MAGIC_LEN) {
        fprintf(stderr, "culeak: cannot write %s (%s): process %ld is not recorded\n", made, strerror(errno),
                writer_pid(o));
        close(o->out);
        o->out = -1;
        o->failed = 1;
    }
}

static void write_full(struct ring_out *o, const uint8_t *p, size_t n)
{
    while (n > 0 && o->out >= 0) {
        ssize_t k = write(o->out, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            fprintf(stderr, "culeak: cannot write the recording of process %ld (%s): it is cut off here\n",
                    writer_pid(o), k < 0 ? strerror(errno) : "short write");
            close(o->out);
            o->out = -1;
            return;
        }
        p += k;
        n -= (size_t)k;
    }
}

static size_t drain(struct ring_out *o)
{
    const uint8_t *p;
    size_t n, total = 0;
    while ((n = culeak_ring_peek(&o->r, &p)) > 0) {
        if (o->out < 0 && !o->failed)
            open_out(o);
        write_full(o, p, n);
        culeak_ring_consume(&o->r, n);
        total += n;
    }
    return total;
}

size_t culeak_collector_poll(struct culeak_collector *c, int timeout_ms)
{
    struct pollfd p = {c->listen_fd, POLLIN, 0};
    if (poll(&p, 1, timeout_ms) > 0)
        accept_all(c);
    size_t total = 0;
    for (size_t i = 0; i < c->n; i++)
        total += drain(&c->rings[i]);
    return total;
}

/* Whether pid runs (a zombie has ended). */
static int alive(long pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    const char *paren = strrchr(buf, ')'); /* the name may hold anything */
    return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

int culeak_collector_busy(struct culeak_collector *c)
{
    for (size_t i = 0; i < c->n; i++) {
        const struct ring_out *o = &c->rings[i];
        long pid = writer_pid(o);
        if (pid > 0 && !__atomic_load_n(&o->r.h->ended, __ATOMIC_ACQUIRE) && alive(pid))
            return 1;
    }
    return 0;
}

/* Events the writer dropped after its last record (it ended while its reader was
 * stopped): the LOST record it could not write, at the recording's end. */
static void say_last_gap(struct ring_out *o)
{
    uint64_t first, last, n = culeak_ring_untold(&o->r, &first, &last);
    if (!n || o->out < 0)
        return;
    uint8_t rec[CULEAK_REC_HEADROOM + 3 * CULEAK_UVARINT_MAX], *p = rec + CULEAK_REC_HEADROOM;
    size_t k = culeak_put_u(p, n);
    k += culeak_put_u(p + k, first);
    k += culeak_put_u(p + k, last);
    write_full(o, rec, culeak_rec_finish(rec, CULEAK_REC_LOST, k));
}

void culeak_collector_free(struct culeak_collector *c)
{
    if (!c)
        return;
    if (c->listen_fd >= 0) {
        culeak_collector_poll(c, 0);
        close(c->listen_fd);
    }
    culeak_collector_started(c);
    for (size_t i = 0; i < c->n; i++) {
        say_last_gap(&c->rings[i]);
        if (c->rings[i].out >= 0)
            close(c->rings[i].out);
        culeak_ring_unmap(&c->rings[i].r);
    }
    free(c->rings);
    if (c->sock[0])
        unlink(c->sock);
    if (c->dir[0])
        rmdir(c->dir);
    free(c);
}
