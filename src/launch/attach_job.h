/* Attaching to a running process, the one path of `culeak attach` (the console) and
 * `culeak record --pid`: the checks before any injector runs, the shim loaded with the
 * reader's hand-over socket as its endpoint, the wait for the ring the process hands
 * over, and the attach's figures. */
#ifndef CULEAK_ATTACH_JOB_H
#define CULEAK_ATTACH_JOB_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* Whether pid can be attached to, and by which injector (inject.h): 0, or -1 with a
 * message naming the fix. */
int culeak_attach_check(pid_t pid, char *err, size_t len);

/* Loads the shim into pid with "ring:" and socket as its endpoint (each step within
 * timeout_s), then waits up to timeout_s for its ring: arrived(ctx, pid) takes what came
 * (waiting up to 50 ms) and says 1 once pid's ring is there. *stop, when set (a signal),
 * ends the wait. 0, or -1 with err: the injector's reason, or that the process did not
 * hand its ring over. */
int culeak_attach_job(pid_t pid, const char *socket, int timeout_s, int (*arrived)(void *ctx, pid_t pid),
                      void *ctx, const volatile sig_atomic_t *stop, char *err, size_t len);

/* The last attach's figures as a line ("the attach took ..."), when CULEAK_ATTACH_TIMING
 * asks for them and culeak's own injector made it: 1, or 0 with nothing to say. */
int culeak_attach_timing_line(char *out, size_t len);

#endif
