/* The console's side of the rings never waits on a process and never spins on one:
 * commands to a process that takes none are queued up to a bound (never a loop that
 * waits until it takes them); a peer that connects to the hand-over socket and sends
 * nothing, or many of them, never stops the console from taking the ring of a process
 * that does hand one over; a WATCH of many stacks is cut into records that fit the
 * command area, and hold words are words of the header; events a process dropped before
 * it ended are told at its stream's end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../../src/console/ring_reader.h"
#include "common/ring.h"
#include "stream_builder.h"
#include "common/wire.h"

static char dir[64];

static void stuck(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL: the console waited on a peer (still there after 30 s)\n";
    if (write(2, msg, sizeof msg - 1) < 0)
        _exit(2);
    _exit(1);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/culeak-readers-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    setenv("XDG_RUNTIME_DIR", dir, 1);
    setenv("XDG_CACHE_HOME", dir, 1);
    setenv("CULEAK_RING_SIZE", "4096", 1);
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

static int dial(const struct ring_readers *s)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    assert_true(strlen(s->path) < sizeof a.sun_path);
    memcpy(a.sun_path, s->path, strlen(s->path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

/* A process's hand-over, as the shim makes it: a ring of its own, claimed, sent once. */
static void hand_over(const struct ring_readers *s, struct culeak_ring *r)
{
    int rfd = -1;
    assert_int_equal(culeak_ring_create(4096, &rfd, r), 0);
    assert_int_equal(culeak_ring_claim(r, (uint32_t)getpid()), 0);
    int fd = dial(s);
    assert_int_equal(culeak_ring_send_fd(fd, rfd), 0);
    close(fd);
    close(rfd);
}

/* A console's ring readers and a process connected to it through the ring it handed over. */
struct peer {
    struct ring_readers s;
    struct model *m;
    struct culeak_ring mine; /* the process's side of its ring */
    struct ring_reader *k;          /* the console's side */
};

static void peer_open(struct peer *p)
{
    char err[256];
    p->m = model_new(NULL);
    assert_int_equal(ring_readers_open(&p->s, err, sizeof err), 0);
}

static void peer_connect(struct peer *p)
{
    hand_over(&p->s, &p->mine);
    alarm(30); /* a hand-over taken is never waited for */
    p->k = ring_readers_accept(&p->s, p->m);
    alarm(0);
    assert_non_null(p->k);
}

/* Closes both sides; the ring's reader_gone word once the console closed. */
static uint32_t peer_close(struct peer *p)
{
    ring_reader_close(p->k);
    ring_readers_close(&p->s);
    uint32_t gone = __atomic_load_n(&p->mine.h->reader_gone, __ATOMIC_ACQUIRE);
    culeak_ring_unmap(&p->mine);
    model_free(p->m);
    return gone;
}

/* Before any HELLO (a ring corrupt from its start) the connection knows its writer's pid,
 * as the hub has it, to tell it by; a stream done gives its ring back to the hub. */
static void test_writer_known_and_ring_given_back(void **state)
{
    (void)state;
    struct peer p;
    peer_open(&p);
    peer_connect(&p);
    assert_int_equal(p.k->proc, -1);
    assert_int_equal(p.k->pid, (long)getpid());
    size_t slot = p.k->ring_i;
    assert_non_null(culeak_hub_ring(p.s.hub, slot));
    ring_reader_done(p.k);
    assert_null(p.k->ring);
    assert_null(culeak_hub_ring(p.s.hub, slot));
    assert_int_equal(__atomic_load_n(&p.mine.h->reader_gone, __ATOMIC_ACQUIRE), 1); /* the writer is told */
    peer_close(&p);
}

static void test_process_that_takes_no_commands(void **state)
{
    (void)state;
    struct peer p;
    peer_open(&p);
    peer_connect(&p);
    struct ring_reader *k = p.k;
    alarm(30);
    uint64_t watch[257] = {256};
    for (int i = 1; i < 257; i++)
        watch[i] = (uint64_t)i << 40;
    int rc = 0, sends = 0;
    while (rc == 0 && sends < 100000) { /* ~3 KiB each: the queue fills long before */
        rc = ring_reader_send(k, CULEAK_CMD_WATCH, watch, 257);
        sends++;
    }
    alarm(0);
    assert_int_equal(rc, -1); /* the queue's limit, not a wait */
    assert_true(k->outq_len <= RING_READER_OUTQ_MAX);
    assert_true(sends > 1);
    assert_int_equal(peer_close(&p), 1); /* the console let it go when it closed */
}

