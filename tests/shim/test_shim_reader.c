/* The reader (a console) dies mid-run, killed without a word: the shim notices (its
 * flush thread looks at the reader's process), says so exactly once on stderr and stops
 * tracing; the program finishes with its normal exit status and output. A gated client
 * runs half its work, the test reads a little of its ring and then passes for dead (the
 * ring names a reader pid no process has), waits for the shim's word, and lets the client
 * finish. */
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

static int count_lines_with(const char *text, const char *needle)
{
    int n = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf - 1 ? len : sizeof buf - 1), line);
        n += strstr(buf, needle) != NULL;
        line += len + (end != NULL);
    }
    return n;
}

static void test_reader_dies(void **s)
{
    (void)s;
    char dir[64], fd_env[64];
    const char *args[] = {"gated", "2000", NULL};
    assert_non_null(th_mkdtemp(dir, sizeof dir));
    struct culeak_ring ring;
    int rfd = -1;
    assert_int_equal(culeak_ring_create(1u << 16, &rfd, &ring), 0);
    ring.h->reader_pid = (uint32_t)getpid();
    ring.h->console = 1;
    assert_int_equal(fcntl(rfd, F_SETFD, 0), 0);
    snprintf(fd_env, sizeof fd_env, "CULEAK_RING_FD=%d", rfd);

    int gate[2];
    assert_int_equal(pipe(gate), 0);
    int out = th_tmpfd(), err = th_tmpfd();
    const char *env[] = {fd_env, NULL};
    pid_t pid = th_spawn("client_static", args, env, 1, gate[0], out, err);
    assert_true(pid > 0);
    close(rfd);
    close(gate[0]);

    /* take the first records (HELLO at least), then vanish */
    int status;
    const uint8_t *p;
    size_t n;
    struct timespec ms = {0, 1000000};
    while ((n = culeak_ring_peek(&ring, &p)) == 0) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            fail_msg("the program ended (status %#x) without writing its ring", status);
        nanosleep(&ms, NULL);
    }
    assert_int_equal(p[0], CULEAK_REC_HELLO);
    culeak_ring_consume(&ring, n);
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    assert_int_equal(waitpid(dead, NULL, 0), dead); /* a pid no process has now */
    __atomic_store_n(&ring.h->reader_pid, (uint32_t)dead, __ATOMIC_RELEASE);
    /* the shim's word comes once it looked (th_wait_s, a minute, is far more than it
     * takes: a deadline for the failure, as the e2e harness's waits) */
    char text[4096];
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (text[0] = 0; !strstr(text, "culeak");) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            fail_msg("the program ended (status %#x) before the shim said the reader was gone", status);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > th_wait_s()) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            fail_msg("the shim never noticed that its reader was gone");
        }
        nanosleep(&ms, NULL);
        th_slurp(err, text, sizeof text);
    }
    /* now the second half of the work runs against a dead reader */
    assert_int_equal(write(gate[1], "g", 1), 1);
    close(gate[1]);

    assert_int_equal(waitpid(pid, &status, 0), pid);
    struct th_run run;
    th_slurp(out, run.out, sizeof run.out);
    th_slurp(err, run.err, sizeof run.err);
    close(out);
    close(err);
    culeak_ring_unmap(&ring);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("status %#x (signal %d); stderr:\n%s", status, WIFSIGNALED(status) ? WTERMSIG(status) : 0, run.err);
    assert_string_equal(run.out, "client_static gated ok allocs=2000 frees=2000 live_bytes=0\n");
    if (count_lines_with(run.err, "culeak") != 1)
        fail_msg("expected exactly one culeak line on stderr, got:\n%s", run.err);
    assert_non_null(strstr(run.err, "console went away"));
    th_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_dies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
