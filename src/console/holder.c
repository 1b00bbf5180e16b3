/* The holder of the job's terminal (see holder.h). It keeps no state of the console: a
 * copy of the master descriptor, the read end of a pipe whose only writer is the console,
 * and the fallback path. The console's last word on the pipe names the output file; the
 * pipe closing without a word (the console died) means the fallback. */
#include "holder.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int holder_default_file(pid_t job, char *out, size_t outlen, char *err, size_t errlen)
{
    const char *state = getenv("XDG_STATE_HOME");
    const char *home = getenv("HOME");
    char dir[900];
    if (state && *state == '/')
        snprintf(dir, sizeof dir, "%s", state);
    else if (home && *home)
        snprintf(dir, sizeof dir, "%s/.local/state", home);
    else {
        snprintf(err, errlen, "neither XDG_STATE_HOME nor HOME is set");
        return -1;
    }
    /* mkdir -p: each missing level of the state directory, then culeak/ */
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        mkdir(dir, 0700);
        *p = '/';
    }
    mkdir(dir, 0700);
    size_t n = strlen(dir);
    snprintf(dir + n, sizeof dir - n, "/culeak");
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    snprintf(out, outlen, "%s/job-%d.log", dir, (int)job);
    return 0;
}

/* Every descriptor but a and b closed, 0-2 on /dev/null. */
static void keep_only(int a, int b)
{
    int lo = a < b ? a : b, hi = a < b ? b : a;
    for (int fd = 0; fd < lo; fd++)
        close(fd);
    for (int fd = lo + 1; fd < hi; fd++)
        close(fd);
    closefrom(hi + 1);
    for (int fd = 0; fd < 3; fd++)
        if (fd != a && fd != b && fcntl(fd, F_GETFD) < 0)
            open("/dev/null", O_RDWR);
}

static void write_out(int *out, const char *p, size_t n)
{
    while (n > 0 && *out >= 0) {
        ssize_t w = write(*out, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) { /* a full disk: the job's output is dropped, the job never blocks */
            close(*out);
            *out = -1;
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

static void holder_main(int master, int ctl, const char *fallback)
{
    char msg[1100];
    size_t mlen = 0;
    int job_closed = 0;
    for (;;) { /* attached: the console reads the job's output; wait for its last word */
        struct pollfd p[2] = {{ctl, POLLIN, 0}, {master, 0, 0}};
        /* the job closing its terminal ends nothing here: what it wrote last may still be
         * unread, and only the console's word (or its death) says who is to read it */
        if (poll(p, job_closed ? 1 : 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            _exit(1);
        }
        if (!job_closed && (p[1].revents & (POLLHUP | POLLERR | POLLNVAL)))
            job_closed = 1; /* from now on the master only reports its hang-up: watch ctl alone */
        if (!p[0].revents)
            continue;
        ssize_t r = read(ctl, msg + mlen, sizeof msg - 1 - mlen);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0 || (mlen += (size_t)r) == sizeof msg - 1)
            break;
    }
    close(ctl);
    msg[mlen] = 0;
    const char *target = mlen ? msg : fallback;
    int out = -1, opened = 0;
    char buf[65536];
    for (;;) {
        struct pollfd p = {master, POLLIN, 0};
        if (poll(&p, 1, -1) < 0 && errno != EINTR)
            break;
        ssize_t n = read(master, buf, sizeof buf);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            break; /* EIO: every process of the job closed the terminal */
        if (!opened && target[0]) { /* the file is made when there is something to put in it */
            out = open(target, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
            opened = 1;
        }
        write_out(&out, buf, (size_t)n);
    }
    _exit(0);
}

int holder_start(struct holder *h, int master, char *err, size_t errlen)
{
    int p[2];
    h->pid = 0;
    h->ctl = -1;
    if (pipe2(p, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "cannot start the holder of the job's terminal: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        /* a session of its own: the console's terminal going away signals nothing here */
        setsid();
        struct sigaction dfl = {.sa_handler = SIG_DFL}, ign = {.sa_handler = SIG_IGN};
        for (int s = 1; s < NSIG; s++)
            sigaction(s, &dfl, NULL);
        static const int ignored[] = {SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU};
        for (size_t i = 0; i < sizeof ignored / sizeof *ignored; i++)
            sigaction(ignored[i], &ign, NULL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        keep_only(master, p[0]);
        holder_main(master, p[0], h->fallback);
    }
    close(p[0]);
    h->pid = pid;
    h->ctl = p[1];
    return 0;
}

void holder_release(struct holder *h, const char *path)
{
    if (h->ctl < 0)
        return;
    if (path) { /* the path and its NUL: "" alone says discard */
        size_t n = strlen(path) + 1;
        if (write(h->ctl, path, n) != (ssize_t)n) {
            /* a pipe cannot take less than PIPE_BUF at once; the holder went away */
        }
    }
    close(h->ctl);
    h->ctl = -1;
}

void holder_reap(struct holder *h)
{
    int st;
    if (h->pid > 0 && waitpid(h->pid, &st, WNOHANG) == h->pid)
        h->pid = 0;
}
