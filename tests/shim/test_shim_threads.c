/* 16 threads allocating and freeing concurrently: exact counts, one gap-free sequence,
 * each thread's events under its own tid, and in stream order no address allocated
 * while live nor freed while not (the driver hands a freed address out again at once,
 * maybe to another thread, before the free is recorded); through the driver and through
 * the runtime. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_shim_harness.h"
#include "../fakecuda/scenarios.h"

#define THREADS 16

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void check(const char *client, int pairs, int alloc_api, int free_api)
{
    char dir[64], n_threads[16], n_pairs[16];
    struct th_rec rec;
    struct th_run run;
    snprintf(n_threads, sizeof n_threads, "%d", THREADS);
    snprintf(n_pairs, sizeof n_pairs, "%d", pairs);
    const char *args[] = {"threads", n_threads, n_pairs, NULL};
    assert_non_null(th_mkdtemp(dir, sizeof dir));
    assert_int_equal(th_record(&rec, &run, dir, client, args, NULL, 1), 0);
    assert_true(th_exited_ok(&run));
    assert_int_equal(rec.rc, 0);
    size_t total = (size_t)THREADS * (size_t)pairs * 2;
    assert_int_equal(rec.nev, total);
    assert_int_equal(th_count(&rec, alloc_api, CULEAK_OP_ALLOC), total / 2);
    assert_int_equal(th_count(&rec, free_api, CULEAK_OP_FREE), total / 2);

    /* seq: exactly 1..total, no gap, no duplicate */
    uint64_t *seq = malloc(total * sizeof *seq);
    assert_non_null(seq);
    for (size_t i = 0; i < total; i++)
        seq[i] = rec.ev[i].seq;
    qsort(seq, total, sizeof *seq, cmp_u64);
    for (size_t i = 0; i < total; i++)
        if (seq[i] != i + 1)
            fail_msg("%s: sorted seq[%zu] = %llu", client, i, (unsigned long long)seq[i]);
    free(seq);

    /* the main thread allocates nothing here: THREADS tids with 2*pairs events each,
     * and per tid every free follows its allocation */
    uint64_t tids[THREADS] = {0};
    size_t per[THREADS] = {0}, ntid = 0;
    for (size_t i = 0; i < total; i++) {
        const struct culeak_event *e = &rec.ev[i];
        assert_int_equal(e->size == SZ_THREAD || e->op == CULEAK_OP_FREE, 1);
        size_t t = 0;
        while (t < ntid && tids[t] != e->tid)
            t++;
        if (t == ntid) {
            assert_true(ntid < THREADS);
            tids[ntid++] = e->tid;
        }
        per[t]++;
    }
    assert_int_equal(ntid, THREADS);
    for (size_t t = 0; t < ntid; t++)
        assert_int_equal(per[t], 2 * (size_t)pairs);

    /* stream order: every free ends a live allocation, no allocation reuses a live one */
    uint64_t *live = calloc(total, sizeof *live);
    size_t nlive = 0;
    assert_non_null(live);
    for (size_t i = 0; i < total; i++) {
        const struct culeak_event *e = &rec.ev[i];
        size_t j = 0;
        while (j < nlive && live[j] != e->addr)
            j++;
        if (e->op == CULEAK_OP_ALLOC) {
            if (j < nlive)
                fail_msg("%s: event %zu allocates %#llx, still live", client, i, (unsigned long long)e->addr);
            live[nlive++] = e->addr;
        } else {
            if (j == nlive)
                fail_msg("%s: event %zu frees %#llx, not live", client, i, (unsigned long long)e->addr);
            live[j] = live[--nlive];
        }
    }
    free(live);
    th_rec_free(&rec);
    th_rmdir(dir);
}

static void test_driver_threads(void **s)
{
    check("client_static", 100, CULEAK_API_CU_MEM_ALLOC, CULEAK_API_CU_MEM_FREE);
}

/* runtime + driver underneath must still be one event per call, on every thread */
static void test_runtime_threads(void **s)
{
    check("client_runtime", 50, CULEAK_API_CUDA_MALLOC, CULEAK_API_CUDA_FREE);
}

/* Key destructors that allocate after the shim's per-thread caches are gone (freed
 * cuBLAS-like handles): the program runs to its end and every event is recorded. */
static void test_key_destructor_allocates(void **s)
{
    char dir[64];
    struct th_rec rec;
    struct th_run run;
    const char *args[] = {"keydtor", "4", NULL};
    assert_non_null(th_mkdtemp(dir, sizeof dir));
    assert_int_equal(th_record(&rec, &run, dir, "client_static", args, NULL, 1), 0);
    if (!th_exited_ok(&run))
        fail_msg("keydtor: status 0x%x, stderr: %s", run.status, run.err);
    assert_int_equal(rec.rc, 0);
    /* main: 1 pair; each of 4 threads: 1 pair, then 50 in its key destructor */
    assert_int_equal(th_count(&rec, CULEAK_API_CU_MEM_ALLOC, CULEAK_OP_ALLOC), 1 + 4 * 51);
    assert_int_equal(th_count(&rec, CULEAK_API_CU_MEM_FREE, CULEAK_OP_FREE), 1 + 4 * 51);
    th_rec_free(&rec);
    th_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_driver_threads),
        cmocka_unit_test(test_runtime_threads),
        cmocka_unit_test(test_key_destructor_allocates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
