/* The shared ring (src/common/ring.c): records come out whole and in order across the
 * area's end, a full ring with a stopped reader makes the writer give up after its
 * bounded wait and count what it dropped (each gap with its own first and last), a reader
 * draining beside a writer gets every record not counted as dropped, what a process wrote
 * stays after it is killed, a reader maps no ring whose size is not a power of two, and
 * a reader is alive until it says it is gone or its process ends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/ring.h"
#include "common/wire.h"

/* A NOTE record saying "record K" padded to `size` bytes of text, written into the ring;
 * 0, or -1 when the ring had no room within wait_ms. */
static int put(struct culeak_ring *r, uint64_t k, size_t size, int wait_ms)
{
    uint8_t rec[CULEAK_REC_HEADROOM + 16 + 1024];
    char text[1024];
    memset(text, '.', sizeof text);
    int n = snprintf(text, sizeof text, "record %llu", (unsigned long long)k);
    text[n] = ' ';
    size_t len = culeak_rec_finish(rec, CULEAK_REC_NOTE, culeak_put_s(rec + CULEAK_REC_HEADROOM, text, size));
    uint8_t *at = culeak_ring_reserve(r, len, wait_ms);
    if (!at)
        return -1;
    memcpy(at, rec, len);
    culeak_ring_commit(r, len);
    return 0;
}

/* Takes every committed record; checks they say record next, next+1, ...: the count. */
static uint64_t drain(struct culeak_ring *r, uint64_t *next)
{
    uint64_t got = 0;
    const uint8_t *p;
    size_t n;
    while ((n = culeak_ring_peek(r, &p)) > 0) {
        size_t at = 0;
        while (at < n) {
            uint8_t type;
            const uint8_t *payload;
            size_t plen;
            long used = culeak_next_record(p + at, n - at, &type, &payload, &plen);
            assert_true(used > 0);
            assert_int_equal(type, CULEAK_REC_NOTE);
            struct culeak_cursor c = {payload, payload + plen, 0};
            size_t sl;
            const char *s = culeak_get_s(&c, &sl);
            assert_non_null(s);
            unsigned long long k;
            assert_int_equal(sscanf(s, "record %llu", &k), 1);
            if (k < *next)
                fail_msg("record %llu after %llu", k, (unsigned long long)*next - 1);
            *next = k + 1;
            at += (size_t)used;
            got++;
        }
        culeak_ring_consume(r, n);
    }
    return got;
}

static void test_records_whole_across_the_end(void **state)
{
    struct culeak_ring r;
    int fd;
    assert_int_equal(culeak_ring_create(4096, &fd, &r), 0);
    uint64_t next = 0, got = 0;
    for (uint64_t k = 0; k < 1000; k++) {
        assert_int_equal(put(&r, k, 20 + (k * 37) % 300, 0), 0);
        if (k % 3 == 2)
            got += drain(&r, &next);
    }
    got += drain(&r, &next);
    assert_int_equal(got, 1000);
    assert_int_equal(next, 1000);
    culeak_ring_unmap(&r);
    close(fd);
}

static void test_full_ring_drops_and_counts(void **state)
{
    struct culeak_ring r;
    int fd;
    assert_int_equal(culeak_ring_create(4096, &fd, &r), 0);
    uint64_t k = 0;
    while (put(&r, k, 100, 0) == 0)
        k++;
    /* the reader is stopped: the writer waits its bounded time, then gives up */
    assert_int_equal(put(&r, k, 100, 5), -1);
    culeak_ring_drop(&r, 500);
    culeak_ring_drop(&r, 501);
    uint64_t first, last;
    assert_int_equal(culeak_ring_untold(&r, &first, &last), 2);
    assert_int_equal(first, 500);
    assert_int_equal(last, 501);
    uint64_t next = 0;
    assert_int_equal(drain(&r, &next), k);
    assert_int_equal(put(&r, k, 100, 0), 0); /* room again */
    culeak_ring_told(&r);
    assert_int_equal(culeak_ring_untold(&r, &first, &last), 0);
    /* a later gap: its own first and last */
    culeak_ring_drop(&r, 700);
    culeak_ring_drop(&r, 701);
    culeak_ring_drop(&r, 702);
    assert_int_equal(culeak_ring_untold(&r, &first, &last), 3);
    assert_int_equal(first, 700);
    assert_int_equal(last, 702);
    culeak_ring_unmap(&r);
    close(fd);
}

/* A reader maps only a ring whose header reads right: its data area a power of two of at
 * least 4 KiB (the offsets are masked with size - 1). */
static void test_map_checks_the_size(void **state)
{
    struct culeak_ring r, mine;
    int fd;
    assert_int_equal(culeak_ring_create(1 << 14, &fd, &r), 0);
    assert_int_equal(culeak_ring_map(fd, &mine), 0);
    culeak_ring_unmap(&mine);
    static const uint64_t bad[] = {(1 << 14) - 4096, 2048, 0};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        r.h->size = bad[i];
        errno = 0;
        assert_int_equal(culeak_ring_map(fd, &mine), -1);
        assert_int_equal(errno, EINVAL);
    }
    r.h->size = 1 << 14;
    memcpy(r.h->magic, "notaring", 8);
    assert_int_equal(culeak_ring_map(fd, &mine), -1);
    culeak_ring_unmap(&r);
    close(fd);
}

