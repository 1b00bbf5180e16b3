/* Attaching to a running process (attach_job.h): the same checks, injection, wait and
 * messages for the console and for record --pid. */
#include "attach_job.h"
#include "inject.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int culeak_attach_check(pid_t pid, char *err, size_t len)
{
    return culeak_attach_precheck(pid, err, len) != 0 || !culeak_attach_debugger(err, len) ? -1 : 0;
}

int culeak_attach_job(pid_t pid, const char *socket, int timeout_s, int (*arrived)(void *ctx, pid_t pid),
                      void *ctx, const volatile sig_atomic_t *stop, char *err, size_t len)
{
    char endpoint[1200];
    snprintf(endpoint, sizeof endpoint, "ring:%s", socket);
    if (culeak_inject(pid, endpoint, timeout_s, err, len) != 0)
        return -1;
    /* the shim's thread hands the ring over once the injector has let the process go */
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (arrived(ctx, pid))
            return 0;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((stop && *stop) || t.tv_sec - t0.tv_sec > timeout_s)
            break;
    }
    snprintf(err, len, "pid %d did not connect after the attach%s", (int)pid, stop && *stop ? " (interrupted)" : "");
    return -1;
}

int culeak_attach_timing_line(char *out, size_t len)
{
    double total_ms, stop_ms;
    int tid = culeak_inject_timing(&total_ms, &stop_ms);
    const char *timing = getenv("CULEAK_ATTACH_TIMING");
    if (tid <= 0 || !timing || !*timing || strcmp(timing, "0") == 0)
        return 0;
    snprintf(out, len, "the attach took %.2f ms; thread %d was stopped %.3f ms, no other thread", total_ms, tid,
             stop_ms);
    return 1;
}
