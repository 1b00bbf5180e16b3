/* The console's server never waits on a peer and never spins on one: commands to a peer
 * that does not read are queued (and the peer shut down when the queue is full) instead
 * of a send loop that sleeps until it reads; at the descriptor limit a pending
 * connection is taken and closed with a reserved descriptor, so the listening socket does
 * not stay readable (the console's loop would spin on it); and no more than max_peers
 * peers are kept at once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../../src/console/server.h"
#include "wire.h"

static char dir[64];

static void stuck(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL: the server waited on a peer (still there after 30 s)\n";
    if (write(2, msg, sizeof msg - 1) < 0)
        _exit(2);
    _exit(1);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/culeak-server-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    setenv("XDG_RUNTIME_DIR", dir, 1);
    setenv("XDG_CACHE_HOME", dir, 1);
    signal(SIGALRM, stuck);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int dial(const struct server *s)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    assert_true(strlen(s->path) < sizeof a.sun_path);
    memcpy(a.sun_path, s->path, strlen(s->path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    int small = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

static int pending(const struct server *s)
{
    struct pollfd p = {s->lfd, POLLIN, 0};
    return poll(&p, 1, 0) > 0;
}

static void test_peer_that_never_reads(void **state)
{
    (void)state;
    struct server s;
    char err[256];
    struct model *m = model_new(NULL);
    assert_int_equal(server_open(&s, err, sizeof err), 0);
    int peer = dial(&s);
    int refused;
    struct conn *k = server_accept(&s, m, &refused);
    assert_non_null(k);
    uint64_t watch[257] = {256};
    for (int i = 1; i < 257; i++)
        watch[i] = (uint64_t)i << 40;
    alarm(30);
    int rc = 0, sends = 0;
    while (rc == 0 && sends < 100000) { /* ~3 KiB each: the queue fills long before */
        rc = conn_send(k, CULEAK_CMD_WATCH, watch, 257);
        sends++;
    }
    alarm(0);
    assert_int_equal(rc, -1); /* the queue's limit, not a wait */
    assert_true(k->outq_len <= CONN_OUTQ_MAX);
    /* shut down: the peer's next read (after what it was sent) ends the connection */
    char buf[4096];
    ssize_t n;
    while ((n = read(peer, buf, sizeof buf)) > 0)
        ;
    assert_int_equal(n, 0);
    close(peer);
    conn_close(k);
    server_close(&s);
    model_free(m);
}

static void test_turned_away_at_descriptor_limit(void **state)
{
    (void)state;
    struct server s;
    char err[256];
    struct model *m = model_new(NULL);
    assert_int_equal(server_open(&s, err, sizeof err), 0);
    int peers[8];
    for (int i = 0; i < 8; i++)
        peers[i] = dial(&s);
    /* no descriptor left in this process */
    struct rlimit old, rl;
    getrlimit(RLIMIT_NOFILE, &old);
    int top = fcntl(0, F_DUPFD, 0);
    assert_true(top >= 0);
    close(top);
    rl = old;
    rl.rlim_cur = (rlim_t)top;
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
    int accepted = 0, away = 0;
    for (int turns = 0; turns < 100 && pending(&s); turns++) {
        int refused = 0;
        struct conn *k = server_accept(&s, m, &refused);
        accepted += k != NULL;
        away += refused == 2;
        if (k)
            conn_close(k);
    }
    setrlimit(RLIMIT_NOFILE, &old);
    if (pending(&s))
        fail_msg("the listening socket is still readable at the descriptor limit (%d accepted, %d turned away)",
                 accepted, away);
    assert_int_equal(accepted, 0);
    assert_int_equal(away, 8);
    for (int i = 0; i < 8; i++)
        close(peers[i]);
    server_close(&s);
    model_free(m);
}

static void test_peers_bounded(void **state)
{
    (void)state;
    struct server s;
    char err[256];
    struct model *m = model_new(NULL);
    assert_int_equal(server_open(&s, err, sizeof err), 0);
    assert_true(s.max_peers >= 1);
    s.max_peers = 3;
    int peers[5];
    struct conn *kept[5] = {0};
    int accepted = 0, away = 0;
    for (int i = 0; i < 5; i++) {
        peers[i] = dial(&s);
        int refused = 0;
        struct conn *k = server_accept(&s, m, &refused);
        if (k)
            kept[accepted++] = k;
        away += refused == 2;
    }
    assert_int_equal(accepted, 3);
    assert_int_equal(away, 2);
    assert_false(pending(&s));
    conn_close(kept[0]); /* one leaves: another may come */
    int peer = dial(&s), refused = 0;
    struct conn *k = server_accept(&s, m, &refused);
    assert_non_null(k);
    conn_close(k);
    close(peer);
    for (int i = 1; i < accepted; i++)
        conn_close(kept[i]);
    for (int i = 0; i < 5; i++)
        close(peers[i]);
    server_close(&s);
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_peer_that_never_reads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_turned_away_at_descriptor_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_peers_bounded, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
