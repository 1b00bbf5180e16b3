/* The console's listening socket in a private directory; connections of the job. */
#include "server.h"
#include "wire.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_PEERS 4096u /* processes connected at once */

static struct rlimit job_nofile; /* the limit before server_open raised it: the job's */
static int nofile_raised;

void server_job_limits(void)
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

/* In dir (private to this user): the sockets and session directories of consoles that no
 * longer run (a console killed with SIGKILL cannot clean up after itself). */
static void remove_dead_sessions(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        int pid = 0, n = 0;
        int sock = sscanf(e->d_name, "console-%d.sock%n", &pid, &n) == 1 && !e->d_name[n];
        int session = !sock && sscanf(e->d_name, "session-%d%n", &pid, &n) == 1 && !e->d_name[n];
        if ((!sock && !session) || pid <= 0 || pid == (int)getpid() || kill(pid, 0) == 0 || errno != ESRCH)
            continue;
        char p[PATH_MAX + 300];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (sock)
            unlink(p);
        else
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

int server_open(struct server *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->lfd = s->reserve_fd = -1;
    const char *rt = getenv("XDG_RUNTIME_DIR");
    struct stat st;
    if (rt && *rt && stat(rt, &st) == 0 && S_ISDIR(st.st_mode) && access(rt, W_OK) == 0)
        snprintf(s->dir, sizeof s->dir, "%s/culeak", rt);
    else
        snprintf(s->dir, sizeof s->dir, "/tmp/culeak-%u", (unsigned)getuid());
    if (private_dir(s->dir, err, errlen) != 0)
        return -1;
    remove_dead_sessions(s->dir);
    snprintf(s->path, sizeof s->path, "%s/console-%d.sock", s->dir, (int)getpid());
    snprintf(s->session, sizeof s->session, "%s/session-%d", s->dir, (int)getpid());
    if (private_dir(s->session, err, errlen) != 0)
        return -1;
    char cache[1024];
    if (cache_dir(cache, sizeof cache) == 0) {
        remove_dead_sessions(cache);
        snprintf(s->copies, sizeof s->copies, "%s/session-%d", cache, (int)getpid());
    }
    if (!s->copies[0] || private_dir(s->copies, err, errlen) != 0) /* no cache: beside the socket */
        snprintf(s->copies, sizeof s->copies, "%s", s->session);
    s->copy_limit = copy_limit();
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(s->path) >= sizeof sa.sun_path) {
        snprintf(err, errlen, "socket path too long: %s", s->path);
        return -1;
    }
    strcpy(sa.sun_path, s->path);
    unlink(s->path);
    s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s->lfd < 0 || bind(s->lfd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(s->lfd, 64) != 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", s->path, strerror(errno));
        return -1;
    }
    chmod(s->path, 0600);
    s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    /* each peer holds two descriptors (its socket, its copy), and some stay for the rest:
     * the soft limit is raised as far as the hard one lets, for MAX_PEERS peers */
    struct rlimit rl;
    rlim_t want = 2 * MAX_PEERS + 64, lim = 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
            struct rlimit up = {rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max, rl.rlim_max};
            if (setrlimit(RLIMIT_NOFILE, &up) == 0) {
                job_nofile = rl;
                nofile_raised = 1;
                rl.rlim_cur = up.rlim_cur;
            }
        }
        lim = rl.rlim_cur;
    }
    s->max_peers = lim == RLIM_INFINITY || lim >= want ? MAX_PEERS : lim > 64 + 2 ? (unsigned)(lim - 64) / 2 : 1;
    return 0;
}

/* Takes the pending connection and closes it: too many peers, or no descriptor left
 * (the reserved one is given up for the moment). */
static void turn_away(struct server *s)
{
    int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE) && s->reserve_fd >= 0) {
        close(s->reserve_fd);
        fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0)
            close(fd);
        s->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        return;
    }
    if (fd >= 0)
        close(fd);
}

