/* What the ptrace injector needs of one CPU architecture (inject_x86_64.c today; an
 * aarch64 file would implement the same): save and give back every register of a stopped
 * thread, make it call a function on its own stack, read the result, and the system-call
 * restart rules the kernel applies when the thread resumes. */
#ifndef CULEAK_INJECT_ARCH_H
#define CULEAK_INJECT_ARCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct culeak_thread_state; /* every register of one thread and its signal mask */

/* Reads the state of stopped thread tid (its own allocation). NULL with a message. */
struct culeak_thread_state *culeak_arch_save(pid_t tid, char *err, size_t len);
void culeak_arch_free(struct culeak_thread_state *st);

/* Writes st back whole into stopped thread tid, its signal mask included. 0 or -1. */
int culeak_arch_restore(pid_t tid, const struct culeak_thread_state *st, char *err, size_t len);

/* The stack pointer, the program counter and the system call the thread was stopped in
 * (-1: none) at the save. */
uint64_t culeak_arch_sp(const struct culeak_thread_state *st);
uint64_t culeak_arch_pc(const struct culeak_thread_state *st);
long culeak_arch_syscall(const struct culeak_thread_state *st);

/* Where a call may put `need` bytes of strings on the thread's stack (below what the
 * interrupted code may use), 16-byte aligned. */
uint64_t culeak_arch_scratch(const struct culeak_thread_state *st, size_t need);

/* Sets up stopped thread tid (whose state st was saved) to call fn(args[0..nargs-1])
 * with its stack below `below` and a return to address 0, its registers otherwise clean
 * for a call, and all signals but the faults blocked. mem: /proc/PID/mem open for writing. */
int culeak_arch_start_call(pid_t tid, int mem, const struct culeak_thread_state *st, uint64_t below, uint64_t fn,
                           const uint64_t *args, int nargs, char *err, size_t len);

/* After the call's thread stopped with a fault: 1 when it returned (pc 0; *result its
 * return value), 0 when it faulted at *pc. -1 when the registers cannot be read. */
int culeak_arch_call_ended(pid_t tid, uint64_t *result, uint64_t *pc);

/* A system call that ends with plain EINTR when its thread is stopped (epoll_wait and the
 * others of signal(7)'s list) would fail where the kernel restarts the others: when the
 * thread was stopped in one of them with EINTR and no signal is pending for it, st is
 * changed to run it again. 1 when changed. */
int culeak_arch_restart_by_hand(struct culeak_thread_state *st, int signal_pending);

/* System calls that swap the signal mask while they wait (ppoll, pselect6, epoll_pwait
 * and the like, with a mask): a thread stopped in one cannot have its mask changed and
 * given back (the kernel forgets the mask to restore), so it is not hijacked. */
int culeak_arch_swaps_sigmask(long nr, const uint64_t args[6]);

#endif
