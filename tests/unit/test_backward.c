/* The Python frames a backward pass's threads borrow (src/shim/backward.c, compiled in
 * here, with the shim functions it calls played by this file: every thread a Python thread
 * whose frames are what it set in `frames`): a native thread's stack gets the marker and
 * the frames of the calls inside backward() when they all have the same frames; only the
 * marker when their frames differ or when a call found no slot (its frames unknown); a
 * forked child's backward() is a call of its own, not its parent's nested one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/shim/backward.c"

#define MARKER ((uintptr_t)0xb0b0)
#define MAX 256

unsigned culeak_fork_gen;
CULEAK_TLS uint32_t culeak_tid_known;
CULEAK_TLS unsigned culeak_tid_gen;

uint32_t culeak_tid_ask(void)
{
    culeak_tid_known = (uint32_t)gettid();
    culeak_tid_gen = __atomic_load_n(&culeak_fork_gen, __ATOMIC_RELAXED);
    return culeak_tid_known;
}

static CULEAK_TLS int depth;
int culeak_enter(void)
{
    return depth++ == 0;
}
void culeak_leave(void)
{
    depth--;
}
int culeak_py_off; /* 0: culeak_py_enabled asks the stand-in below */
int culeak_py_enabled_slow(void)
{
    return 1;
}
uintptr_t culeak_py_backward_marker(void)
{
    return MARKER;
}

/* The calling thread's Python frames: `nframes` ids from `frame0` on, innermost first. */
static CULEAK_TLS uintptr_t frame0;
static CULEAK_TLS int nframes;
int culeak_py_frames_now(uintptr_t *ids, int max)
{
    int n = nframes < max ? nframes : max;
    for (int i = 0; i < n; i++)
        ids[i] = frame0 + (uintptr_t)i;
    return n;
}

/* What a native thread with one frame (0x1000) records now: the count; ips filled. */
static int native_stack(uintptr_t *ips)
{
    ips[0] = 0x1000;
    return culeak_backward_borrow(ips, 1, MAX);
}

/* ips[0..n) is the native frame, the marker, then `k` Python frames from frame0 on. */
static void assert_borrowed(const uintptr_t *ips, int n, uintptr_t from, int k)
{
    assert_int_equal(n, 2 + k);
    assert_int_equal(ips[0], 0x1000);
    assert_int_equal(ips[1], MARKER);
    for (int i = 0; i < k; i++)
        assert_int_equal(ips[2 + i], from + (uintptr_t)i);
}

/* ---- threads inside backward() at once ---- */

struct caller {
    uintptr_t frame0;
    pthread_barrier_t *entered, *leave;
};

static void *call_backward(void *arg)
{
    struct caller *c = arg;
    frame0 = c->frame0;
    nframes = 3;
    culeak_backward_enter();
    pthread_barrier_wait(c->entered);
    pthread_barrier_wait(c->leave); /* the native thread records meanwhile */
    culeak_backward_leave();
    return NULL;
}

/* `n` threads inside backward() at once (the first `same` with frames from 0x7000, the
 * others each their own); the native stack recorded meanwhile goes to ips. */
static int meet(int n, int same, uintptr_t *ips)
{
    pthread_t th[SLOTS + 4];
    struct caller c[SLOTS + 4];
    pthread_barrier_t entered, leave;
    assert_true(n <= SLOTS + 4);
    pthread_barrier_init(&entered, NULL, (unsigned)n + 1);
    pthread_barrier_init(&leave, NULL, (unsigned)n + 1);
    for (int i = 0; i < n; i++) {
        c[i] = (struct caller){i < same ? 0x7000 : 0x7000 + 0x100 * (uintptr_t)(i + 1), &entered, &leave};
        assert_int_equal(pthread_create(&th[i], NULL, call_backward, &c[i]), 0);
    }
    pthread_barrier_wait(&entered);
    int k = native_stack(ips);
    pthread_barrier_wait(&leave);
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&entered);
    pthread_barrier_destroy(&leave);
    return k;
}

static void test_no_call_borrows_nothing(void **s)
{
    uintptr_t ips[MAX];
    assert_int_equal(native_stack(ips), 1);
}

static void test_calls_with_the_same_frames_lend_them(void **s)
{
    uintptr_t ips[MAX];
    assert_borrowed(ips, meet(SLOTS, SLOTS, ips), 0x7000, 3);
    assert_int_equal(native_stack(ips), 1); /* all left */
}

static void test_calls_with_other_frames_lend_the_marker_only(void **s)
{
    uintptr_t ips[MAX];
    assert_borrowed(ips, meet(3, 2, ips), 0, 0);
}

/* More calls than slots, all with the same frames: the one without a slot is not seen,
 * so nothing says its frames are the others'. */
static void test_a_call_beyond_the_slots_lends_the_marker_only(void **s)
{
    uintptr_t ips[MAX];
    assert_borrowed(ips, meet(SLOTS + 1, SLOTS + 1, ips), 0, 0);
    assert_int_equal(native_stack(ips), 1);
    assert_borrowed(ips, meet(SLOTS, SLOTS, ips), 0x7000, 3); /* the overflow was left */
}

/* ---- fork inside backward() ---- */

/* The parent is inside backward(); its forked child (as process.c's fork handler leaves
 * it) calls backward() with other frames: that call is the child's own, so its native
 * threads borrow its frames, and leaving it leaves nothing in flight. Exit status: which
 * check failed. */
static int forked_child(void)
{
    __atomic_add_fetch(&culeak_fork_gen, 1, __ATOMIC_RELAXED);
    culeak_backward_fork_child();
    uintptr_t ips[MAX];
    if (native_stack(ips) != 1)
        return 1; /* the parent's call is not the child's */
    frame0 = 0x9000;
    culeak_backward_enter();
    int n = native_stack(ips);
    if (n != 4 || ips[1] != MARKER || ips[2] != 0x9000 || ips[3] != 0x9001)
        return 2;
    culeak_backward_leave();
    if (native_stack(ips) != 1)
        return 3;
    return 0;
}

static void test_a_forked_childs_backward_is_its_own(void **s)
{
    frame0 = 0x7000;
    nframes = 2;
    culeak_backward_enter();
    uintptr_t ips[MAX];
    assert_borrowed(ips, native_stack(ips), 0x7000, 2);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(forked_child());
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_borrowed(ips, native_stack(ips), 0x7000, 2); /* the parent's call goes on */
    culeak_backward_leave();
    assert_int_equal(native_stack(ips), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_call_borrows_nothing),
        cmocka_unit_test(test_calls_with_the_same_frames_lend_them),
        cmocka_unit_test(test_calls_with_other_frames_lend_the_marker_only),
        cmocka_unit_test(test_a_call_beyond_the_slots_lends_the_marker_only),
        cmocka_unit_test(test_a_forked_childs_backward_is_its_own),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
