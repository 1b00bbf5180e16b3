/* The job in its own pseudo-terminal and session: its output never reaches the console's
 * terminal, and the console's Ctrl-C never reaches it. */
#include "pty.h"
#include "launch/launch.h"
#include "launch/inject.h"
#include "ring_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

int job_start(struct job *j, char **argv, struct culeak_hub *hub, int depth, int rows, int cols, char *err,
              size_t errlen)
{
    memset(j, 0, sizeof *j);
    j->master = -1;
    j->holder.ctl = -1;
    struct winsize ws = {.ws_row = (unsigned short)(rows > 0 ? rows : 24),
                         .ws_col = (unsigned short)(cols > 0 ? cols : 80)};
    int errpipe[2];
    if (pipe2(errpipe, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = forkpty(&j->master, NULL, NULL, &ws);
    if (pid < 0) {
        snprintf(err, errlen, "cannot create a pseudo-terminal: %s", strerror(errno));
        close(errpipe[0]);
        close(errpipe[1]);
        return -1;
    }
    if (pid == 0) {
        close(errpipe[0]);
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        for (int s = 1; s < NSIG; s++)
            sigaction(s, &dfl, NULL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        ring_readers_job_limits(); /* the console's own limit is not the job's */
        if (culeak_setenv_for_child(NULL, depth) != 0 || culeak_hub_child_env(hub) != 0) {
            dprintf(errpipe[1], "cannot find libculeak.so");
            _exit(127);
        }
        /* the job's processes (children too) wait at their first allocations until the
         * console has said what to watch: a breakpoint set before they start catches them */
        setenv("CULEAK_HOLD_AT_START", "1", 1);
        execvp(argv[0], argv);
        dprintf(errpipe[1], "cannot run %s: %s", argv[0], strerror(errno));
        _exit(127);
    }
    close(errpipe[1]);
    culeak_hub_started(hub);
    char msg[512];
    ssize_t n;
    while ((n = read(errpipe[0], msg, sizeof msg - 1)) < 0 && errno == EINTR)
        ;
    close(errpipe[0]);
    j->pid = pid;
    fcntl(j->master, F_SETFL, fcntl(j->master, F_GETFL) | O_NONBLOCK);
    fcntl(j->master, F_SETFD, FD_CLOEXEC);
    if (n > 0) {
        msg[n] = 0;
        snprintf(err, errlen, "%s", msg);
        int st;
        waitpid(pid, &st, 0);
        close(j->master);
        j->master = -1;
        return -1;
    }
    char why[300];
    if (holder_default_file(pid, j->holder.fallback, sizeof j->holder.fallback, why, sizeof why) != 0)
        j->holder.fallback[0] = 0; /* the console dying loses the job's further output, not the job */
    if (holder_start(&j->holder, j->master, why, sizeof why) != 0)
        j->holder.pid = 0; /* without a holder the job is as it was: it loses its terminal with the console */
    return 0;
}

void job_resize(struct job *j, int rows, int cols)
{
    if (j->master < 0)
        return;
    struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
    ioctl(j->master, TIOCSWINSZ, &ws);
}

void job_signal(struct job *j, int sig)
{
    if (j->pid > 0 && !j->exited) {
        if (!j->attached)
            kill(-j->pid, sig);
        kill(j->pid, sig);
    }
}

int job_reap(struct job *j)
{
    holder_reap(&j->holder);
    if (j->pid <= 0 || j->exited)
        return 0;
    int st;
    if (j->attached) {
        if (!culeak_proc_ended(j->pid, &st))
            return 0;
        j->exited = 1;
        j->status = st;
        return 1;
    }
    pid_t r = waitpid(j->pid, &st, WNOHANG);
    if (r == j->pid) {
        j->exited = 1;
        j->status = st;
        return 1;
    }
    return 0;
}
