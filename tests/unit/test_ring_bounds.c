/* The shared ring's numbers at their limits (src/common/ring.c): the writer's bounded wait
 * measured on a fake clock in its unit (milliseconds, across a second's end, with no
 * timing of the machine's), the smallest ring made and mapped, a mapped file's size
 * counted with its header and sealed against shrinking (not growing), the largest ring a
 * reader maps, a command record that fills the command ring exactly, and a gap's first
 * and last seqs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/ring.h"
#include "common/wire.h"

/* ---- a fake clock: each sleep moves it on by `step` ns and is kept ---- */
static struct timespec fake_now;
static long step, slept[64];
static int nslept;

static int fake_clock(clockid_t id, struct timespec *t)
{
    assert_int_equal(id, CLOCK_MONOTONIC);
    *t = fake_now;
    return 0;
}

static void fake_sleep(uint32_t *word, uint32_t val, long ns)
{
    (void)word;
    (void)val;
    assert_true(nslept < 64);
    slept[nslept++] = ns;
    fake_now.tv_nsec += step;
    fake_now.tv_sec += fake_now.tv_nsec / 1000000000L;
    fake_now.tv_nsec %= 1000000000L;
}

static void fill(struct culeak_ring *r)
{
    uint8_t *p;
    while ((p = culeak_ring_reserve(r, 100, 0)) != NULL) {
        memset(p, CULEAK_REC_PAD, 100);
        culeak_ring_commit(r, 100);
    }
}

/* A full ring, the reader stopped: the writer sleeps for what is left of wait_ms, in
 * nanoseconds, and gives up once the clock says wait_ms passed. */
static void wait_on(long sec, long nsec, long step_ns, int wait_ms)
{
    struct culeak_ring r;
    int fd;
    assert_int_equal(culeak_ring_create(4096, &fd, &r), 0);
    fill(&r);
    fake_now = (struct timespec){sec, nsec};
    step = step_ns;
    nslept = 0;
    culeak_ring_clock = fake_clock;
    culeak_ring_sleep = fake_sleep;
    uint8_t *p = culeak_ring_reserve(&r, 100, wait_ms);
    culeak_ring_clock = clock_gettime;
    assert_null(p);
    long want = (long)wait_ms * 1000000L, total = 0;
    printf("# wait %d ms from %ld.%09ld in steps of %ld ns: %d sleeps, the first %ld ns\n", wait_ms, sec, nsec,
           step_ns, nslept, slept[0]);
    for (int i = 0; i < nslept; i++) {
        assert_int_equal(slept[i], want - total); /* what is left, in ns */
        total += step_ns;
    }
    assert_int_equal(nslept, (want + step_ns - 1) / step_ns);
    culeak_ring_unmap(&r);
    close(fd);
}

static void test_wait_in_milliseconds(void **state)
{
    wait_on(7, 0, 10000000L, 50); /* 50 ms: five sleeps of 10 ms */
    wait_on(7, 0, 50000000L, 50); /* one sleep of the whole 50 ms */
    wait_on(7, 0, 20000000L, 50); /* 50, 30 and 10 ms left */
}

static void test_wait_across_a_second(void **state)
{
    wait_on(7, 985000000L, 10000000L, 50); /* the clock's second turns over within it */
    wait_on(41, 999999999L, 25000000L, 50);
}

static void test_no_wait_no_sleep(void **state)
{
    struct culeak_ring r;
    int fd;
    assert_int_equal(culeak_ring_create(4096, &fd, &r), 0);
    fill(&r);
    nslept = 0;
    culeak_ring_clock = fake_clock;
    culeak_ring_sleep = fake_sleep;
    fake_now = (struct timespec){3, 0};
    assert_null(culeak_ring_reserve(&r, 100, 0));
    culeak_ring_clock = clock_gettime;
    assert_int_equal(nslept, 0);
    culeak_ring_unmap(&r);
    close(fd);
}

/* The smallest ring is 4096 bytes: made and mapped; 2048 and a size not a power of two
 * are neither. */
static void test_smallest_ring(void **state)
{
    struct culeak_ring r, mine;
    int fd;
    assert_int_equal(culeak_ring_create(4096, &fd, &r), 0);
    assert_int_equal(r.size, 4096);
    assert_int_equal(culeak_ring_map(fd, &mine), 0);
    assert_int_equal(mine.size, 4096);
    culeak_ring_unmap(&mine);
    assert_int_equal(culeak_ring_create(4096, NULL, &mine), 0); /* anonymous, too */
    culeak_ring_unmap(&mine);
    static const uint64_t bad[] = {2048, 1024, 256, 4095, 6144};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int f = -1;
        errno = 0;
        assert_int_equal(culeak_ring_create(bad[i], &f, &mine), -1);
        assert_int_equal(errno, EINVAL);
        r.h->size = bad[i];
        errno = 0;
        assert_int_equal(culeak_ring_map(fd, &mine), -1);
        assert_int_equal(errno, EINVAL);
    }
    culeak_ring_unmap(&r);
    close(fd);
}

