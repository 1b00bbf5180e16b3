/* `culeak record --pid PID -o FILE`: attach to a running process and write its stream to
 * FILE until the process ends, or until culeak is interrupted (SIGINT, SIGTERM, SIGHUP),
 * which detaches: the process runs on untraced. The stream comes over a Unix socket in a
 * directory only this user can enter, from that very process (SO_PEERCRED: user and pid;
 * the shim checks culeak's user in turn). */
#include "commands.h"
#include "inject.h"
#include "options.h"
#include "record_pid.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig) { stop_signal = sig; }

struct endpoint {
    char dir[1024];
    char path[1100];
    int fd;
};

static int endpoint_open(struct endpoint *e, char *err, size_t len)
{
    const char *base = getenv("XDG_RUNTIME_DIR");
    if (!base || !*base || access(base, W_OK) != 0)
        base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    snprintf(e->dir, sizeof e->dir, "%s/culeak-attach-XXXXXX", base);
    if (!mkdtemp(e->dir)) { /* mode 0700: only this user reaches the socket */
        snprintf(err, len, "cannot create a directory in %s: %s", base, strerror(errno));
        return -1;
    }
    snprintf(e->path, sizeof e->path, "%s/s", e->dir);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    e->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (strlen(e->path) >= sizeof a.sun_path || e->fd < 0) {
        snprintf(err, len, "cannot make a socket in %s", e->dir);
        rmdir(e->dir);
        return -1;
    }
    strcpy(a.sun_path, e->path);
    if (bind(e->fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(e->fd, 4) != 0) {
        snprintf(err, len, "cannot listen on %s: %s", e->path, strerror(errno));
        close(e->fd);
        rmdir(e->dir);
        return -1;
    }
    return 0;
}

static void endpoint_close(struct endpoint *e)
{
    if (e->fd >= 0)
        close(e->fd);
    unlink(e->path);
    rmdir(e->dir);
}

/* The attached process's connection, within timeout_s: -1 when it did not come. */
static int accept_from(struct endpoint *e, pid_t pid, int timeout_s)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct pollfd p = {e->fd, POLLIN, 0};
        int r = poll(&p, 1, 200);
        if (stop_signal)
            return -1;
        if (r > 0) {
            int fd = accept4(e->fd, NULL, NULL, SOCK_CLOEXEC);
            struct ucred cred;
            socklen_t clen = sizeof cred;
            if (fd >= 0 && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0 && cred.uid == geteuid() &&
                cred.pid == pid)
                return fd;
            if (fd >= 0)
                close(fd); /* not the process attached to */
        }
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > timeout_s)
            return -1;
    }
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int record_pid(const struct cli_command *cmd, pid_t pid, const char *out, int timeout_s)
{
    char err[1200];
    if (culeak_attach_precheck(pid, err, sizeof err) != 0 || !culeak_attach_debugger(err, sizeof err)) {
        cli_fail(cmd, "%s", err);
        return 1;
    }
    /* a recording holds the program's arguments: mode 0600, never through a link */
    int ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (ofd < 0) {
        cli_fail(cmd, "cannot write %s: %s", out, strerror(errno));
        return 1;
    }
    struct endpoint e = {.fd = -1};
    if (endpoint_open(&e, err, sizeof err) != 0) {
        cli_fail(cmd, "%s", err);
        close(ofd);
        unlink(out);
        return 1;
    }
    struct sigaction sa = {.sa_handler = on_stop};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    int r = culeak_inject(pid, e.path, timeout_s, err, sizeof err);
    int conn = r == 0 ? accept_from(&e, pid, timeout_s) : -1;
    endpoint_close(&e);
    if (conn < 0) {
        if (r == 0)
            snprintf(err, sizeof err, "pid %d did not connect after the attach%s", (int)pid,
                     stop_signal ? " (interrupted)" : "");
        cli_fail(cmd, "%s", err);
        close(ofd);
        unlink(out);
        return 1;
    }
    fprintf(stderr, "culeak record: attached to pid %d; recording to %s (Ctrl-C detaches)\n", (int)pid, out);
    static char buf[1 << 16];
    int failed = 0;
    while (!stop_signal) {
        ssize_t k = read(conn, buf, sizeof buf);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        if (write_all(ofd, buf, (size_t)k) != 0) {
            cli_fail(cmd, "cannot write %s: %s; detached, pid %d runs on", out, strerror(errno), (int)pid);
            failed = 1;
            break;
        }
    }
    close(conn); /* the process stops tracing and runs on */
    if (close(ofd) != 0 && !failed) {
        cli_fail(cmd, "cannot write %s: %s", out, strerror(errno));
        failed = 1;
    }
    int st = 0;
    if (!failed && !stop_signal) {
        /* the stream ended: the process exited, or the shim stopped */
        for (int i = 0; i < 100 && !culeak_proc_ended(pid, &st); i++) {
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (culeak_proc_ended(pid, &st))
            fprintf(stderr, "culeak record: pid %d ended; its recording is %s\n", (int)pid, out);
        else
            fprintf(stderr, "culeak record: pid %d stopped sending (see its stderr); it runs on\n", (int)pid);
    } else if (!failed)
        fprintf(stderr, "culeak record: detached from pid %d: it runs on; its recording is %s\n", (int)pid, out);
    return failed;
}
