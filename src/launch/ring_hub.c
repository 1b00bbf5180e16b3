/* The rings of a job and their hand-over (ring_hub.h). */
#include "ring_hub.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* 1 MiB: small enough to stay in the writer's cache as it goes round (4 MiB cost it a
 * quarter more per event), large enough for a few milliseconds of events */
#define DEFAULT_RING (1u << 20)
/* for the ring's descriptor, once a process connected: a process the scheduler keeps off
 * its processor between its connect and its send (a loaded machine) is still taken */
#define HANDOVER_WAIT_MS 2000
#define MAX_PENDING (CULEAK_HUB_POLLFDS - 1) /* connections whose ring is awaited */
#define MAX_RINGS 4096u /* mapped at once; a ring read to its end gives its slot back */
#define MAX_REFUSALS 64  /* told by name; more are counted */

struct pending {
    int fd;
    long pid;
    struct timespec since;
};

struct hub_ring {
    struct culeak_ring r;
    long pid;          /* the writer (SO_PEERCRED); 0: the header's, once claimed */
    uint64_t serial;   /* the order it came in */
    int taken;         /* given to the reader (culeak_hub_take) */
};

struct refusal {
    long pid;
    char why[120];
};

struct culeak_hub {
    int listen_fd, child_fd, console;
    /* /dev/null twice, closed at the descriptor limit to make room for a connection and
     * its ring's descriptor (neither stays open: a ring is read through its mapping) */
    int reserve[2];
    char dir[PATH_MAX], sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
    struct pending pend[MAX_PENDING];
    size_t npend;
    /* by slot, each ring allocated apart: a reader's pointer stays valid however many
     * come; NULL: a free slot, given to the next ring */
    struct hub_ring **rings;
    size_t n, cap, live; /* slots ever used, allocated, holding a ring */
    uint64_t serials;
    struct refusal refused[MAX_REFUSALS]; /* not yet told (culeak_hub_refusal) */
    size_t nrefused;
    unsigned long refused_total;
};

static size_t ring_size(void)
{
    const char *rs = getenv("CULEAK_RING_SIZE");
    unsigned long long size = rs && *rs ? strtoull(rs, NULL, 10) : 0;
    return size >= 4096 && size <= (1ull << 30) && !(size & (size - 1)) ? (size_t)size : DEFAULT_RING;
}

static void reserve_keep(struct culeak_hub *h)
{
    for (int i = 0; i < 2; i++)
        if (h->reserve[i] < 0)
            h->reserve[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

/* 1 when there was room to give */
static int reserve_give(struct culeak_hub *h)
{
    int gave = 0;
    for (int i = 0; i < 2; i++)
        if (h->reserve[i] >= 0) {
            close(h->reserve[i]);
            h->reserve[i] = -1;
            gave = 1;
        }
    return gave;
}

/* A process whose ring cannot be read: kept to be told (culeak_hub_refusal). */
static void refuse(struct culeak_hub *h, long pid, const char *why)
{
    h->refused_total++;
    if (h->nrefused < MAX_REFUSALS) {
        struct refusal *f = &h->refused[h->nrefused++];
        f->pid = pid;
        snprintf(f->why, sizeof f->why, "%s", why);
    }
}

/* The slot for a new ring: a free one, else one more. -1 at MAX_RINGS or out of memory. */
static long free_slot(struct culeak_hub *h)
{
    if (h->live >= MAX_RINGS)
        return -1;
    for (size_t i = 0; i < h->n; i++)
        if (!h->rings[i])
            return (long)i;
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 8;
        struct hub_ring **p = realloc(h->rings, cap * sizeof *p);
        if (!p)
            return -1;
        h->rings = p;
        h->cap = cap;
    }
    h->rings[h->n] = NULL;
    return (long)h->n++;
}

static int add_ring(struct culeak_hub *h, const struct culeak_ring *r, long pid)
{
    long i = free_slot(h);
    struct hub_ring *o = i < 0 ? NULL : malloc(sizeof *o);
    if (!o) {
        refuse(h, pid, h->live >= MAX_RINGS ? "4096 traced processes are read at once already" : "out of memory");
        return -1;
    }
    /* the writer learns who reads it: a held thread goes when this process is gone */
    __atomic_store_n(&r->h->reader_pid, (uint32_t)getpid(), __ATOMIC_RELEASE);
    __atomic_store_n(&r->h->console, (uint32_t)h->console, __ATOMIC_RELEASE);
    *o = (struct hub_ring){*r, pid, h->serials++, 0};
    h->rings[i] = o;
    h->live++;
    return 0;
}

/* A ring that will not be read: its writer stops tracing (it waits for no reader). */
static void let_go(struct culeak_ring *r)
{
    __atomic_store_n(&r->h->reader_gone, 1, __ATOMIC_RELEASE);
    culeak_ring_wake_released(r); /* a held thread goes now */
    culeak_ring_unmap(r);
}

/* Whether a hub's socket at path is dead: a socket nobody listens on (its culeak was
 * killed before it could remove it). */
static int socket_dead(const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path)
        return 0;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return 0;
    int dead = connect(fd, (struct sockaddr *)&a, sizeof a) != 0 && errno == ECONNREFUSED;
    close(fd);
    return dead;
}

