/* The collector's hand-over socket (src/launch/collect.c): a ring handed over by a process
 * of this user is drained into the recording its header names; one handed over by a
 * process of another user is refused (SO_PEERCRED), even where that user could reach the
 * socket (a directory opened to others), and nothing is written for it. Switching users
 * needs root: run as another user, the test fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "launch/collect.h"
#include "common/outpath.h"
#include "common/ring.h"
#include "common/wire.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOBODY 65534

/* In a child: as uid (-1: as it is), a ring naming path (%p: the child's pid), one NOTE
 * committed, handed over on the socket. The child's exit status: 0 once it was sent. */
static pid_t hand_over(const char *sock, const char *path, int uid)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    if (uid >= 0 && (setgid((gid_t)uid) != 0 || setuid((uid_t)uid) != 0))
        _exit(2);
    struct culeak_ring r;
    int fd;
    if (culeak_ring_create(4096, &fd, &r) != 0)
        _exit(3);
    culeak_expand_path(path, (long)getpid(), NULL, NULL, r.h->path, sizeof r.h->path);
    uint8_t rec[CULEAK_REC_HEADROOM + 64];
    size_t len = culeak_rec_finish(rec, CULEAK_REC_NOTE, culeak_put_s(rec + CULEAK_REC_HEADROOM, "hello", 5));
    uint8_t *at = culeak_ring_reserve(&r, len, 0);
    if (!at)
        _exit(4);
    memcpy(at, rec, len);
    culeak_ring_commit(&r, len);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(sock) >= sizeof a.sun_path)
        _exit(5);
    memcpy(a.sun_path, sock, strlen(sock) + 1);
    if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) != 0)
        _exit(5);
    if (culeak_ring_send_fd(s, fd) != 0) /* refused already: the collector closed the connection */
        _exit(errno == EPIPE || errno == ECONNRESET ? 0 : 6);
    char ack; /* held open until the collector has read it (it closes the connection) */
    (void)!read(s, &ack, 1);
    _exit(0);
}

/* Hands a ring over as uid and lets the collector take it: whether the recording was made. */
static int recorded_from(int uid)
{
    char dir[] = "/tmp/culeak-handover-XXXXXX", path[PATH_MAX];
    assert_non_null(mkdtemp(dir));
    assert_int_equal(chmod(dir, 0777), 0);
    snprintf(path, sizeof path, "%s/rec.culeak", dir);
    struct culeak_collector *c = culeak_collector_new();
    assert_non_null(c);
    assert_int_equal(culeak_collector_expect(c, path), 0);
    assert_int_equal(culeak_collector_child_env(c), 0);
    char sock[PATH_MAX], sock_dir[PATH_MAX];
    snprintf(sock, sizeof sock, "%s", getenv("CULEAK_RING_SOCKET"));
    snprintf(sock_dir, sizeof sock_dir, "%s", sock);
    /* the socket reachable by anyone: only SO_PEERCRED tells the users apart */
    assert_int_equal(chmod(dirname(sock_dir), 0711), 0);
    assert_int_equal(chmod(sock, 0777), 0);
    culeak_collector_started(c);
    pid_t pid = hand_over(sock, path, uid);
    assert_true(pid > 0);
    int st = 0;
    pid_t w = 0;
    for (int i = 0; i < 200 && (w = waitpid(pid, &st, WNOHANG)) == 0; i++)
        culeak_collector_poll(c, 50);
    culeak_collector_free(c);
    if (w != pid)
        assert_int_equal(waitpid(pid, &st, 0), pid);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fail_msg("the child handing its ring over (uid %d) failed: status 0x%x", uid, st);
    int made = access(path, F_OK) == 0;
    unlink(path);
    rmdir(dir);
    return made;
}

static void test_handover_of_this_user_only(void **state)
{
    (void)state;
    if (geteuid() != 0)
        fail_msg("this test switches to another user (uid %d): it must run as root", NOBODY);
    assert_true(recorded_from(-1));
    assert_false(recorded_from(NOBODY));
}

/* A ring naming a path the output pattern does not give its writer: nothing is written
 * there, the process is counted as not recorded; one naming its own path is recorded. */
static void test_recording_only_where_culeak_said(void **state)
{
    (void)state;
    char dir[] = "/tmp/culeak-impostor-XXXXXX", pattern[PATH_MAX], planted[PATH_MAX];
    assert_non_null(mkdtemp(dir));
    snprintf(pattern, sizeof pattern, "%s/rec.%%p.culeak", dir);
    snprintf(planted, sizeof planted, "%s/planted", dir);
    for (int impostor = 1; impostor >= 0; impostor--) {
        struct culeak_collector *c = culeak_collector_new();
        assert_non_null(c);
        assert_int_equal(culeak_collector_expect(c, pattern), 0);
        assert_int_equal(culeak_collector_child_env(c), 0);
        culeak_collector_started(c);
        pid_t pid = hand_over(getenv("CULEAK_RING_SOCKET"), impostor ? planted : pattern, -1);
        int st = 0;
        pid_t w = 0;
        for (int i = 0; i < 200 && (w = waitpid(pid, &st, WNOHANG)) == 0; i++)
            culeak_collector_poll(c, 50);
        culeak_collector_poll(c, 0);
        assert_int_equal(culeak_collector_unrecorded(c), impostor);
        culeak_collector_free(c);
        if (w != pid)
            assert_int_equal(waitpid(pid, &st, 0), pid);
        char own[PATH_MAX];
        culeak_expand_path(pattern, (long)pid, NULL, NULL, own, sizeof own);
        assert_int_equal(access(planted, F_OK) == 0, 0);
        assert_int_equal(access(own, F_OK) == 0, !impostor);
        unlink(own);
    }
    rmdir(dir);
}

/* Past the 4,096 rings read at once, a process is refused: said on stderr and counted as
 * not recorded (check then exits 2). The rings here are this process's own, never ended. */
static void test_refused_are_counted(void **state)
{
    (void)state;
    struct culeak_collector *c = culeak_collector_new();
    assert_non_null(c);
    assert_int_equal(culeak_collector_child_env(c), 0);
    culeak_collector_started(c);
    const char *sock = getenv("CULEAK_RING_SOCKET");
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    assert_true(strlen(sock) < sizeof a.sun_path);
    memcpy(a.sun_path, sock, strlen(sock) + 1);
    for (int i = 0; i < 4096; i++) { /* with the launched program's: one more than are read */
        struct culeak_ring r;
        int fd, s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        assert_int_equal(culeak_ring_create(4096, &fd, &r), 0);
        assert_int_equal(connect(s, (struct sockaddr *)&a, sizeof a), 0);
        assert_int_equal(culeak_ring_send_fd(s, fd), 0);
        close(s);
        close(fd);
        culeak_ring_unmap(&r);
        culeak_collector_poll(c, 0);
    }
    assert_int_equal(culeak_collector_unrecorded(c), 1);
    culeak_collector_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handover_of_this_user_only),
        cmocka_unit_test(test_recording_only_where_culeak_said),
        cmocka_unit_test(test_refused_are_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
