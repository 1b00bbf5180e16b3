/* The reader (console) dies mid-run: the program must finish with its normal exit status
 * and output, and the shim says so exactly once on stderr. A gated client runs half its
 * work, the test accepts, reads a little, closes, then lets the client finish. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_shim_harness.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

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
    char dir[64], sock_path[96], sock_env[160];
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    const char *args[] = {"gated", "2000", NULL};
    assert_non_null(th_mkdtemp(dir, sizeof dir));
    snprintf(sock_path, sizeof sock_path, "%s/console.sock", dir);
    snprintf(a.sun_path, sizeof a.sun_path, "%s", sock_path);
    snprintf(sock_env, sizeof sock_env, "CULEAK_SOCKET=%s", sock_path);
    int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(lfd >= 0);
    assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(lfd, 4), 0);

    int gate[2];
    assert_int_equal(pipe(gate), 0);
    int out = th_tmpfd(), err = th_tmpfd();
    const char *env[] = {sock_env, NULL};
    pid_t pid = th_spawn("client_static", args, env, 1, gate[0], out, err);
    assert_true(pid > 0);
    close(gate[0]);

    /* accept (unless the program died without connecting), take the first bytes (at
     * least the magic), then vanish */
    int status;
    struct pollfd pl = {lfd, POLLIN, 0};
    while (poll(&pl, 1, 100) == 0)
        if (waitpid(pid, &status, WNOHANG) == pid)
            fail_msg("the program ended (status %#x) without connecting", status);
    int cfd = accept(lfd, NULL, NULL);
    assert_true(cfd >= 0);
    char buf[256];
    size_t got = 0;
    while (got < 64) {
        ssize_t r = read(cfd, buf + got, sizeof buf - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    assert_true(got >= 8);
    assert_memory_equal(buf, "\x89" "CULEAK\n", 8);
    close(cfd);
    close(lfd);
    /* now the second half of the work runs against a dead reader */
    assert_int_equal(write(gate[1], "g", 1), 1);
    close(gate[1]);

    assert_int_equal(waitpid(pid, &status, 0), pid);
    struct th_run run;
    th_slurp(out, run.out, sizeof run.out);
    th_slurp(err, run.err, sizeof run.err);
    close(out);
    close(err);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("status %#x (signal %d); stderr:\n%s", status, WIFSIGNALED(status) ? WTERMSIG(status) : 0, run.err);
    assert_string_equal(run.out, "client_static gated ok allocs=2000 frees=2000 live_bytes=0\n");
    if (count_lines_with(run.err, "culeak") != 1)
        fail_msg("expected exactly one culeak line on stderr, got:\n%s", run.err);
    th_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_dies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