/* In base: the directories of this user's hubs whose culeak was killed (SIGKILL leaves
 * them, their socket unlistened). One made less than a minute ago may be a hub starting
 * now, between its directory and its socket: it stays. */
void culeak_hub_sweep(const char *base)
{
    DIR *d = opendir(base);
    if (!d)
        return;
    struct dirent *e;
    time_t now = time(NULL);
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "culeak-", 7) != 0 || strlen(e->d_name) != 13)
            continue;
        char dir[PATH_MAX], sock[PATH_MAX + 16];
        struct stat st, ss;
        snprintf(dir, sizeof dir, "%s/%s", base, e->d_name);
        if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077) ||
            now - st.st_mtime < 60)
            continue;
        snprintf(sock, sizeof sock, "%s/ring", dir);
        if (lstat(sock, &ss) == 0 && (!S_ISSOCK(ss.st_mode) || !socket_dead(sock) || unlink(sock) != 0))
            continue;
        snprintf(sock, sizeof sock, "%s/stderr.log", dir); /* a console's, when it said nothing */
        if (lstat(sock, &ss) == 0 && S_ISREG(ss.st_mode) && ss.st_size == 0)
            unlink(sock);
        rmdir(dir); /* anything else in it: it stays */
    }
    closedir(d);
}

/* A private directory for the socket: its path must fit sun_path. */
static int make_dir(struct culeak_hub *h)
{
    const char *bases[] = {getenv("XDG_RUNTIME_DIR"), getenv("TMPDIR"), "/tmp"};
    for (size_t i = 0; i < sizeof bases / sizeof *bases; i++) {
        struct stat st;
        if (!bases[i] || bases[i][0] != '/' || stat(bases[i], &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        culeak_hub_sweep(bases[i]);
        int n = snprintf(h->dir, sizeof h->dir, "%s/culeak-XXXXXX", bases[i]);
        if (n <= 0 || (size_t)n + 6 >= sizeof h->sock || !mkdtemp(h->dir))
            continue;
        memcpy(h->sock, h->dir, (size_t)n);
        memcpy(h->sock + n, "/ring", 6);
        return 0;
    }
    h->dir[0] = 0;
    return -1;
}

struct culeak_hub *culeak_hub_new(int console, char *err, size_t len)
{
    struct culeak_hub *h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    h->listen_fd = h->child_fd = -1;
    h->console = console;
    h->reserve[0] = h->reserve[1] = -1; /* taken at the first service: the reader sets up first */
    if (make_dir(h) != 0) {
        snprintf(err, len, "cannot make a private directory for the job's rings: %s", strerror(errno));
        free(h);
        return NULL;
    }
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", h->sock);
    struct culeak_ring r;
    h->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (h->listen_fd < 0 || bind(h->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(h->listen_fd, 128) != 0 || culeak_ring_create(ring_size(), &h->child_fd, &r) != 0) {
        snprintf(err, len, "cannot set up the job's ring: %s", strerror(errno));
        culeak_hub_free(h);
        return NULL;
    }
    if (add_ring(h, &r, 0) != 0) {
        h->nrefused = 0;
        snprintf(err, len, "out of memory");
        culeak_ring_unmap(&r);
        culeak_hub_free(h);
        return NULL;
    }
    return h;
}

int culeak_hub_child_env(struct culeak_hub *h)
{
    char fd[16];
    snprintf(fd, sizeof fd, "%d", h->child_fd);
    if (fcntl(h->child_fd, F_SETFD, 0) != 0)
        return -1;
    setenv("CULEAK_RING_FD", fd, 1);
    setenv("CULEAK_RING_SOCKET", h->sock, 1);
    return 0;
}

void culeak_hub_started(struct culeak_hub *h)
{
    if (h->child_fd >= 0)
        close(h->child_fd);
    h->child_fd = -1;
}

const char *culeak_hub_socket(const struct culeak_hub *h) { return h->sock; }
const char *culeak_hub_dir(const struct culeak_hub *h) { return h->dir; }

size_t culeak_hub_pollfds(const struct culeak_hub *h, struct pollfd *fds, size_t max)
{
    size_t n = 0;
    if (h->listen_fd >= 0 && n < max)
        fds[n++] = (struct pollfd){.fd = h->listen_fd, .events = POLLIN};
    for (size_t i = 0; i < h->npend && n < max; i++)
        fds[n++] = (struct pollfd){.fd = h->pend[i].fd, .events = POLLIN};
    return n;
}

static long ms_since(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - t->tv_sec) * 1000L + (now.tv_nsec - t->tv_nsec) / 1000000L;
}

/* The ring a connected process sent (SCM_RIGHTS), if it came: 1 done with the
 * connection (ring taken or not), 0 not yet. */
/* Why a descriptor could not be had: at the limit, the limit named. */
static void refuse_errno(struct culeak_hub *h, long pid, int err, const char *what)
{
    char why[120];
    struct rlimit rl;
    if ((err == EMFILE || err == 0) && getrlimit(RLIMIT_NOFILE, &rl) == 0)
        snprintf(why, sizeof why, "%s: culeak's descriptor limit (RLIMIT_NOFILE %llu) is reached", what,
                 (unsigned long long)rl.rlim_cur);
    else
        snprintf(why, sizeof why, "%s: %s", what, strerror(err));
    refuse(h, pid, why);
}

/* Takes the one descriptor a peer sends with its byte, with room made for it (the
 * reserve given up: take_handover takes it back). The byte count, or -1 with errno. */
static ssize_t recv_fd(struct culeak_hub *h, int conn, char *byte, int *fd, int *truncated)
{
    char ctl[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {byte, 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    reserve_give(h);
    ssize_t k = recvmsg(conn, &m, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    struct cmsghdr *cm = k == 1 ? CMSG_FIRSTHDR(&m) : NULL;
    *fd = -1;
    /* the kernel drops a descriptor that finds no room: MSG_CTRUNC then */
    *truncated = k == 1 && (m.msg_flags & MSG_CTRUNC);
    if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len >= CMSG_LEN(sizeof(int)))
        memcpy(fd, CMSG_DATA(cm), sizeof *fd); /* one fits the buffer: the kernel closes any more */
    return k;
}

static int take_ring(struct culeak_hub *h, const struct pending *p)
{
    char byte;
    int fd, truncated;
    ssize_t k = recv_fd(h, p->fd, &byte, &fd, &truncated);
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return 0;
    if (fd < 0) {
        if (truncated) /* the process sent its ring: it believes it is read */
            refuse_errno(h, p->pid, 0, "its ring could not be received");
        return 1;
    }
    struct culeak_ring r;
    if (!culeak_ring_is_ring(fd)) {
        close(fd);
        return 1; /* not culeak's: no traced process */
    }
    if (culeak_ring_map(fd, &r) != 0)
        refuse_errno(h, p->pid, errno, "its ring could not be mapped");
    else if (add_ring(h, &r, p->pid) != 0)
        let_go(&r);
    close(fd);
    return 1;
}

static int take_handover(struct culeak_hub *h, const struct pending *p)
{
    int r = take_ring(h, p);
    reserve_keep(h);
    return r;
}

static void accept_all(struct culeak_hub *h)
{
    int conn;
    for (;;) {
        conn = accept4(h->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (conn < 0 && errno == EINTR)
            continue;
        /* at the limit: the reserve makes room (taken back once the ring is in) */
        if (conn < 0 && (errno == EMFILE || errno == ENFILE) && reserve_give(h))
            continue;
        if (conn < 0)
            break;
        struct ucred cr;
        socklen_t crl = sizeof cr;
        if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cr, &crl) != 0 || cr.uid != geteuid()) {
            close(conn); /* another user's */
            reserve_keep(h);
            continue;
        }
        struct pending p = {conn, (long)cr.pid, {0, 0}};
        /* a process sends its ring right after it connects: it is there already */
        if (take_handover(h, &p)) {
            close(conn);
            continue;
        }
        if (h->npend == MAX_PENDING) { /* silent peers: the one waiting longest goes */
            close(h->pend[0].fd);
            memmove(h->pend, h->pend + 1, (MAX_PENDING - 1) * sizeof *h->pend);
            h->npend--;
        }
        clock_gettime(CLOCK_MONOTONIC, &p.since);
        h->pend[h->npend++] = p;
    }
}

size_t culeak_hub_service(struct culeak_hub *h)
{
    uint64_t before = h->serials;
    reserve_keep(h);
    if (h->listen_fd >= 0)
        accept_all(h);
    for (size_t i = 0; i < h->npend;) {
        struct pending *p = &h->pend[i];
        int late = 0;
        if (take_handover(h, p) || (late = ms_since(&p->since) > HANDOVER_WAIT_MS)) {
            if (late)
                refuse(h, p->pid, "its ring did not come within 2 s of its connection");
            close(p->fd);
            memmove(p, p + 1, (h->npend - i - 1) * sizeof *p); /* oldest first */
            h->npend--;
        } else {
            i++;
        }
    }
    return (size_t)(h->serials - before);
}

int culeak_hub_pending(const struct culeak_hub *h) { return h->npend > 0; }

size_t culeak_hub_count(const struct culeak_hub *h) { return h->n; }

struct culeak_ring *culeak_hub_ring(struct culeak_hub *h, size_t i)
{
    return i < h->n && h->rings[i] ? &h->rings[i]->r : NULL;
}

long culeak_hub_pid(const struct culeak_hub *h, size_t i)
{
    const struct hub_ring *o = i < h->n ? h->rings[i] : NULL;
    if (!o)
        return 0;
    return o->pid ? o->pid : (long)__atomic_load_n(&o->r.h->pid, __ATOMIC_ACQUIRE);
}

long culeak_hub_take(struct culeak_hub *h)
{
    long best = -1;
    for (size_t i = 0; i < h->n; i++) {
        const struct hub_ring *o = h->rings[i];
        /* the launched program's ring is its once it claimed it */
        if (o && !o->taken && culeak_hub_pid(h, i) != 0 && (best < 0 || o->serial < h->rings[best]->serial))
            best = (long)i;
    }
    if (best >= 0)
        h->rings[best]->taken = 1;
    return best;
}

void culeak_hub_release(struct culeak_hub *h, size_t i)
{
    if (i >= h->n || !h->rings[i])
        return;
    let_go(&h->rings[i]->r);
    free(h->rings[i]);
    h->rings[i] = NULL;
    h->live--;
}

int culeak_hub_refusal(struct culeak_hub *h, long *pid, char *why, size_t len)
{
    if (!h->nrefused)
        return 0;
    *pid = h->refused[0].pid;
    snprintf(why, len, "%s", h->refused[0].why);
    memmove(h->refused, h->refused + 1, --h->nrefused * sizeof *h->refused);
    return 1;
}

unsigned long culeak_hub_refused(const struct culeak_hub *h) { return h->refused_total; }

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

int culeak_hub_writer_live(const struct culeak_hub *h, size_t i)
{
    long pid = culeak_hub_pid(h, i);
    return pid > 0 && !__atomic_load_n(&h->rings[i]->r.h->ended, __ATOMIC_ACQUIRE) && alive(pid);
}

void culeak_hub_free(struct culeak_hub *h)
{
    if (!h)
        return;
    if (h->listen_fd >= 0)
        close(h->listen_fd);
    for (size_t i = 0; i < h->npend; i++)
        close(h->pend[i].fd);
    culeak_hub_started(h);
    for (size_t i = 0; i < h->n; i++)
        culeak_hub_release(h, i);
    free(h->rings);
    reserve_give(h);
    if (h->sock[0])
        unlink(h->sock);
    if (h->dir[0])
        rmdir(h->dir);
    free(h);
}