struct conn *server_accept(struct server *s, struct model *m, int *refused)
{
    *refused = 0;
    if (s->nlive >= s->max_peers) {
        turn_away(s);
        *refused = 2;
        return NULL;
    }
    int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
        turn_away(s);
        *refused = 2;
        return NULL;
    }
    if (fd < 0)
        return NULL;
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != getuid()) {
        close(fd);
        *refused = 1;
        return NULL;
    }
    struct conn *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        return NULL;
    }
    c->fd = fd;
    c->proc = -1;
    if (!(c->ms = model_stream_open(m))) {
        close(fd);
        free(c);
        return NULL;
    }
    /* a big receive buffer lets the job run ahead while the console draws */
    int big = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    snprintf(c->tee_path, sizeof c->tee_path, "%s/conn-%u-%d.culeak", s->copies, ++s->nconn_total, (int)cred.pid);
    c->tee_fd = open(c->tee_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (c->tee_fd < 0)
        snprintf(c->tee_lost, sizeof c->tee_lost, "its copy could not be created: %s", strerror(errno));
    c->srv = s;
    s->nlive++;
    return c;
}

static void stop_copy(struct conn *c, const char *why)
{
    snprintf(c->tee_lost, sizeof c->tee_lost, "its copy stopped after %llu bytes: %s",
             (unsigned long long)c->tee_bytes, why);
    close(c->tee_fd);
    c->tee_fd = -1;
}

long conn_pump(struct conn *c, uint8_t *buf, size_t cap)
{
    ssize_t n = read(c->fd, buf, cap);
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -2 : -1;
    if (n == 0)
        return 0;
    if (c->tee_fd >= 0) {
        /* up to the limit: a copy cut there is still read up to the cut */
        uint64_t room = c->srv->copy_limit > c->srv->copy_total ? c->srv->copy_limit - c->srv->copy_total : 0;
        size_t want = (uint64_t)n < room ? (size_t)n : (size_t)room, off = 0;
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
        c->srv->copy_total += off;
        if (c->tee_fd >= 0 && want < (size_t)n)
            stop_copy(c, "the session's copies reached CULEAK_COPY_LIMIT");
    }
    return model_stream_feed(c->ms, buf, (size_t)n) == MODEL_FEED_CORRUPT ? -3 : n;
}

int conn_flush_out(struct conn *c)
{
    if (c->fd < 0)
        return -1;
    size_t off = 0;
    while (off < c->outq_len) {
        ssize_t w = send(c->fd, c->outq + off, c->outq_len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (w <= 0)
            return -1;
        off += (size_t)w;
    }
    memmove(c->outq, c->outq + off, c->outq_len - off);
    c->outq_len -= off;
    return 0;
}

int conn_send(struct conn *c, uint8_t type, const uint64_t *vals, size_t nvals)
{
    if (c->fd < 0)
        return -1;
    size_t cap = CULEAK_REC_HEADROOM + (nvals + 1) * CULEAK_UVARINT_MAX;
    if (c->outq_len + cap > CONN_OUTQ_MAX) {
        shutdown(c->fd, SHUT_RDWR); /* it never reads: its next read ends it */
        return -1;
    }
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
    return conn_flush_out(c);
}

void conn_close(struct conn *c)
{
    if (!c)
        return;
    if (c->fd >= 0)
        close(c->fd);
    if (c->tee_fd >= 0)
        close(c->tee_fd);
    if (c->srv && c->srv->nlive)
        c->srv->nlive--;
    model_stream_close(c->ms);
    free(c->outq);
    free(c);
}

void server_close(struct server *s)
{
    if (s->lfd >= 0)
        close(s->lfd);
    s->lfd = -1;
    if (s->reserve_fd >= 0)
        close(s->reserve_fd);
    s->reserve_fd = -1;
    if (s->path[0])
        unlink(s->path);
    if (s->copies[0] && strcmp(s->copies, s->session) != 0)
        remove_dir(s->copies);
    if (s->session[0])
        remove_dir(s->session);
}
