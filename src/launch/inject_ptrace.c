/* culeak's own injector. One thread of the process is borrowed (inject_thread.c chooses
 * it): PTRACE_SEIZE and PTRACE_INTERRUPT stop it alone, its whole state is saved
 * (inject_x86_64.c), it calls dlopen(libculeak.so), dlsym and culeak_attach_start on its
 * own stack, each call returning to address 0 (the fault there is the call's end), then it
 * is given back every register and detached. The kernel then restarts the system call it
 * was stopped in, as after any stop: the saved orig_rax and rax hold the restart code.
 *
 * Every wait has a deadline; every failure after the stop gives the thread its state back
 * before the detach. culeak's own terminal signals wait meanwhile, so that a Ctrl-C cannot
 * end culeak while the thread is mid-call (it would resume on a borrowed frame). */
#include "inject_ptrace.h"
#include "inject.h"
#include "inject_arch.h"
#include "inject_thread.h"
#include "remote_symbols.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 4096
#define CLEAN_STOP_TRIES 200 /* stops that found the thread inside the C library */

struct inj {
    pid_t pid, tid;
    int mem;
    double deadline_s; /* per wait */
    struct culeak_thread_state *saved;
    double stop_at, longest_stop; /* ms */
    int gone;
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

/* 1: tid stopped (*status); 0: not by the deadline; -1: it is gone (the process ended) */
static int wait_stop(pid_t tid, int *status, double deadline)
{
    for (int polls = 0;; polls++) {
        pid_t r = waitpid(tid, status, __WALL | WNOHANG);
        if (r == tid)
            return WIFSTOPPED(*status) ? 1 : -1;
        if (r < 0 && errno != EINTR)
            return -1;
        if (now_ms() > deadline)
            return 0;
        pause_us(polls < 500 ? 20 : 1000); /* the stop comes within microseconds, mostly */
    }
}

static int is_event_stop(int status) { return (status >> 16) == PTRACE_EVENT_STOP; }

/* Stops the seized thread (PTRACE_INTERRUPT); a signal on its way is passed on first.
 * 0 stopped, -1 gone or timed out, -2 the process was stopped meanwhile (group stop). */
static int interrupt(struct inj *j)
{
    int status;
    double deadline = now_ms() + j->deadline_s * 1e3;
    if (ptrace(PTRACE_INTERRUPT, j->tid, NULL, NULL) != 0)
        return -1;
    for (;;) {
        int r = wait_stop(j->tid, &status, deadline);
        if (r < 0)
            j->gone = 1;
        if (r <= 0)
            return -1;
        if (is_event_stop(status))
            return WSTOPSIG(status) == SIGTRAP ? 0 : -2;
        ptrace(PTRACE_CONT, j->tid, NULL, (void *)(long)WSTOPSIG(status)); /* delivered as it would be */
    }
}

static void detach(struct inj *j)
{
    if (!j->gone)
        ptrace(PTRACE_DETACH, j->tid, NULL, NULL);
    double stop = now_ms() - j->stop_at;
    if (j->stop_at && stop > j->longest_stop)
        j->longest_stop = stop;
    j->stop_at = 0;
}

/* A thread that did not stop by the deadline (an uninterruptible wait) stops once the
 * wait ends, and only then can be given back and detached: culeak waits for that, a
 * minute at most (then the kernel detaches it when culeak ends). */
static void stop_late(struct inj *j)
{
    int status;
    double deadline = now_ms() + 60e3;
    for (;;) {
        int r = wait_stop(j->tid, &status, deadline);
        if (r < 0)
            j->gone = 1;
        if (r <= 0 || is_event_stop(status))
            return;
        ptrace(PTRACE_CONT, j->tid, NULL, (void *)(long)WSTOPSIG(status));
    }
}

/* Gives the thread back the state it was stopped in, then lets it go. */
static void give_back(struct inj *j)
{
    char ignored[256];
    if (j->saved && !j->gone)
        culeak_arch_restore(j->tid, j->saved, ignored, sizeof ignored);
    detach(j);
}

static int in_span(uint64_t pc, uint64_t span[2][2])
{
    return (pc >= span[0][0] && pc < span[0][1]) || (pc >= span[1][0] && pc < span[1][1]);
}

/* A signal pending for the thread that it does not block (the kernel delivers it before
 * any restart). */
static int signal_pending(pid_t pid, pid_t tid)
{
    char path[96], line[256];
    unsigned long long pnd = 0, shd = 0, blk = 0, v;
    snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, (int)tid);
    FILE *f = fopen(path, "re");
    while (f && fgets(line, sizeof line, f)) {
        if (sscanf(line, "SigPnd: %llx", &v) == 1)
            pnd = v;
        else if (sscanf(line, "ShdPnd: %llx", &v) == 1)
            shd = v;
        else if (sscanf(line, "SigBlk: %llx", &v) == 1)
            blk = v;
    }
    if (f)
        fclose(f);
    return ((pnd | shd) & ~blk) != 0;
}

