/* A driver-API program that is hard on a tracer: it closes or takes over every descriptor,
 * or ends without running destructors right after allocating. Each scenario allocates
 * HOSTILE_ALLOC bytes per allocation; the test counts the allocations in the recording.
 *   closeall DIR N   1 allocation, closes every descriptor above 2 (a daemon, closefrom),
 *                    opens DIR/f0..f2, N more allocations, writes "program data K" into
 *                    each file (K its index) and exits 0
 *   closepipe DIR N  1 allocation, closes every descriptor above 2, makes 16 blocking pipes
 *                    on the lowest numbers (where a tracer's descriptors opened at start
 *                    were), N allocations at a call site the tracer has not seen, a line
 *                    through each pipe, "program data 0" into DIR/f0; a hang ends at SIGALRM
 *   dup2all FILE N   1 allocation, then puts FILE on every descriptor number from 3 up,
 *                    the last below the limit excepted (where a recording taken away can
 *                    be reopened), N more allocations, writes "program data" into FILE
 *   abort|segv|exit|Exit|exec   1 allocation, then abort(), a SIGSEGV, _exit(3), _Exit(4)
 *                    or exec of /bin/true
 *   kill9            1 allocation, 100 ms (the shim writes it), then SIGKILL
 *   fds              1 allocation, then prints each descriptor open above 2 as "fd N -> TARGET"
 *   churn N          N allocations, each freed at once, then 1 kept; exits 0
 *   killnow N SIG    N allocations at once followed by signal SIG (a number), whose
 *                    default action ends the process; with "reraise" after SIG: a crash
 *                    reporter's handler catches it, restores the default and raises again
 *   threadgate N     1 allocation, then waits for a byte on stdin; then N threads make one
 *                    allocation each at the same line, at once (a breakpoint there holds
 *                    one and queues the others)
 *   gateclose N      1 allocation, waits for a byte on stdin, closes every descriptor above 2,
 *                    N more allocations, exits 0 (the recording's path may change meanwhile)
 *   hup              1 allocation, raise(SIGHUP) (the job ignores it: nohup), 1 more, exits 0
 *   oomabort         a failed allocation (out of memory), then abort() (goto oom's event)
 *   forkexit         a child allocates and _exit(0)s; the parent waits and exits 0
 *   vfork            1 allocation, a vfork child that _exit(0)s at once, 1 more; exits 0
 *   orphan           1 allocation; a child allocates once, and once more after the parent
 *                    has exited 0 (300 ms after it sees the parent gone)
 *   execlinger FIFO  1 allocation; a child allocates once, then execs a shell that makes no
 *                    CUDA call and waits for a line on FIFO; the parent exits 0 */
#include "fakecuda.h"
#include "scenarios.h"

#include "cuda/culeak_cuda.h"
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HOSTILE_ALLOC 4096

static void die(const char *what)
{
    fprintf(stderr, "FAIL %s\n", what);
    exit(1);
}

static CUcontext ctx;

static void setup(void)
{
    CUdevice dev;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx))
        die("setup");
}

static void alloc_n(int n)
{
    for (int i = 0; i < n; i++) {
        CUdeviceptr d;
        if (cuMemAlloc(&d, HOSTILE_ALLOC) != CUDA_SUCCESS)
            die("cuMemAlloc");
    }
}

/* A vfork child shares its parent's memory, the shim's stream too: its _exit must leave
 * the parent's recording as it is. */
static int vfork_exit(void)
{
    alloc_n(1);
    pid_t pid = vfork();
    if (pid == 0)
        _exit(0);
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        die("vfork");
    alloc_n(1);
    return 0;
}

/* The child's first allocation, then the parent goes. */
static pid_t child_after_alloc(int (*child)(const void *), const void *arg)
{
    int p[2];
    if (pipe(p) != 0)
        die("pipe");
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        close(p[0]);
        alloc_n(1);
        close(p[1]);
        _exit(child(arg));
    }
    close(p[1]);
    char c;
    if (read(p[0], &c, 1) != 0)
        die("child");
    close(p[0]);
    return pid;
}

