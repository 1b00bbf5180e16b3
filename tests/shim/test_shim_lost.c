/* A shared ring whose reader lags (src/shim/stream.c, src/common/ring.c): the program
 * never waits longer than the writer's bounded wait, and what it could not write is told
 * by LOST records whose ranges are exact. The reader here takes nothing until the
 * writer dropped an event (the header's lost word), then everything, again and again,
 * so each gap is closed by a LOST record followed at once by the next event: the
 * decoded events and LOST ranges must cover every seq once, each LOST record's first
 * seq right after the event before it, its last right before the event after it, its
 * count their difference plus one; an event after a gap is no repeat of the one before
 * it (its seq does not follow). */
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

#define ROUNDS 3000 /* client_static long ROUNDS 0: an allocation and its free each */

struct seen {
    uint64_t events, lost, gaps, last_seq, lost_last;
    int after_gap;   /* the next event must follow the last LOST's range */
    char why[160];
};

static void bad(struct seen *s, const char *what, uint64_t a, uint64_t b)
{
    if (!s->why[0])
        snprintf(s->why, sizeof s->why, "%s (%llu, %llu)", what, (unsigned long long)a, (unsigned long long)b);
}

static int on_event(void *ctx, const struct culeak_event *e)
{
    struct seen *s = ctx;
    if (s->after_gap && e->seq != s->lost_last + 1)
        bad(s, "the event after a LOST record does not follow its range", e->seq, s->lost_last);
    if (!s->after_gap && e->seq != s->last_seq + 1)
        bad(s, "an event's seq does not follow the one before", e->seq, s->last_seq);
    s->after_gap = 0;
    s->last_seq = e->seq;
    s->events++;
    return 0;
}

static int on_lost(void *ctx, uint64_t count, uint64_t first, uint64_t last)
{
    struct seen *s = ctx;
    if (first != s->last_seq + 1)
        bad(s, "a LOST record's first seq is not the one after the last event", first, s->last_seq);
    if (last < first || count != last - first + 1)
        bad(s, "a LOST record's count is not its range's", count, last - first + 1);
    s->lost += count;
    s->gaps++;
    s->lost_last = last;
    s->last_seq = last;
    s->after_gap = 1;
    return 0;
}

static void drain(struct culeak_ring *r, struct culeak_decoder *d)
{
    const uint8_t *p;
    size_t n;
    while ((n = culeak_ring_peek(r, &p)) > 0) {
        assert_int_equal(culeak_decoder_feed(d, p, n), 0);
        culeak_ring_consume(r, n);
    }
}

static void test_gaps_told_exactly(void **st)
{
    struct culeak_ring r;
    int rfd = -1;
    assert_int_equal(culeak_ring_create(4096, &rfd, &r), 0);
    r.h->reader_pid = (uint32_t)getpid();
    assert_int_equal(fcntl(rfd, F_SETFD, 0), 0);
    char fd_env[64], rounds[16];
    snprintf(fd_env, sizeof fd_env, "CULEAK_RING_FD=%d", rfd);
    snprintf(rounds, sizeof rounds, "%d", ROUNDS);
    const char *env[] = {fd_env, NULL}, *args[] = {"long", rounds, "0", NULL};
    int out = th_tmpfd(), err = th_tmpfd();
    pid_t pid = th_spawn("client_static", args, env, 1, -1, out, err);
    assert_true(pid > 0);
    close(rfd);
    struct seen s = {0};
    struct culeak_sink sink = {.ctx = &s, .event = on_event, .lost = on_lost};
    struct culeak_decoder d;
    culeak_decoder_init(&d, &sink, 1);
    assert_int_equal(culeak_decoder_feed(&d, (const uint8_t *)CULEAK_MAGIC, CULEAK_MAGIC_LEN), 0);
    int status = 0, drains = 0;
    uint64_t lost_seen = 0;
    struct timespec t0, now, tick = {0, 1000000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int ended = waitpid(pid, &status, WNOHANG) == pid;
        uint64_t lost = __atomic_load_n(&r.h->lost, __ATOMIC_ACQUIRE);
        if (lost != lost_seen || ended) { /* a drop: now take everything */
            lost_seen = lost;
            drain(&r, &d);
            drains++;
        }
        if (ended)
            break;
        nanosleep(&tick, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec > th_wait_s()) { /* only a failure waits this long */
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            fail_msg("the program did not end within %ld s beside a lagging reader", th_wait_s());
        }
    }
    drain(&r, &d);
    assert_int_equal(culeak_decoder_finish(&d), 0);
    culeak_decoder_free(&d);
    /* what it dropped after its last record: told at the stream's end, as a reader does */
    uint64_t first = 0, last = 0, end_lost = culeak_ring_untold(&r, &first, &last);
    if (end_lost)
        on_lost(&s, end_lost, first, last);
    char buf[4096];
    th_slurp(out, buf, sizeof buf);
    close(out);
    close(err);
    culeak_ring_unmap(&r);
    printf("# %d rounds: %llu events read, %llu lost in %llu gaps, %d drains\n", ROUNDS,
           (unsigned long long)s.events, (unsigned long long)s.lost, (unsigned long long)s.gaps, drains);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_non_null(strstr(buf, "client_static long ok"));
    if (s.why[0])
        fail_msg("%s", s.why);
    assert_true(s.gaps >= 2);                          /* the reader did lag, more than once */
    assert_int_equal(s.events + s.lost, 2 * ROUNDS);   /* every event read or told lost */
    assert_int_equal(s.last_seq, 2 * ROUNDS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gaps_told_exactly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