/* Stops the thread where borrowing it is safe: in a system call that keeps its signal
 * mask, or outside the C library and the loader (whose locks it might hold, which dlopen
 * takes); else lets it run a moment and tries again. Its state is saved. 0, or -1. */
static int stop_clean(struct inj *j, char *err, size_t len)
{
    uint64_t span[2][2] = {{0, 0}, {0, 0}};
    culeak_remote_libc_spans(j->pid, span);
    for (int tries = 0; tries < CLEAN_STOP_TRIES; tries++) {
        j->stop_at = now_ms();
        int r = interrupt(j);
        if (r != 0) {
            if (r == -2)
                snprintf(err, len, "pid %d was stopped (SIGSTOP) during the attach: resume it (kill -CONT %d) "
                                   "and attach again", (int)j->pid, (int)j->pid);
            else if (j->gone)
                snprintf(err, len, "pid %d exited during the attach", (int)j->pid);
            else
                snprintf(err, len, "thread %d of pid %d did not stop within %.0f s (in an uninterruptible wait?)",
                         (int)j->tid, (int)j->pid, j->deadline_s);
            if (r == -2)
                detach(j);
            else if (!j->gone) {
                stop_late(j);
                detach(j);
            }
            return -1;
        }
        j->saved = culeak_arch_save(j->tid, err, len);
        if (!j->saved) {
            detach(j);
            return -1;
        }
        long nr = culeak_arch_syscall(j->saved);
        uint64_t args[6] = {0, 0, 0, 0, 0, 0};
        char path[96], text[512];
        if (nr >= 0) { /* its arguments, for the mask test */
            snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)j->pid, (int)j->tid);
            FILE *f = fopen(path, "re");
            struct culeak_thread_info t;
            if (f && fgets(text, sizeof text, f) && culeak_parse_syscall(text, &t) == 0)
                memcpy(args, t.args, sizeof args);
            if (f)
                fclose(f);
        }
        int clean = nr >= 0 ? !culeak_arch_swaps_sigmask(nr, args) : !in_span(culeak_arch_pc(j->saved), span);
        if (clean) {
            culeak_arch_restart_by_hand(j->saved, signal_pending(j->pid, j->tid));
            return 0;
        }
        culeak_arch_free(j->saved);
        j->saved = NULL;
        if (tries == CLEAN_STOP_TRIES - 1) {
            detach(j);
            break;
        }
        ptrace(PTRACE_CONT, j->tid, NULL, NULL);
        double stop = now_ms() - j->stop_at;
        j->longest_stop = stop > j->longest_stop ? stop : j->longest_stop;
        j->stop_at = 0;
        pause_us(1000 + tries * 100);
    }
    snprintf(err, len, "thread %d of pid %d was inside the C library at each of %d stops: culeak did not borrow "
                       "it (it could hold a lock dlopen takes); attach again",
             (int)j->tid, (int)j->pid, CLEAN_STOP_TRIES);
    return -1;
}