static int orphan_child(const void *arg)
{
    pid_t parent = *(const pid_t *)arg;
    while (getppid() == parent) {
        struct timespec t = {0, 10 * 1000 * 1000};
        nanosleep(&t, NULL);
    }
    struct timespec t = {0, 300 * 1000 * 1000};
    nanosleep(&t, NULL);
    alloc_n(1);
    return 0;
}

static int orphan(void)
{
    alloc_n(1);
    pid_t me = getpid();
    child_after_alloc(orphan_child, &me);
    return 0;
}

static int linger_child(const void *fifo)
{
    execl("/bin/sh", "sh", "-c", "read line <\"$0\"", (const char *)fifo, (char *)NULL);
    return 127;
}

static int execlinger(const char *fifo)
{
    alloc_n(1);
    child_after_alloc(linger_child, fifo);
    return 0;
}

static void write_str(int fd, const char *s)
{
    if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
        die("write");
}

static int closeall(const char *dir, int n)
{
    alloc_n(1);
    closefrom(3);
    int fds[3];
    for (int i = 0; i < 3; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/f%d", dir, i);
        if ((fds[i] = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0)
            die("open");
    }
    alloc_n(n);
    for (int i = 0; i < 3; i++) {
        char line[64];
        snprintf(line, sizeof line, "program data %d\n", i);
        write_str(fds[i], line);
        close(fds[i]);
    }
    return 0;
}

/* New call sites after the descriptors changed hands, on stack pages never used before
 * (an unwinder that checks memory page by page checks these). */
__attribute__((noinline)) static void alloc_n_elsewhere(int n)
{
    volatile char pad[64 << 10];
    pad[0] = pad[sizeof pad - 1] = 0;
    for (int i = 0; i < n; i++) {
        CUdeviceptr d;
        if (cuMemAlloc(&d, HOSTILE_ALLOC) != CUDA_SUCCESS)
            die("cuMemAlloc");
    }
}

#define PIPES 16

static int closepipe(const char *dir, int n)
{
    alarm(20); /* a hang fails the test instead of stopping it */
    alloc_n(1);
    closefrom(3);
    int p[PIPES][2];
    for (int i = 0; i < PIPES; i++)
        if (pipe(p[i]) != 0)
            die("pipe");
    alloc_n_elsewhere(n);
    for (int i = 0; i < PIPES; i++) {
        char line[32], got[32] = "";
        int len = snprintf(line, sizeof line, "pipe %d\n", i);
        write_str(p[i][1], line);
        if (read(p[i][0], got, sizeof got - 1) != len || strcmp(got, line) != 0)
            die("a line through a pipe");
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/f0", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die("open");
    write_str(fd, "program data 0\n");
    close(fd);
    return 0;
}

static int dup2all(const char *file, int n)
{
    int f = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (f < 0)
        die("open");
    alloc_n(1);
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    int lim = rl.rlim_cur > 65536 ? 65536 : (int)rl.rlim_cur;
    for (int fd = 3; fd < lim - 1; fd++)
        if (fd != f)
            dup2(f, fd);
    alloc_n(n);
    write_str(f, "program data\n");
    return 0;
}

static int list_fds(void)
{
    alloc_n(1);
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        die("opendir");
    struct dirent *e;
    while ((e = readdir(d))) {
        int fd = atoi(e->d_name);
        char link[64], target[4096] = "";
        if (e->d_name[0] == '.' || fd <= 2 || fd == dirfd(d))
            continue;
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        target[n > 0 ? n : 0] = 0;
        printf("fd %d -> %s\n", fd, target);
    }
    closedir(d);
    return 0;
}

static int churn(int n)
{
    for (int i = 0; i < n; i++) {
        CUdeviceptr d;
        if (cuMemAlloc(&d, HOSTILE_ALLOC) != CUDA_SUCCESS || cuMemFree(d) != CUDA_SUCCESS)
            die("churn");
    }
    alloc_n(1);
    return 0;
}

static void reraise(int sig)
{
    signal(sig, SIG_DFL);
    raise(sig);
}

static int killnow(int n, int sig, int catch_it)
{
    if (catch_it)
        signal(sig, reraise);
    alloc_n(n);
    raise(sig);
    return 0; /* a signal whose default does not end the process: the test sees status 0 */
}

static void *one_alloc(void *arg)
{
    (void)arg;
    if (cuCtxSetCurrent(ctx))
        die("cuCtxSetCurrent");
    alloc_n(1);
    return NULL;
}

static int gateclose(int n)
{
    char c;
    alloc_n(1);
    if (read(0, &c, 1) < 0)
        die("gateclose");
    closefrom(3);
    alloc_n(n);
    return 0;
}

static int threadgate(int n)
{
    pthread_t t[64];
    char c;
    alloc_n(1);
    if (n < 1 || n > 64 || read(0, &c, 1) < 0)
        die("threadgate");
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, one_alloc, NULL) != 0)
            die("pthread_create");
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("threadgate ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    const char *s = argc > 1 ? argv[1] : "";
    setup();
    if (!strcmp(s, "closeall") && argc > 3)
        return closeall(argv[2], atoi(argv[3]));
    if (!strcmp(s, "closepipe") && argc > 3)
        return closepipe(argv[2], atoi(argv[3]));
    if (!strcmp(s, "dup2all") && argc > 3)
        return dup2all(argv[2], atoi(argv[3]));
    if (!strcmp(s, "churn") && argc > 2)
        return churn(atoi(argv[2]));
    if (!strcmp(s, "fds"))
        return list_fds();
    if (!strcmp(s, "killnow") && argc > 3)
        return killnow(atoi(argv[2]), atoi(argv[3]), argc > 4 && !strcmp(argv[4], "reraise"));
    if (!strcmp(s, "gateclose") && argc > 2)
        return gateclose(atoi(argv[2]));
    if (!strcmp(s, "hup")) {
        alloc_n(1);
        raise(SIGHUP);
        alloc_n(1);
        return 0;
    }
    if (!strcmp(s, "threadgate") && argc > 2)
        return threadgate(atoi(argv[2]));
    if (!strcmp(s, "forkexit")) {
        pid_t pid = fork();
        if (pid == 0) {
            alloc_n(1);
            _exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
    }
    if (!strcmp(s, "vfork"))
        return vfork_exit();
    if (!strcmp(s, "orphan"))
        return orphan();
    if (!strcmp(s, "execlinger") && argc > 2)
        return execlinger(argv[2]);
    if (!strcmp(s, "oomabort")) {
        CUdeviceptr d;
        if (cuMemAlloc(&d, SZ_OOM) != CUDA_ERROR_OUT_OF_MEMORY)
            die("no out-of-memory");
        abort();
    }
    alloc_n(1);
    if (!strcmp(s, "abort"))
        abort();
    if (!strcmp(s, "segv"))
        raise(SIGSEGV);
    if (!strcmp(s, "exit"))
        _exit(3);
    if (!strcmp(s, "Exit"))
        _Exit(4);
    if (!strcmp(s, "kill9")) {
        struct timespec t = {0, 100 * 1000 * 1000};
        nanosleep(&t, NULL);
        raise(SIGKILL);
    }
    if (!strcmp(s, "exec")) {
        execl("/bin/true", "true", (char *)NULL);
        die("exec");
    }
    fprintf(stderr, "usage: %s closeall DIR N|closepipe DIR N|dup2all FILE N|abort|segv|exit|Exit|exec|kill9|oomabort|forkexit|vfork|orphan|execlinger FIFO|threadgate N|killnow N SIG [reraise]|fds|churn N|gateclose N|hup\n", argv[0]);
    return 2;
}