/* A memfd holding a ring's header that says `size`, `len` bytes long, with `seals`. */
static int ring_file(uint64_t size, uint64_t len, int seals)
{
    struct culeak_ring r;
    int fd;
    assert_int_equal(culeak_ring_create(4096, &fd, &r), 0);
    int f = (int)syscall(SYS_memfd_create, "culeak-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    assert_true(f >= 0);
    r.h->size = size;
    assert_int_equal(pwrite(f, r.h, CULEAK_RING_HEADER, 0), CULEAK_RING_HEADER);
    assert_int_equal(ftruncate(f, (off_t)len), 0);
    if (seals)
        assert_int_equal(fcntl(f, F_ADD_SEALS, seals), 0);
    culeak_ring_unmap(&r);
    close(fd);
    return f;
}

static int maps(int f)
{
    struct culeak_ring mine;
    errno = 0;
    int rc = culeak_ring_map(f, &mine);
    if (rc == 0)
        culeak_ring_unmap(&mine);
    else
        assert_int_equal(errno, EINVAL);
    close(f);
    return rc;
}

/* The file must hold the header and the whole data area, and be sealed against
 * shrinking: a seal against growing alone keeps nothing mapped safe. */
static void test_map_counts_the_header(void **state)
{
    const uint64_t size = 1 << 14, whole = CULEAK_RING_HEADER + size;
    assert_int_equal(maps(ring_file(size, whole, F_SEAL_SHRINK)), 0);
    assert_int_equal(maps(ring_file(size, whole + 4096, F_SEAL_SHRINK)), 0);
    assert_int_equal(maps(ring_file(size, whole - 1, F_SEAL_SHRINK)), -1);
    assert_int_equal(maps(ring_file(size, size, F_SEAL_SHRINK)), -1);      /* the header not counted */
    assert_int_equal(maps(ring_file(size, whole, F_SEAL_GROW)), -1);       /* it may shrink */
    assert_int_equal(maps(ring_file(size, whole, 0)), -1);
    assert_int_equal(maps(ring_file(size, whole, F_SEAL_GROW | F_SEAL_SHRINK)), 0);
}

/* A reader maps a ring of up to 16 GiB (a memfd's pages are taken only when touched),
 * no larger. */
static void test_largest_ring(void **state)
{
    const uint64_t big = 1ull << 34;
    int f = ring_file(big, CULEAK_RING_HEADER + big, F_SEAL_SHRINK);
    struct culeak_ring mine;
    int rc = culeak_ring_map(f, &mine);
    if (rc != 0 && errno == ENOMEM) {
        close(f);
        skip(); /* no 16 GiB of address space here */
    }
    assert_int_equal(rc, 0);
    assert_int_equal(mine.size, big);
    culeak_ring_unmap(&mine);
    close(f);
    assert_int_equal(maps(ring_file(big << 1, CULEAK_RING_HEADER + (big << 1), F_SEAL_SHRINK)), -1);
    assert_int_equal(maps(ring_file(1ull << 25, CULEAK_RING_HEADER + (1ull << 25), F_SEAL_SHRINK)), 0);
}

/* The console's command ring takes a record that fills it exactly, and nothing more
 * until the writer took it; the writer takes it whole. */
static void test_command_ring_full(void **state)
{
    struct culeak_ring r;
    int fd;
    assert_int_equal(culeak_ring_create(4096, &fd, &r), 0);
    static uint8_t rec[CULEAK_RING_CMD + 1], got[CULEAK_RING_CMD + 1];
    for (size_t i = 0; i < sizeof rec; i++)
        rec[i] = (uint8_t)(i * 13 + 5);
    assert_int_equal(culeak_ring_cmd_put(&r, rec, CULEAK_RING_CMD + 1), -1);
    assert_int_equal(culeak_ring_cmd_put(&r, rec, CULEAK_RING_CMD), 0);
    assert_int_equal(culeak_ring_cmd_put(&r, rec, 1), -1);
    assert_int_equal(culeak_ring_cmd_take(&r, got, sizeof got), CULEAK_RING_CMD);
    assert_memory_equal(got, rec, CULEAK_RING_CMD);
    /* again, from the middle of the ring: it wraps */
    assert_int_equal(culeak_ring_cmd_put(&r, rec, 100), 0);
    assert_int_equal(culeak_ring_cmd_take(&r, got, sizeof got), 100);
    assert_int_equal(culeak_ring_cmd_put(&r, rec, CULEAK_RING_CMD), 0);
    assert_int_equal(culeak_ring_cmd_take(&r, got, sizeof got), CULEAK_RING_CMD);
    assert_memory_equal(got, rec, CULEAK_RING_CMD);
    culeak_ring_unmap(&r);
    close(fd);
}

/* A gap's first seq is its first drop's, its last the latest; a gap told and a new one
 * opened starts its own range. */
static void test_gap_range(void **state)
{
    struct culeak_ring r;
    assert_int_equal(culeak_ring_create(4096, NULL, &r), 0);
    uint64_t first = 1, last = 1;
    assert_int_equal(culeak_ring_untold(&r, &first, &last), 0);
    culeak_ring_drop(&r, 40);
    assert_int_equal(culeak_ring_untold(&r, &first, &last), 1);
    assert_int_equal(first, 40);
    assert_int_equal(last, 40);
    for (uint64_t s = 41; s <= 47; s++)
        culeak_ring_drop(&r, s);
    assert_int_equal(culeak_ring_untold(&r, &first, &last), 8);
    assert_int_equal(first, 40);
    assert_int_equal(last, 47);
    culeak_ring_told(&r);
    culeak_ring_drop(&r, 90);
    culeak_ring_drop(&r, 95);
    assert_int_equal(culeak_ring_untold(&r, &first, &last), 2);
    assert_int_equal(first, 90);
    assert_int_equal(last, 95);
    culeak_ring_unmap(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wait_in_milliseconds), cmocka_unit_test(test_wait_across_a_second),
        cmocka_unit_test(test_no_wait_no_sleep),     cmocka_unit_test(test_smallest_ring),
        cmocka_unit_test(test_map_counts_the_header), cmocka_unit_test(test_largest_ring),
        cmocka_unit_test(test_command_ring_full),    cmocka_unit_test(test_gap_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