/* A reader maps only what the file holds: a header that claims more data than the file
 * has (a peer's memfd, cut short or lying) is refused, where reading on would fault. A
 * ring made here cannot be cut short or grown afterwards (its size is sealed). */
static void test_map_checks_the_file(void **state)
{
    struct culeak_ring r, mine;
    int fd;
    assert_int_equal(culeak_ring_create(1 << 14, &fd, &r), 0);
    errno = 0;
    assert_int_equal(ftruncate(fd, 4096), -1);
    assert_int_equal(errno, EPERM);
    assert_int_equal(ftruncate(fd, 1 << 20), -1);
    /* a memfd of the ring's name and header, its data area missing, and unsealed */
    int f = (int)syscall(SYS_memfd_create, "culeak-ring", MFD_CLOEXEC);
    assert_true(f >= 0);
    assert_int_equal(pwrite(f, r.h, CULEAK_RING_HEADER, 0), CULEAK_RING_HEADER);
    errno = 0;
    assert_int_equal(culeak_ring_map(f, &mine), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(ftruncate(f, CULEAK_RING_HEADER + (1 << 14)), 0); /* whole, but it may shrink */
    assert_int_equal(culeak_ring_map(f, &mine), -1);
    close(f);
    culeak_ring_unmap(&r);
    close(fd);
}

#define MANY 200000

struct reader {
    struct culeak_ring *r;
    uint64_t got;
    int stop;
};

static void *read_all(void *arg)
{
    struct reader *rd = arg;
    uint64_t next = 0;
    while (!__atomic_load_n(&rd->stop, __ATOMIC_ACQUIRE))
        rd->got += drain(rd->r, &next);
    rd->got += drain(rd->r, &next);
    return NULL;
}

static void test_reader_beside_writer(void **state)
{
    struct culeak_ring r;
    int fd;
    assert_int_equal(culeak_ring_create(1 << 16, &fd, &r), 0);
    struct reader rd = {&r, 0, 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, read_all, &rd), 0);
    uint64_t dropped = 0;
    for (uint64_t k = 0; k < MANY; k++)
        if (put(&r, k, 40, 50) != 0)
            dropped++;
    __atomic_store_n(&rd.stop, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    assert_int_equal(rd.got + dropped, MANY);
    culeak_ring_unmap(&r);
    close(fd);
}

static void test_records_outlive_a_killed_writer(void **state)
{
    struct culeak_ring r;
    int fd;
    assert_int_equal(culeak_ring_create(1 << 16, &fd, &r), 0);
    pid_t pid = fork();
    if (pid == 0) {
        for (uint64_t k = 0; k < 100; k++)
            put(&r, k, 30, 0);
        raise(SIGKILL);
        _exit(1);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    struct culeak_ring mine; /* a reader maps the ring from its descriptor */
    assert_int_equal(culeak_ring_map(fd, &mine), 0);
    uint64_t next = 0;
    assert_int_equal(drain(&mine, &next), 100);
    culeak_ring_unmap(&mine);
    culeak_ring_unmap(&r);
    close(fd);
}

/* A reader is alive while it has not said it is gone and its process lives: one killed
 * with SIGKILL (it said nothing) is dead once it has ended. */
static void test_reader_alive_until_gone_or_killed(void **state)
{
    struct culeak_ring r;
    int fd;
    assert_int_equal(culeak_ring_create(1 << 16, &fd, &r), 0);
    assert_true(culeak_ring_reader_alive(&r)); /* no reader named yet */
    __atomic_store_n(&r.h->reader_pid, (uint32_t)getpid(), __ATOMIC_RELEASE);
    assert_true(culeak_ring_reader_alive(&r));
    pid_t pid = fork();
    if (pid == 0) {
        raise(SIGKILL);
        _exit(1);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    __atomic_store_n(&r.h->reader_pid, (uint32_t)pid, __ATOMIC_RELEASE);
    assert_false(culeak_ring_reader_alive(&r));
    __atomic_store_n(&r.h->reader_pid, (uint32_t)getpid(), __ATOMIC_RELEASE);
    __atomic_store_n(&r.h->reader_gone, 1, __ATOMIC_RELEASE);
    assert_false(culeak_ring_reader_alive(&r));
    culeak_ring_unmap(&r);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_records_whole_across_the_end),
        cmocka_unit_test(test_full_ring_drops_and_counts),
        cmocka_unit_test(test_map_checks_the_size),
        cmocka_unit_test(test_map_checks_the_file),
        cmocka_unit_test(test_reader_beside_writer),
        cmocka_unit_test(test_records_outlive_a_killed_writer),
        cmocka_unit_test(test_reader_alive_until_gone_or_killed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
