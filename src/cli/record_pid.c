/* `culeak record --pid PID -o FILE`: attach to a running process and write its stream to
 * FILE until the process ends, or until culeak is interrupted (SIGINT, SIGTERM, SIGHUP),
 * which detaches: the process runs on untraced. The process hands over a ring of shared
 * memory, as a launched job's processes do (collect.h; culeak-stream(5), The ring), on a
 * socket in a directory only this user can enter (SO_PEERCRED on both ends): a culeak
 * that stops reading holds it up 50 ms at most, and what it committed outlives it. */
#include "common/outpath.h"
#include "launch/attach_job.h"
#include "launch/collect.h"
#include "commands.h"
#include "launch/inject.h"
#include "launch/launch.h"
#include "options.h"
#include "record_pid.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define POLL_BUSY_MS 1
#define POLL_IDLE_MS 10

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig) { stop_signal = sig; }

/* The attached process's ring came (its recording begun). */
static int ring_came(void *ctx, pid_t pid)
{
    struct culeak_collector *c = ctx;
    culeak_collector_poll(c, 50);
    return culeak_collector_has(c, pid);
}

int record_pid(const struct cli_command *cmd, pid_t pid, const char *out, int timeout_s)
{
    char err[1200], path[PATH_MAX];
    if (culeak_attach_check(pid, err, sizeof err) != 0) {
        cli_fail(cmd, "%s", err);
        return 1;
    }
    if (out[0] != '/') { /* the reader writes it, wherever it runs: absolute */
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd) || (size_t)snprintf(path, sizeof path, "%s/%s", cwd, out) >= sizeof path) {
            cli_fail(cmd, "cannot write %s: %s", out, strerror(errno ? errno : ENAMETOOLONG));
            return 1;
        }
        out = path;
    }
    /* fail now, not after the attach, where it cannot be written; the reader makes it */
    int probe = culeak_create_private(out, 1);
    if (probe < 0) {
        cli_fail(cmd, "cannot write %s: %s", out, strerror(errno));
        return 1;
    }
    close(probe);
    unlink(out);
    struct culeak_collector *c = culeak_collector_attach(out);
    if (!c) {
        cli_fail(cmd, "cannot make the ring's hand-over socket");
        return 1;
    }
    culeak_collector_aggregate(c, culeak_launch_aggregated()); /* record --aggregate --pid */
    struct sigaction sa = {.sa_handler = on_stop};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (culeak_attach_job(pid, culeak_collector_socket(c), timeout_s, ring_came, c, &stop_signal, err, sizeof err) !=
        0) {
        culeak_collector_free(c); /* tells a late ring it is read no more */
        cli_fail(cmd, "%s", err);
        unlink(out);
        return 1;
    }
    fprintf(stderr, "culeak record: attached to pid %d; recording to %s (Ctrl-C detaches)\n", (int)pid, out);
    char timing[200];
    if (culeak_attach_timing_line(timing, sizeof timing))
        fprintf(stderr, "culeak record: %s\n", timing);
    size_t got = 0;
    while (!stop_signal && culeak_collector_busy(c))
        got = culeak_collector_poll(c, got ? POLL_BUSY_MS : POLL_IDLE_MS);
    culeak_collector_free(c); /* the last records; a process still running stops tracing */
    int st = 0;
    if (!stop_signal) {
        /* the stream ended: the process exited, or the shim stopped */
        for (int i = 0; i < 100 && !culeak_proc_ended(pid, &st); i++) {
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        if (culeak_proc_ended(pid, &st))
            fprintf(stderr, "culeak record: pid %d ended; its recording is %s\n", (int)pid, out);
        else
            fprintf(stderr, "culeak record: pid %d stopped sending (see its stderr); it runs on\n", (int)pid);
    } else
        fprintf(stderr, "culeak record: detached from pid %d: it runs on; its recording is %s\n", (int)pid, out);
    return 0;
}
