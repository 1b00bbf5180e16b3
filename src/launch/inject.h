/* Loading the shim into a process that is already running (culeak attach, culeak record
 * --pid): culeak's own ptrace injector, or a debugger in batch mode when CULEAK_GDB names
 * one, as heap profilers attach to a running process. */
#ifndef CULEAK_INJECT_H
#define CULEAK_INJECT_H

#include <stddef.h>
#include <sys/types.h>

/* Why pid cannot be attached to, before any injector runs: no such process, a stopped
 * one, another user's, already traced, or this very process. 0, or -1 with a message
 * naming the fix. */
int culeak_attach_precheck(pid_t pid, char *err, size_t len);

/* The debugger that injects: $CULEAK_GDB when set, else "" (culeak's own injector). NULL
 * when CULEAK_GDB cannot be run, or culeak has no injector for this CPU (err says what to
 * do). */
const char *culeak_attach_debugger(char *err, size_t len);

/* Has the injector stop pid (one thread of it, or all with gdb), dlopen libculeak.so into
 * it, call culeak_attach_start(endpoint) and detach. Each step has timeout_s seconds. On
 * every failure path the process is resumed with the state it had (gdb: interrupted and
 * told to detach, then killed; a process left stopped gets SIGCONT). 0, 1 when the process
 * is traced by culeak already, or -1 with a message in err. */
int culeak_inject(pid_t pid, const char *endpoint, int timeout_s, char *err, size_t len);

/* The last culeak_inject's figures with culeak's own injector: its whole time and the stop
 * of the one thread it borrowed; returns that thread's id (0: none, gdb injected). */
int culeak_inject_timing(double *total_ms, double *stop_ms);

/* The message for a ptrace the kernel refused (Yama's ptrace_scope, a container without
 * CAP_SYS_PTRACE), naming the fix. */
void culeak_ptrace_refused(pid_t pid, char *err, size_t len);

/* The command line of pid as one line ("python3 train.py"), into out. */
void culeak_proc_cmdline(pid_t pid, char *out, size_t len);

/* For an attached process, which is not culeak's child: 1 once it has ended (gone, or a
 * zombie, whose wait status goes to *status; -1 when its parent took it already). */
int culeak_proc_ended(pid_t pid, int *status);

#endif
