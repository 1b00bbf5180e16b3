/* culeak's own injector: ptrace borrows one thread of a running process to dlopen
 * libculeak.so and call culeak_attach_start(endpoint), and gives it back every register
 * as it was (no debugger needed). */
#ifndef CULEAK_INJECT_PTRACE_H
#define CULEAK_INJECT_PTRACE_H

#include <stddef.h>
#include <sys/types.h>

/* What the last attach cost: its whole time, and how long the borrowed thread was stopped
 * (the longest stop any thread of the process saw: the others never stop). */
struct culeak_inject_timing {
    double total_ms;
    double stop_ms;
    pid_t tid;
};

/* Loads lib into pid and calls culeak_attach_start(endpoint) in it; each wait has
 * timeout_s seconds. 0, 1 (traced by culeak already) or -1 with a message. The thread is
 * given back its state at every step of every failure, and never left stopped. */
int culeak_inject_ptrace(pid_t pid, const char *lib, const char *endpoint, int timeout_s,
                         struct culeak_inject_timing *timing, char *err, size_t len);

#endif