static int is_fault(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP || sig == SIGSYS;
}

/* fn(args) in the borrowed thread, which stays stopped after; 0 with *result, or -1. */
static int remote_call(struct inj *j, uint64_t below, uint64_t fn, const uint64_t *args, int nargs,
                       uint64_t *result, const char *what, char *err, size_t len)
{
    if (culeak_arch_start_call(j->tid, j->mem, j->saved, below, fn, args, nargs, err, len) != 0)
        return -1;
    if (ptrace(PTRACE_CONT, j->tid, NULL, NULL) != 0) {
        snprintf(err, len, "cannot resume thread %d: %s", (int)j->tid, strerror(errno));
        return -1;
    }
    double deadline = now_ms() + j->deadline_s * 1e3;
    for (;;) {
        int status, r = wait_stop(j->tid, &status, deadline);
        if (r < 0) {
            j->gone = 1;
            snprintf(err, len, "pid %d exited during the attach (in %s)", (int)j->pid, what);
            return -1;
        }
        if (r == 0) {
            snprintf(err, len, "%s did not return in pid %d within %.0f s", what, (int)j->pid, j->deadline_s);
            if (interrupt(j) != 0 && !j->gone)
                stop_late(j);
            return -1;
        }
        int sig = WSTOPSIG(status);
        if (is_event_stop(status) || !is_fault(sig)) { /* a stop that is not the call's: passed on */
            ptrace(PTRACE_CONT, j->tid, NULL, is_event_stop(status) ? NULL : (void *)(long)sig);
            continue;
        }
        uint64_t pc = 0;
        int ended = culeak_arch_call_ended(j->tid, result, &pc);
        if (ended == 1)
            return 0;
        snprintf(err, len, "%s failed in pid %d: %s at address %#llx (the thread was given back its state)", what,
                 (int)j->pid, strsignal(sig), (unsigned long long)pc);
        return -1;
    }
}

static int read_remote_string(int mem, uint64_t at, char *out, size_t len)
{
    ssize_t n = at ? pread(mem, out, len - 1, (off_t)at) : -1;
    if (n <= 0)
        return -1;
    out[n] = 0;
    return 0;
}

/* The calls, once the thread is stopped and saved: 0, 1 or -1 as culeak_inject */
static int run_calls(struct inj *j, const struct culeak_remote_dl *dl, const char *lib, const char *endpoint,
                     char *err, size_t len)
{
    const char *sym = "culeak_attach_start";
    size_t l1 = strlen(lib) + 1, l2 = strlen(sym) + 1, l3 = strlen(endpoint) + 1;
    uint64_t at = culeak_arch_scratch(j->saved, l1 + l2 + l3);
    char buf[8192];
    if (l1 + l2 + l3 > sizeof buf) {
        snprintf(err, len, "the paths of libculeak.so and of culeak's socket are too long");
        return -1;
    }
    memcpy(buf, lib, l1);
    memcpy(buf + l1, sym, l2);
    memcpy(buf + l1 + l2, endpoint, l3);
    if (pwrite(j->mem, buf, l1 + l2 + l3, (off_t)at) != (ssize_t)(l1 + l2 + l3)) {
        snprintf(err, len, "cannot write into pid %d's memory: %s", (int)j->pid, strerror(errno));
        return -1;
    }
    uint64_t handle = 0, fn = 0, r = 0;
    /* RTLD_NOW, and for the private entry __RTLD_DLOPEN as glibc's own callers pass it */
    uint64_t open_args[2] = {at, RTLD_NOW | (dl->dlopen_private ? 0x80000000u : 0)};
    if (remote_call(j, at, dl->dlopen, open_args, 2, &handle, "dlopen", err, len) != 0)
        return -1;
    if (!handle) {
        char why[1024] = "";
        uint64_t msg = 0;
        if (dl->dlerror && remote_call(j, at, dl->dlerror, NULL, 0, &msg, "dlerror", err, len) == 0)
            read_remote_string(j->mem, msg, why, sizeof why);
        snprintf(err, len, "culeak could not load %s into pid %d%s%s", lib, (int)j->pid, why[0] ? ": " : "", why);
        return -1;
    }
    uint64_t sym_args[2] = {handle, at + l1};
    if (remote_call(j, at, dl->dlsym, sym_args, 2, &fn, "dlsym", err, len) != 0)
        return -1;
    if (!fn) {
        snprintf(err, len, "%s has no culeak_attach_start (another version of culeak?)", lib);
        return -1;
    }
    uint64_t start_args[1] = {at + l1 + l2};
    if (remote_call(j, at, fn, start_args, 1, &r, "culeak_attach_start", err, len) != 0)
        return -1;
    int v = (int)(int32_t)r;
    if (v == 1)
        snprintf(err, len, "pid %d is traced by culeak already (launched under culeak, or attached to)", (int)j->pid);
    else if (v != 0)
        snprintf(err, len, "culeak could not start in pid %d (out of memory)", (int)j->pid);
    return v == 0 || v == 1 ? v : -1;
}

