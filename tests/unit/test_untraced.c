/* The attach's wait for the debugger to let the process go (src/shim/untraced.c, compiled
 * in here, its sleeps counted): while a tracer holds the process (a child of this test
 * PTRACE_SEIZEs it, which stops nothing), culeak_wait_untraced keeps checking and
 * sleeping; once the tracer is gone it returns. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int sleeps;   /* the wait's sleeps so far */
static int returned; /* the wait returned */

static int counted_nanosleep(const struct timespec *ts, struct timespec *rem)
{
    pthread_mutex_lock(&mu);
    sleeps++;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&mu);
    return nanosleep(ts, rem);
}
#define nanosleep counted_nanosleep
#include "../../src/shim/untraced.c"
#undef nanosleep

static void *wait_thread(void *arg)
{
    culeak_wait_untraced();
    pthread_mutex_lock(&mu);
    returned = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&mu);
    return NULL;
}

/* The TracerPid line of this process's status. */
static long tracer_pid(void)
{
    char buf[4096];
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    assert_true(n > 0);
    buf[n] = 0;
    const char *t = strstr(buf, "TracerPid:");
    assert_non_null(t);
    return strtol(t + strlen("TracerPid:"), NULL, 10);
}

/* A child that traces this process (PTRACE_SEIZE: nothing stops) until `release` is
 * closed, then exits (the kernel detaches it). Its answer to the seize comes on `said`. */
static pid_t start_tracer_of(pid_t target, int release[2], int said[2])
{
    assert_int_equal(pipe(release), 0);
    assert_int_equal(pipe(said), 0);
    pid_t parent = getpid();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(release[1]);
        close(said[0]);
        char c;
        if (read(release[0], &c, 1) != 1) /* the go: this child may trace its parent */
            _exit(1);
        int err = ptrace(PTRACE_SEIZE, target ? target : parent, NULL, NULL) == 0 ? 0 : errno;
        if (write(said[1], &err, sizeof err) != sizeof err)
            _exit(1);
        while (read(release[0], &c, 1) > 0)
            ;
        _exit(0);
    }
    close(release[0]);
    close(said[1]);
    prctl(PR_SET_PTRACER, pid, 0, 0, 0); /* Yama's ptrace_scope 1 (EINVAL without Yama) */
    assert_int_equal(write(release[1], "g", 1), 1);
    int err = -1;
    assert_int_equal(read(said[0], &err, sizeof err), sizeof err);
    assert_int_equal(err, 0);
    close(said[0]);
    return pid;
}

static pid_t start_tracer(int release[2], int said[2]) { return start_tracer_of(0, release, said); }

static void test_waits_while_traced(void **s)
{
    int release[2], said[2];
    pid_t tracer = start_tracer(release, said);
    assert_int_equal(tracer_pid(), tracer);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, wait_thread, NULL), 0);
    /* three checks that found the tracer, each followed by a sleep, and no return */
    pthread_mutex_lock(&mu);
    while (sleeps < 3 && !returned)
        pthread_cond_wait(&changed, &mu);
    int early = returned;
    pthread_mutex_unlock(&mu);
    close(release[1]); /* the tracer exits: the process is let go */
    int status;
    assert_int_equal(waitpid(tracer, &status, 0), tracer);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(tracer_pid(), 0);
    pthread_join(th, NULL);
    assert_false(early); /* it returned while the tracer still held the process */
    assert_true(returned);
}

static void test_returns_at_once_untraced(void **s)
{
    assert_int_equal(tracer_pid(), 0);
    sleeps = 0;
    culeak_wait_untraced();
    assert_int_equal(sleeps, 0);
}

static pthread_mutex_t idle_mu = PTHREAD_MUTEX_INITIALIZER;
static pid_t idle_tid;

static void *idle_thread(void *arg)
{
    pthread_mutex_lock(&idle_mu);
    idle_tid = gettid();
    pthread_mutex_unlock(&idle_mu);
    char c;
    (void)!read(*(int *)arg, &c, 1); /* until the test closes the pipe */
    return NULL;
}

/* culeak's own injector traces one thread, not the main one: the main thread's
 * TracerPid stays 0, and the wait must go on all the same */
static void test_waits_while_another_thread_is_traced(void **s)
{
    int hold[2];
    assert_int_equal(pipe(hold), 0);
    pthread_t idle;
    assert_int_equal(pthread_create(&idle, NULL, idle_thread, &hold[0]), 0);
    pid_t tid = 0;
    while (!tid) {
        pthread_mutex_lock(&idle_mu);
        tid = idle_tid;
        pthread_mutex_unlock(&idle_mu);
    }
    sleeps = 0;
    returned = 0;
    int release[2], said[2];
    pid_t tracer = start_tracer_of(tid, release, said);
    assert_int_equal(tracer_pid(), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, wait_thread, NULL), 0);
    pthread_mutex_lock(&mu);
    while (sleeps < 3 && !returned)
        pthread_cond_wait(&changed, &mu);
    int early = returned;
    pthread_mutex_unlock(&mu);
    close(release[1]);
    int status;
    assert_int_equal(waitpid(tracer, &status, 0), tracer);
    pthread_join(th, NULL);
    close(hold[1]);
    pthread_join(idle, NULL);
    close(hold[0]);
    assert_false(early);
    assert_true(returned);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_returns_at_once_untraced),
        cmocka_unit_test(test_waits_while_traced),
        cmocka_unit_test(test_waits_while_another_thread_is_traced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
