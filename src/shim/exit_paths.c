/* exit() called by several threads at once, and the ends of a process inside libc that
 * never reach the shim's _exit. glibc runs the exit handlers in the first thread that
 * calls exit(); another thread that calls it meanwhile finds the handler list empty and
 * ends the process at once (its internal _exit), often before the first thread reached
 * the shim's destructor and its EXIT record. So a thread that calls exit() while another
 * one's exit is under way writes the EXIT record itself first. The first thread's exit is
 * known from the exit() below, or from an exit handler registered when the stream
 * started (a return from main reaches exit() inside libc, not through the shim); only
 * one EXIT record is written (stream.c). daemon()'s parent ends with libc's internal
 * _exit(0) as well: the fork's parent side writes its EXIT first. */
#include "shim.h"
#include "common/wire.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static uint32_t exiting; /* the thread whose exit() runs the exit handlers; 0: none */
static CULEAK_TLS int in_daemon;

/* Whether another thread's exit is under way; else this thread's is from now on. */
static int other_exiting(void)
{
    uint32_t me = (uint32_t)syscall(SYS_gettid), none = 0;
    if (__atomic_compare_exchange_n(&exiting, &none, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return 0;
    return none != me;
}

static void exit_begins(void) { other_exiting(); }

static void fork_parent(void)
{
    if (in_daemon) /* the parent is about to _exit(0) inside daemon() */
        culeak_abrupt_end(CULEAK_EXIT_QUICK);
}

void culeak_exit_paths_arm(void)
{
    static int armed;
    if (armed++)
        return;
    atexit(exit_begins); /* runs before the destructors: registered after main began */
    pthread_atfork(NULL, fork_parent, NULL);
}

typedef void (*exit_fn)(int);

CULEAK_EXPORT void exit(int status)
{
    if (other_exiting())
        culeak_abrupt_end(CULEAK_EXIT_NORMAL);
    exit_fn f = (exit_fn)culeak_real_dlsym(RTLD_NEXT, "exit");
    if (f)
        f(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

CULEAK_EXPORT void quick_exit(int status)
{
    /* its at_quick_exit handlers run, then libc's internal _exit */
    culeak_abrupt_end(CULEAK_EXIT_QUICK);
    exit_fn f = (exit_fn)culeak_real_dlsym(RTLD_NEXT, "quick_exit");
    if (f)
        f(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

typedef int (*daemon_fn)(int, int);

CULEAK_EXPORT int daemon(int nochdir, int noclose)
{
    daemon_fn f = (daemon_fn)culeak_real_dlsym(RTLD_NEXT, "daemon");
    if (!f)
        return -1;
    in_daemon = 1;
    int r = f(nochdir, noclose); /* the child (or a failed fork) returns here */
    in_daemon = 0;
    return r;
}
