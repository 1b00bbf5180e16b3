/* CULEAK_HOLD_AT_START=1 (the console's launch sets it): on a ring whose reader answers,
 * the program's first allocation at a new stack waits until the reader releases it (a
 * RELEASE record in the ring's command area, and the released word bumped), until the
 * reader says it is gone, or until the reader's process is gone; without the variable,
 * or writing a file, nothing ever waits. A RELEASE lets exactly the thread of its event
 * go. A gated client makes one allocation, reads one byte of stdin, makes another. A
 * thread waits in the shim in futex(2): the tests see it in /proc/PID/task/TID/syscall,
 * never by waiting some time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_shim_harness.h"
#include "common/ring.h"
#include "common/wire.h"

#include <fcntl.h>
#include <time.h>
struct seen {
    int allocs;
    uint64_t first_seq, first_flags;
    uint64_t seq[8], tid[8], flags[8]; /* of the first 8 allocations */
};

static int on_event(void *ctx, const struct culeak_event *e)
{
    struct seen *s = ctx;
    if (e->op != CULEAK_OP_ALLOC)
        return 0;
    if (s->allocs < 8) {
        s->seq[s->allocs] = e->seq;
        s->tid[s->allocs] = e->tid;
        s->flags[s->allocs] = e->flags;
    }
    if (s->allocs++ == 0) {
        s->first_seq = e->seq;
        s->first_flags = e->flags;
    }
    return 0;
}

struct job {
    char dir[64];
    struct culeak_ring ring;
    int gate, gate_open, out, err;
    pid_t pid;
    struct culeak_decoder dec;
    struct seen seen;
};

/* Takes what the ring holds into the decoder: 1 when it held something. */
static int drain(struct job *j)
{
    const uint8_t *p;
    size_t n;
    int any = 0;
    while ((n = culeak_ring_peek(&j->ring, &p)) > 0) {
        assert_int_equal(culeak_decoder_feed(&j->dec, p, n), 0);
        culeak_ring_consume(&j->ring, n);
        any = 1;
    }
    return any;
}

static void pause_a_little(void)
{
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
}

/* Reads the stream until `allocs` allocations have arrived. */
static void read_allocs(struct job *j, int allocs)
{
    int status;
    while (j->seen.allocs < allocs) {
        if (!drain(j) && waitpid(j->pid, &status, WNOHANG) == j->pid)
            fail_msg("the program ended (status %#x) after %d of %d allocations", status, j->seen.allocs, allocs);
        pause_a_little();
    }
}

/* Starts client ARGS with a ring of this process (hold: with CULEAK_HOLD_AT_START=1), as
 * the console does, and reads its stream until its first allocation has arrived; then
 * answers as a console would (hold 1: holding on, until told otherwise below; hold 2: no
 * answer, as from a stopped console). */
static void start_client(struct job *j, int hold, const char *client, const char *const *args)
{
    char fd_env[64];
    int rfd = -1;
    assert_non_null(th_mkdtemp(j->dir, sizeof j->dir));
    assert_int_equal(culeak_ring_create(1u << 16, &rfd, &j->ring), 0);
    j->ring.h->reader_pid = (uint32_t)getpid();
    j->ring.h->console = 1;
    assert_int_equal(fcntl(rfd, F_SETFD, 0), 0);
    snprintf(fd_env, sizeof fd_env, "CULEAK_RING_FD=%d", rfd);
    int gate[2];
    assert_int_equal(pipe(gate), 0);
    j->out = th_tmpfd();
    j->err = th_tmpfd();
    const char *env[] = {fd_env, hold ? "CULEAK_HOLD_AT_START=1" : NULL, NULL};
    j->pid = th_spawn(client, args, env, 1, gate[0], j->out, j->err);
    assert_true(j->pid > 0);
    close(rfd);
    close(gate[0]);
    j->gate = gate[1];
    j->gate_open = 0;
    memset(&j->seen, 0, sizeof j->seen);
    struct culeak_sink sink = {.ctx = &j->seen, .event = on_event};
    culeak_decoder_init(&j->dec, &sink, 1);
    assert_int_equal(culeak_decoder_feed(&j->dec, (const uint8_t *)CULEAK_MAGIC, CULEAK_MAGIC_LEN), 0);
    read_allocs(j, 1);
    if (hold == 1)
        __atomic_store_n(&j->ring.h->answered, 1, __ATOMIC_RELEASE);
}

