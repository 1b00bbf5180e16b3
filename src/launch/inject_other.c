/* The injector's CPU half where culeak has none yet (any CPU but x86-64): every step says
 * so, and culeak_attach_debugger sends the user to CULEAK_GDB before any is taken. An
 * aarch64 file would take this one's place (README.md says what it needs). */
#if !defined(__x86_64__)
#include "inject_arch.h"

#include <stdio.h>

static const char no_injector[] = "culeak's own injector knows x86-64 only: set CULEAK_GDB=gdb";

struct culeak_thread_state *culeak_arch_save(pid_t tid, char *err, size_t len)
{
    (void)tid;
    snprintf(err, len, "%s", no_injector);
    return NULL;
}

void culeak_arch_free(struct culeak_thread_state *st) { (void)st; }

int culeak_arch_restore(pid_t tid, const struct culeak_thread_state *st, char *err, size_t len)
{
    (void)tid, (void)st;
    snprintf(err, len, "%s", no_injector);
    return -1;
}

uint64_t culeak_arch_sp(const struct culeak_thread_state *st) { return (void)st, 0; }
uint64_t culeak_arch_pc(const struct culeak_thread_state *st) { return (void)st, 0; }
long culeak_arch_syscall(const struct culeak_thread_state *st) { return (void)st, -1; }
uint64_t culeak_arch_scratch(const struct culeak_thread_state *st, size_t need) { return (void)st, (void)need, 0; }

int culeak_arch_start_call(pid_t tid, int mem, const struct culeak_thread_state *st, uint64_t below, uint64_t fn,
                           const uint64_t *args, int nargs, char *err, size_t len)
{
    (void)tid, (void)mem, (void)st, (void)below, (void)fn, (void)args, (void)nargs;
    snprintf(err, len, "%s", no_injector);
    return -1;
}

int culeak_arch_call_ended(pid_t tid, uint64_t *result, uint64_t *pc) { return (void)tid, (void)result, (void)pc, -1; }
int culeak_arch_restart_by_hand(struct culeak_thread_state *st, int signal_pending) { return (void)st, (void)signal_pending, 0; }
int culeak_arch_swaps_sigmask(long nr, const uint64_t args[6]) { return (void)nr, (void)args, 1; }
#endif
