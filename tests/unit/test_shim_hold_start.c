/* CULEAK_HOLD_AT_START=1 (the console's launch sets it): on a socket, the program's first
 * allocation at a new stack waits until the reader answers (RELEASE) or goes away; without
 * the variable, or writing a file, nothing ever waits. A gated client makes one allocation,
 * reads one byte of stdin, makes another. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_shim_harness.h"
#include "wire.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

struct seen {
    int allocs;
    uint64_t first_seq, first_flags;
};

static int on_event(void *ctx, const struct culeak_event *e)
{
    struct seen *s = ctx;
    if (e->op == CULEAK_OP_ALLOC && s->allocs++ == 0) {
        s->first_seq = e->seq;
        s->first_flags = e->flags;
    }
    return 0;
}

struct job {
    char dir[64];
    int lfd, cfd, gate, out, err;
    pid_t pid;
    struct culeak_decoder dec;
    struct seen seen;
};

/* Starts client_static gated 2 on a listening socket (hold: with CULEAK_HOLD_AT_START=1)
 * and reads its stream until its first allocation has arrived. */
static void start(struct job *j, int hold)
{
    char sock_path[96], sock_env[160];
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    assert_non_null(th_mkdtemp(j->dir, sizeof j->dir));
    snprintf(sock_path, sizeof sock_path, "%s/console.sock", j->dir);
    snprintf(a.sun_path, sizeof a.sun_path, "%s", sock_path);
    snprintf(sock_env, sizeof sock_env, "CULEAK_SOCKET=%s", sock_path);
    j->lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(j->lfd >= 0);
    assert_int_equal(bind(j->lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(j->lfd, 4), 0);
    int gate[2];
    assert_int_equal(pipe(gate), 0);
    j->out = th_tmpfd();
    j->err = th_tmpfd();
    const char *args[] = {"gated", "2", NULL};
    const char *env[] = {sock_env, hold ? "CULEAK_HOLD_AT_START=1" : NULL, NULL};
    j->pid = th_spawn("client_static", args, env, 1, gate[0], j->out, j->err);
    assert_true(j->pid > 0);
    close(gate[0]);
    j->gate = gate[1];
    int status;
    struct pollfd pl = {j->lfd, POLLIN, 0};
    while (poll(&pl, 1, 100) == 0)
        if (waitpid(j->pid, &status, WNOHANG) == j->pid)
            fail_msg("the program ended (status %#x) without connecting", status);
    j->cfd = accept(j->lfd, NULL, NULL);
    assert_true(j->cfd >= 0);
    memset(&j->seen, 0, sizeof j->seen);
    struct culeak_sink sink = {.ctx = &j->seen, .event = on_event};
    culeak_decoder_init(&j->dec, &sink, 1);
    char buf[4096];
    while (!j->seen.allocs) {
        ssize_t r = read(j->cfd, buf, sizeof buf);
        if (r <= 0)
            fail_msg("the stream ended before the first allocation");
        assert_int_equal(culeak_decoder_feed(&j->dec, buf, (size_t)r), 0);
    }
}

static void send_cmd(int fd, uint8_t type, uint64_t v)
{
    uint8_t rec[64];
    size_t n = culeak_rec_finish(rec, type, culeak_put_u(rec + CULEAK_REC_HEADROOM, v));
    assert_int_equal(write(fd, rec, n), (ssize_t)n);
}

/* Lets the client go on past its gate, reads the stream to its end, checks the exit. */
static void finish(struct job *j)
{
    assert_int_equal(write(j->gate, "g", 1), 1);
    close(j->gate);
    char buf[4096];
    ssize_t r;
    while (j->cfd >= 0 && (r = read(j->cfd, buf, sizeof buf)) > 0)
        culeak_decoder_feed(&j->dec, buf, (size_t)r);
    int status;
    assert_int_equal(waitpid(j->pid, &status, 0), j->pid);
    char out[1024];
    th_slurp(j->out, out, sizeof out);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("status %#x", status);
    assert_string_equal(out, "client_static gated ok allocs=2 frees=2 live_bytes=0\n");
    culeak_decoder_free(&j->dec);
    if (j->cfd >= 0)
        close(j->cfd);
    close(j->lfd);
    close(j->out);
    close(j->err);
    th_rmdir(j->dir);
}

/* Held (the event says so: the allocating thread waits for its RELEASE), then released. */
static void test_first_allocation_waits_for_release(void **state)
{
    (void)state;
    struct job j;
    start(&j, 1);
    assert_true(j.seen.first_flags & CULEAK_EVENT_HELD);
    send_cmd(j.cfd, CULEAK_CMD_HOLD_NEW, 0);
    send_cmd(j.cfd, CULEAK_CMD_RELEASE, j.seen.first_seq);
    finish(&j);
    assert_int_equal(j.seen.allocs, 2);
}

static void test_reader_gone_releases(void **state)
{
    (void)state;
    struct job j;
    start(&j, 1);
    assert_true(j.seen.first_flags & CULEAK_EVENT_HELD);
    close(j.cfd); /* never answered: the program must still finish */
    j.cfd = -1;
    finish(&j);
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
        cmocka_unit_test(test_not_held_without_the_variable),
        cmocka_unit_test(test_file_recording_never_holds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