/* client_static gated 2 */
static void start(struct job *j, int hold)
{
    const char *args[] = {"gated", "2", NULL};
    start_client(j, hold, "client_static", args);
}

static void open_gate(struct job *j)
{
    assert_int_equal(write(j->gate, "g", 1), 1);
    close(j->gate);
    j->gate_open = 1;
}

/* Thread tid of the job waits in the shim (in futex(2)); fails when the job ended first. */
static void waits_in_shim(struct job *j, pid_t tid, const char *what)
{
    int status;
    if (th_wait_in_syscall(j->pid, tid, SYS_futex, ~0ul, &status) != 0)
        fail_msg("%s: the program went on and ended (status %#x) without its RELEASE", what, status);
}

/* A command as the console sends it: hold words in the header, records in the command
 * area (then the released word bumped, which wakes a held thread). */
static void send_cmd(struct job *j, uint8_t type, uint64_t v)
{
    if (type == CULEAK_CMD_HOLD_NEW || type == CULEAK_CMD_HOLD_ALL) {
        __atomic_store_n(type == CULEAK_CMD_HOLD_NEW ? &j->ring.h->hold_new : &j->ring.h->hold_all, (uint32_t)v,
                         __ATOMIC_RELEASE);
        return;
    }
    uint8_t rec[64];
    size_t n = culeak_rec_finish(rec, type, culeak_put_u(rec + CULEAK_REC_HEADROOM, v));
    assert_int_equal(culeak_ring_cmd_put(&j->ring, rec, n), 0);
    culeak_ring_wake_released(&j->ring);
}

/* Lets the client go on past its gate, reads the stream to its end, checks the exit. */
static void finish_with(struct job *j, const char *want_out)
{
    if (!j->gate_open)
        open_gate(j);
    int status;
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (waitpid(j->pid, &status, WNOHANG) != j->pid) {
        drain(j);
        pause_a_little();
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > th_wait_s()) { /* a deadline for the failure: it ends in milliseconds */
            kill(j->pid, SIGKILL);
            waitpid(j->pid, &status, 0);
            fail_msg("the program is still held %ld s after its gate opened", th_wait_s());
        }
    }
    drain(j);
    assert_int_equal(culeak_decoder_finish(&j->dec), 0);
    char out[1024];
    th_slurp(j->out, out, sizeof out);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("status %#x", status);
    assert_string_equal(out, want_out);
    culeak_decoder_free(&j->dec);
    culeak_ring_unmap(&j->ring);
    close(j->out);
    close(j->err);
    th_rmdir(j->dir);
}

static void finish(struct job *j) { finish_with(j, "client_static gated ok allocs=2 frees=2 live_bytes=0\n"); }

/* Held (the event says so), and the allocating thread waits in the shim for its RELEASE:
 * the program's own gate is opened first, so that nothing else holds it; then released. */
static void test_first_allocation_waits_for_release(void **state)
{
    (void)state;
    struct job j;
    start(&j, 1);
    assert_true(j.seen.first_flags & CULEAK_EVENT_HELD);
    open_gate(&j);
    waits_in_shim(&j, j.pid, "the first allocation");
    send_cmd(&j, CULEAK_CMD_HOLD_NEW, 0);
    send_cmd(&j, CULEAK_CMD_RELEASE, j.seen.first_seq);
    finish(&j);
    assert_int_equal(j.seen.allocs, 2);
}

/* The reader says it reads no more (a console that quits or detaches): the held thread
 * goes, never answered. */
static void test_reader_gone_releases(void **state)
{
    (void)state;
    struct job j;
    start(&j, 1);
    assert_true(j.seen.first_flags & CULEAK_EVENT_HELD);
    open_gate(&j);
    waits_in_shim(&j, j.pid, "the first allocation");
    __atomic_store_n(&j.ring.h->reader_gone, 1, __ATOMIC_RELEASE);
    culeak_ring_wake_released(&j.ring);
    finish(&j);
}

/* The reader's process dies without a word (a console killed with SIGKILL): the held
 * thread finds it gone and goes on. */