/* Chooses the thread and seizes it (a thread that ended meanwhile: the next choice). */
static int seize(struct inj *j, char *err, size_t len)
{
    static struct culeak_thread_info threads[MAX_THREADS];
    for (int tries = 0; tries < 5; tries++) {
        int n = culeak_read_threads(j->pid, threads, MAX_THREADS);
        if (n < 0 && (errno == EACCES || errno == EPERM)) {
            culeak_ptrace_refused(j->pid, err, len);
            return -1;
        }
        int i = n > 0 ? culeak_choose_thread(j->pid, threads, n) : -1;
        if (i < 0) {
            snprintf(err, len, "pid %d exited during the attach", (int)j->pid);
            return -1;
        }
        j->tid = threads[i].tid;
        if (ptrace(PTRACE_SEIZE, j->tid, NULL, NULL) == 0)
            return 0;
        if (errno == EPERM) {
            if (culeak_attach_precheck(j->pid, err, len) == 0) /* else: traced meanwhile, err says by whom */
                culeak_ptrace_refused(j->pid, err, len);
            return -1;
        }
    }
    snprintf(err, len, "pid %d exited during the attach", (int)j->pid);
    return -1;
}

int culeak_inject_ptrace(pid_t pid, const char *lib, const char *endpoint, int timeout_s,
                         struct culeak_inject_timing *timing, char *err, size_t len)
{
    double t0 = now_ms();
    struct culeak_remote_dl dl;
    struct inj j = {.pid = pid, .mem = -1, .deadline_s = timeout_s > 0 ? timeout_s : 30};
    if (culeak_remote_dl(pid, &dl, err, len) != 0)
        return -1;
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGINT), sigaddset(&term, SIGTERM), sigaddset(&term, SIGHUP), sigaddset(&term, SIGQUIT);
    pthread_sigmask(SIG_BLOCK, &term, &old);
    int result = -1;
    if (seize(&j, err, len) == 0) {
        if (stop_clean(&j, err, len) == 0) {
            char path[64];
            snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
            j.mem = open(path, O_RDWR | O_CLOEXEC);
            if (j.mem < 0)
                snprintf(err, len, "cannot open %s: %s", path, strerror(errno));
            else
                result = run_calls(&j, &dl, lib, endpoint, err, len);
            if (result < 0 && j.gone)
                snprintf(err, len, "pid %d exited during the attach", (int)pid);
            give_back(&j);
        }
    }
    if (j.mem >= 0)
        close(j.mem);
    culeak_arch_free(j.saved);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (timing) {
        timing->total_ms = now_ms() - t0;
        timing->stop_ms = j.longest_stop;
        timing->tid = j.tid;
    }
    return result;
}
