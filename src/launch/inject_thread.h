/* Which thread of a process the injector borrows for its calls, chosen from /proc without
 * stopping anything. */
#ifndef CULEAK_INJECT_THREAD_H
#define CULEAK_INJECT_THREAD_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Below this much stack under its sp a thread is not borrowed (dlopen runs the library's
 * constructors on it). */
#define CULEAK_STACK_ROOM (256u << 10)

struct culeak_thread_info {
    pid_t tid;
    int in_syscall; /* blocked in a system call (/proc/PID/task/TID/syscall: a number) */
    long nr;
    uint64_t args[6];
    uint64_t sp;
    int stack_ok; /* its stack has CULEAK_STACK_ROOM below sp, or is the process's [stack] */
};

/* Parses one /proc/PID/task/TID/syscall text ("running", "-1 SP PC" or "NR A1..A6 SP PC")
 * into t (not tid nor stack_ok). 0, or -1 when it says nothing usable. */
int culeak_parse_syscall(const char *text, struct culeak_thread_info *t);

/* Whether the mapping of a maps text (/proc/PID/maps) that holds sp leaves room under it:
 * 1 yes, 0 no or no such mapping. */
int culeak_stack_room(FILE *maps, uint64_t sp);

/* The index of the thread to borrow among n (threads[0] being any): a thread blocked in a
 * system call that keeps its signal mask, whose stack has room, the main thread (tid ==
 * pid) first; else the main thread; -1 when there is none of them. */
int culeak_choose_thread(pid_t pid, const struct culeak_thread_info *threads, int n);

/* Reads pid's threads from /proc (at most max) into threads; their count, or -1 with
 * errno (EACCES: the kernel refuses culeak access, as it would refuse ptrace). */
int culeak_read_threads(pid_t pid, struct culeak_thread_info *threads, int max);

#endif