static void test_reader_killed_releases(void **state)
{
    (void)state;
    struct job j;
    start(&j, 1);
    assert_true(j.seen.first_flags & CULEAK_EVENT_HELD);
    open_gate(&j);
    waits_in_shim(&j, j.pid, "the first allocation");
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    assert_int_equal(waitpid(dead, NULL, 0), dead); /* a pid that no process has now */
    __atomic_store_n(&j.ring.h->reader_pid, (uint32_t)dead, __ATOMIC_RELEASE);
    finish(&j);
}

/* A console that does not run (stopped with Ctrl-Z: alive, but it neither answers nor
 * looks at the ring) holds the start a bounded while only: the program runs to its end
 * unanswered, and its later allocations at new stacks are not held. */
static void test_stopped_console_holds_the_start_a_while_only(void **state)
{
    (void)state;
    struct job j;
    start(&j, 2);
    assert_true(j.seen.first_flags & CULEAK_EVENT_HELD);
    finish(&j);
    assert_int_equal(j.seen.allocs, 2);
    assert_false(j.seen.flags[1] & CULEAK_EVENT_HELD);
}

/* Two threads held at once (hold all): a RELEASE of one's event lets exactly that one go;
 * the other waits on until its own. client_hostile threadgate 2: one allocation (held at
 * start, released once hold-all is on), then two threads allocate at one line. */
static void test_release_is_for_its_thread_only(void **state)
{
    (void)state;
    struct job j;
    const char *args[] = {"threadgate", "2", NULL};
    start_client(&j, 1, "client_hostile", args);
    assert_true(j.seen.first_flags & CULEAK_EVENT_HELD);
    send_cmd(&j, CULEAK_CMD_HOLD_ALL, 1); /* stored before the RELEASE that follows it */
    send_cmd(&j, CULEAK_CMD_RELEASE, j.seen.first_seq);
    open_gate(&j);
    read_allocs(&j, 3);
    for (int i = 1; i < 3; i++) {
        assert_true(j.seen.flags[i] & CULEAK_EVENT_HELD);
        waits_in_shim(&j, (pid_t)j.seen.tid[i], "a thread's allocation");
    }
    assert_true(j.seen.tid[1] != j.seen.tid[2]);
    send_cmd(&j, CULEAK_CMD_RELEASE, j.seen.seq[1]);
    unsigned long a;
    int status;
    while (th_syscall_of(j.pid, (pid_t)j.seen.tid[1], &a) != -2) /* the released thread ends */
        if (waitpid(j.pid, &status, WNOHANG) == j.pid)
            fail_msg("the program ended (status %#x) with a thread still held", status);
    waits_in_shim(&j, (pid_t)j.seen.tid[2], "the other thread, after a RELEASE not its own");
    send_cmd(&j, CULEAK_CMD_HOLD_ALL, 0);
    send_cmd(&j, CULEAK_CMD_RELEASE, j.seen.seq[2]);
    finish_with(&j, "threadgate ok\n");
    assert_int_equal(j.seen.allocs, 3);
}

/* A reader that never answers (nor closes) is never waited for without the variable. */
static void test_not_held_without_the_variable(void **state)
{
    (void)state;
    struct job j;
    start(&j, 0);
    assert_false(j.seen.first_flags & CULEAK_EVENT_HELD);
    finish(&j);
}

/* A file has no one to answer: the variable changes nothing there. */
static void test_file_recording_never_holds(void **state)
{
    (void)state;
    char dir[64], out_env[160];
    assert_non_null(th_mkdtemp(dir, sizeof dir));
    snprintf(out_env, sizeof out_env, "CULEAK_OUTPUT=%s/rec.culeak", dir);
    const char *args[] = {"gated", "2", NULL};
    const char *env[] = {out_env, "CULEAK_HOLD_AT_START=1", NULL};
    struct th_run r;
    assert_int_equal(th_run_client(&r, "client_static", args, env, 1), 0);
    if (!th_exited_ok(&r))
        fail_msg("status %#x; stderr:\n%s", r.status, r.err);
    assert_string_equal(r.out, "client_static gated ok allocs=2 frees=2 live_bytes=0\n");
    th_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_allocation_waits_for_release),
        cmocka_unit_test(test_reader_gone_releases),
        cmocka_unit_test(test_reader_killed_releases),
        cmocka_unit_test(test_stopped_console_holds_the_start_a_while_only),
        cmocka_unit_test(test_release_is_for_its_thread_only),
        cmocka_unit_test(test_not_held_without_the_variable),
        cmocka_unit_test(test_file_recording_never_holds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