static void test_silent_peers_never_stop_a_hand_over(void **state)
{
    (void)state;
    struct peer p;
    peer_open(&p);
    int silent[40];
    for (int i = 0; i < 40; i++) /* more than the hub keeps waiting */
        silent[i] = dial(&p.s);
    alarm(30);
    assert_null(ring_readers_accept(&p.s, p.m)); /* nothing came: no wait for it */
    alarm(0);
    peer_connect(&p);
    assert_int_equal(p.k->ring->h->pid, p.mine.h->pid);
    assert_int_equal(p.k->ring->h->reader_pid, (uint32_t)getpid());
    for (int i = 0; i < 40; i++)
        close(silent[i]);
    peer_close(&p);
}

static void test_commands_in_the_ring(void **state)
{
    (void)state;
    struct peer p;
    peer_open(&p);
    peer_connect(&p);
    struct ring_reader *k = p.k;
    struct culeak_ring *mine = &p.mine;
    uint64_t on = 1, seq = 77;
    assert_int_equal(ring_reader_send(k, CULEAK_CMD_HOLD_ALL, &on, 1), 0);
    assert_int_equal(mine->h->hold_all, 1);
    assert_int_equal(mine->h->hold_new, 0);
    uint32_t gen = mine->h->released;
    assert_int_equal(ring_reader_send(k, CULEAK_CMD_RELEASE, &seq, 1), 0);
    assert_true(mine->h->released != gen); /* a held thread is woken to take it */
    uint64_t watch[301] = {300};
    for (int i = 1; i < 301; i++)
        watch[i] = (uint64_t)i;
    assert_int_equal(ring_reader_send(k, CULEAK_CMD_WATCH, watch, 301), 0);
    /* the writer's side: RELEASE 77, then the 300 stacks in WATCH records that fit */
    uint8_t buf[CULEAK_RING_CMD];
    size_t stacks = 0, releases = 0, off = 0, have;
    for (int round = 0; round < 4; round++) {
        have = culeak_ring_cmd_take(mine, buf, sizeof buf);
        off = 0;
        while (off < have) {
            uint8_t type;
            const uint8_t *payload;
            size_t plen;
            long used = culeak_next_record(buf + off, have - off, &type, &payload, &plen);
            assert_true(used > 0);
            struct culeak_cursor c = {payload, payload + plen, 0};
            if (type == CULEAK_CMD_RELEASE) {
                assert_int_equal(culeak_get_u(&c), 77);
                releases++;
            } else {
                assert_int_equal(type, CULEAK_CMD_WATCH);
                uint64_t n = culeak_get_u(&c);
                for (uint64_t i = 0; i < n; i++)
                    assert_int_equal(culeak_get_u(&c), ++stacks);
            }
            off += (size_t)used;
        }
        ring_reader_flush_out(k); /* what did not fit goes now */
    }
    assert_int_equal(releases, 1);
    assert_int_equal(stacks, 300);
    peer_close(&p);
}

/* Events a process dropped after its last record (it ended while the console was stopped)
 * are told at its stream's end: a LOST record with their count and seqs, then the end. */
static void test_lost_before_the_end_are_told(void **state)
{
    (void)state;
    struct peer p;
    peer_open(&p);
    peer_connect(&p);
    struct sb *hello = sb_new(); /* the process's first record, then 5 events dropped */
    sb_hello(hello, (uint64_t)getpid(), "job", NULL);
    size_t hn = hello->n - CULEAK_MAGIC_LEN;
    uint8_t *at = culeak_ring_reserve(&p.mine, hn, 0);
    assert_non_null(at);
    memcpy(at, hello->buf + CULEAK_MAGIC_LEN, hn);
    culeak_ring_commit(&p.mine, hn);
    sb_free(hello);
    for (uint64_t seq = 40; seq < 45; seq++)
        culeak_ring_drop(&p.mine, seq);
    culeak_ring_end(&p.mine);
    uint8_t buf[256];
    assert_int_equal(ring_reader_pump(p.k, buf, sizeof buf, 1), (long)hn);
    long n = ring_reader_pump(p.k, buf, sizeof buf, 1);
    assert_true(n > 0);
    uint8_t type;
    const uint8_t *payload;
    size_t plen;
    assert_int_equal(culeak_next_record(buf, (size_t)n, &type, &payload, &plen), n);
    assert_int_equal(type, CULEAK_REC_LOST);
    struct culeak_cursor c = {payload, payload + plen, 0};
    assert_int_equal(culeak_get_u(&c), 5);
    assert_int_equal(culeak_get_u(&c), 40);
    assert_int_equal(culeak_get_u(&c), 44);
    assert_int_equal(ring_reader_pump(p.k, buf, sizeof buf, 1), 0); /* told once, then the end */
    peer_close(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_writer_known_and_ring_given_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_process_that_takes_no_commands, setup, teardown),
        cmocka_unit_test_setup_teardown(test_silent_peers_never_stop_a_hand_over, setup, teardown),
        cmocka_unit_test_setup_teardown(test_commands_in_the_ring, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lost_before_the_end_are_told, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
