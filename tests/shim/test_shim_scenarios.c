/* Single-purpose scenarios: leaks, OOM, cuMemFree(0)/cudaFree(0), context teardown,
 * marks, the 32-bit v1 entry points, cudaDeviceReset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include "test_shim_harness.h"
#include "common/wire.h"
#include "../fakecuda/scenarios.h"

static char dir[64];
static struct th_rec rec;
static struct th_run run;

static void record(const char *client, const char *const *args, const char *const *env)
{
    assert_int_equal(th_record(&rec, &run, dir, client, args, env, 1), 0);
    assert_true(th_exited_ok(&run));
    if (rec.rc != 0)
        fail_msg("%s %s: decode %d: %s", client, args[0], rec.rc, rec.err);
}

static int setup(void **s) { return th_mkdtemp(dir, sizeof dir) ? 0 : -1; }
static int teardown(void **s)
{
    th_rmdir(dir);
    return 0;
}
static int after(void **s)
{
    th_rec_free(&rec);
    return 0;
}

static void test_leak(void **s)
{
    const char *args[] = {"leak", "5", "1048576", NULL};
    record("client_static", args, NULL);
    assert_int_equal(rec.nev, 5);
    for (size_t i = 0; i < rec.nev; i++) {
        assert_int_equal(rec.ev[i].api, CULEAK_API_CU_MEM_ALLOC);
        assert_int_equal(rec.ev[i].size, 1048576);
        for (size_t j = 0; j < i; j++)
            assert_int_not_equal(rec.ev[i].addr, rec.ev[j].addr);
    }
    assert_int_equal(th_count(&rec, -1, CULEAK_OP_FREE), 0);
}

/* The records of the recording in dir, by type (after MAGIC: type, uvarint length, payload). */
static void count_record_types(size_t *count, size_t ntypes)
{
    char path[128];
    snprintf(path, sizeof path, "%s/rec.culeak", dir);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static uint8_t buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(n > 8 && n < sizeof buf);
    memset(count, 0, ntypes * sizeof *count);
    for (size_t at = 8; at < n;) {
        uint8_t type = buf[at++];
        uint64_t len = 0;
        for (int shift = 0; at < n; shift += 7) {
            len |= (uint64_t)(buf[at] & 0x7f) << shift;
            if (!(buf[at++] & 0x80))
                break;
        }
        assert_true(len <= n - at);
        at += len;
        if (type < ntypes)
            count[type]++;
    }
}

/* A loop's allocation and free, alike but for their address and time, take an
 * ALLOC_AGAIN and a FREE_AGAIN after the first of each: and read back as the events. */
static void test_repeats_in_few_bytes(void **s)
{
    const char *args[] = {"long", "300", "0", NULL};
    record("client_static", args, NULL);
    assert_int_equal(rec.nev, 600);
    for (size_t i = 0; i < rec.nev; i++) {
        const struct culeak_event *e = &rec.ev[i];
        assert_int_equal(e->op, i % 2 ? CULEAK_OP_FREE : CULEAK_OP_ALLOC);
        assert_int_equal(e->api, i % 2 ? CULEAK_API_CU_MEM_FREE : CULEAK_API_CU_MEM_ALLOC);
        assert_int_equal(e->seq, rec.ev[0].seq + i);
        assert_int_equal(e->tid, rec.ev[0].tid);
        assert_int_equal(e->size, i % 2 ? rec.ev[1].size : SZ_LONG); /* a free says no size */
        assert_int_equal(e->stack, i % 2 ? 0 : rec.ev[0].stack);
        assert_int_equal(e->device, i % 2 ? -1 : rec.ev[0].device);
        assert_int_equal(e->ctx, i % 2 ? 0 : rec.ev[0].ctx);
        assert_true(i == 0 || e->t_ns >= rec.ev[i - 1].t_ns);
        if (i % 2)
            assert_int_equal(e->addr, rec.ev[i - 1].addr); /* the free of the block just made */
    }
    assert_int_not_equal(rec.ev[0].stack, 0);
    size_t count[32];
    count_record_types(count, 32);
    assert_int_equal(count[CULEAK_REC_ALLOC], 1);
    assert_int_equal(count[CULEAK_REC_ALLOC_AGAIN], 299);
    assert_int_equal(count[CULEAK_REC_FREE], 1);
    assert_int_equal(count[CULEAK_REC_FREE_AGAIN], 299);
}

/* Allocations of one size by turns at two sites are each an ALLOC: none repeats the
 * previous one's stack. */
static void test_other_stack_not_again(void **s)
{
    const char *args[] = {"twosites", "20", NULL};
    record("client_static", args, NULL);
    assert_int_equal(rec.nev, 60); /* per round: alloc at a, its free, alloc at b */
    uint64_t a = rec.ev[0].stack, b = rec.ev[2].stack;
    assert_int_not_equal(a, 0);
    assert_int_not_equal(b, 0);
    assert_int_not_equal(a, b);
    for (size_t i = 0; i < rec.nev; i += 3) {
        assert_int_equal(rec.ev[i].stack, a);
        assert_int_equal(rec.ev[i + 2].stack, b);
        assert_int_equal(rec.ev[i + 2].size, SZ_LONG);
    }
    size_t count[32];
    count_record_types(count, 32);
    assert_int_equal(count[CULEAK_REC_ALLOC], 40);
    assert_int_equal(count[CULEAK_REC_ALLOC_AGAIN], 0);
}

static void check_oom(const char *client, int api)
{
    const char *args[] = {"oom", NULL};
    const char *env[] = {"FAKECUDA_MEM_BYTES=1048576", NULL};
    record(client, args, env);
    assert_non_null(strstr(run.out, "oom result=2"));
    assert_int_equal(rec.nev, 1); /* a failed allocation is reported, once */
    assert_int_equal(rec.ev[0].api, api);
    assert_int_equal(rec.ev[0].op, CULEAK_OP_ALLOC);
    assert_int_equal(rec.ev[0].size, SZ_OOM);
    assert_int_equal(rec.ev[0].result, 2); /* CUDA_ERROR_OUT_OF_MEMORY, cudaErrorMemoryAllocation */
    assert_int_equal(rec.ev[0].addr, 0);   /* not the stale value left in the caller's pointer */
}

static void test_oom_driver(void **s) { check_oom("client_static", CULEAK_API_CU_MEM_ALLOC); }
static void test_oom_runtime(void **s) { check_oom("client_runtime", CULEAK_API_CUDA_MALLOC); }

/* only the real pair that follows the free(0) is seen */
static void check_free0(const char *client, int alloc_api, int free_api)
{
    const char *args[] = {"free0", NULL};
    record(client, args, NULL);
    assert_int_equal(rec.nev, 2);
    assert_int_equal(rec.ev[0].api, alloc_api);
    assert_int_equal(rec.ev[0].size, SZ_ALLOC);
    assert_int_equal(rec.ev[1].api, free_api);
    assert_int_equal(rec.ev[1].addr, rec.ev[0].addr);
}

static void test_free0_driver(void **s) { check_free0("client_static", CULEAK_API_CU_MEM_ALLOC, CULEAK_API_CU_MEM_FREE); }
static void test_free0_runtime(void **s) { check_free0("client_runtime", CULEAK_API_CUDA_MALLOC, CULEAK_API_CUDA_FREE); }

/* A thread maps a range again while another is still inside cuMemUnmap of it: the
 * mapping's event waits for the unmap's, so the stream says unmap, then map (in the
 * other order the new mapping would read as ended). */
static void test_remap_while_unmapping(void **s)
{
    const char *args[] = {"remap", NULL};
    const char *env[] = {"FAKECUDA_UNMAP_LINGER_MS=200", NULL};
    record("client_static", args, env);
    size_t maps[2] = {0, 0}, nmaps = 0, unmap = SIZE_MAX;
    for (size_t i = 0; i < rec.nev; i++) {
        if (rec.ev[i].api == CULEAK_API_CU_MEM_MAP && rec.ev[i].result == 0 && nmaps < 2)
            maps[nmaps++] = i;
        if (rec.ev[i].api == CULEAK_API_CU_MEM_UNMAP && rec.ev[i].result == 0)
            unmap = i;
    }
    assert_int_equal(nmaps, 2);
    assert_true(unmap != SIZE_MAX);
    assert_int_equal(rec.ev[maps[1]].addr, rec.ev[unmap].addr);
    if (!(maps[0] < unmap && unmap < maps[1]))
        fail_msg("events: map #%zu, unmap #%zu, map again #%zu: the second map was recorded before the unmap",
                 maps[0], unmap, maps[1]);
}

static void test_ctxdestroy(void **s)
{
    const char *args[] = {"ctxdestroy", NULL};
    record("client_static", args, NULL);
    assert_non_null(strstr(run.out, "live_bytes=0"));
    assert_int_equal(rec.nev, 8);
    const struct culeak_event *e = rec.ev;
    assert_int_equal(e[0].op, CULEAK_OP_CTX_CREATE);
    assert_int_equal(e[0].api, CULEAK_API_CU_CTX_CREATE);
    assert_int_not_equal(e[0].addr, 0);
    assert_int_equal(e[0].device, 0);
    for (int i = 1; i <= 3; i++) {
        assert_int_equal(e[i].api, CULEAK_API_CU_MEM_ALLOC);
        assert_int_equal(e[i].size, SZ_CTX);
        assert_int_equal(e[i].ctx, e[0].addr); /* allocated in the created context */
    }
    assert_int_equal(e[4].op, CULEAK_OP_FREE_ALL);
    assert_int_equal(e[4].api, CULEAK_API_CU_CTX_DESTROY);
    assert_int_equal(e[4].ctx, e[0].addr);
    assert_int_equal(e[4].device, 0);
    for (int i = 5; i <= 6; i++) {
        assert_int_equal(e[i].api, CULEAK_API_CU_MEM_ALLOC);
        assert_int_not_equal(e[i].ctx, e[0].addr);
    }
    assert_int_equal(e[7].op, CULEAK_OP_FREE_ALL);
    assert_int_equal(e[7].api, CULEAK_API_CU_DEVICE_PRIMARY_CTX_RESET);
    assert_int_equal(e[7].device, 0);
}

/* Each allocation's device is its context's, whichever context was current before. */
static void test_devswitch(void **s)
{
    const char *args[] = {"devswitch", NULL};
    record("client_static", args, NULL);
    assert_non_null(strstr(run.out, "client_static devswitch ok"));
    assert_int_equal(rec.nev, 10);
    const struct culeak_event *e = rec.ev;
    for (int i = 0; i < 6; i++) {
        assert_int_equal(e[i].api, CULEAK_API_CU_MEM_ALLOC);
        assert_int_equal(e[i].device, i % 2);
        assert_int_equal(e[i].ctx, e[i % 2].ctx);
    }
    assert_int_not_equal(e[0].ctx, e[1].ctx);
    assert_int_equal(e[6].op, CULEAK_OP_CTX_CREATE);
    assert_int_equal(e[6].device, 1);
    assert_int_equal(e[7].api, CULEAK_API_CU_MEM_ALLOC);
    assert_int_equal(e[7].ctx, e[6].addr);
    assert_int_equal(e[7].device, 1);
    assert_int_equal(e[8].api, CULEAK_API_CU_CTX_DESTROY);
    assert_int_equal(e[9].api, CULEAK_API_CU_MEM_ALLOC);
    assert_int_equal(e[9].ctx, e[0].ctx);
    assert_int_equal(e[9].device, 0);
}

/* Event times are CLOCK_MONOTONIC_COARSE (CLOCK_MONOTONIC as of the kernel's last tick):
 * each allocation's lies between the program's own CLOCK_MONOTONIC readings around the
 * call, less at most two ticks (clock_getres), through the first ~40 ms of the program;
 * the margin above allows only for the kernel's slewing of the clock. */
static void test_event_times(void **s)
{
    const char *args[] = {"clock", "80", "500", NULL};
    /* the times printed differ from run to run: no comparison with a run without the shim */
    assert_int_equal(th_record(&rec, &run, dir, "client_static", args, NULL, 0), 0);
    assert_true(th_exited_ok(&run));
    assert_int_equal(rec.rc, 0);
    assert_non_null(strstr(run.out, "client_static clock ok"));
    struct timespec res;
    assert_int_equal(clock_getres(CLOCK_MONOTONIC_COARSE, &res), 0);
    const uint64_t tick = (uint64_t)res.tv_sec * 1000000000u + (uint64_t)res.tv_nsec;
    const uint64_t margin = 50000; /* ns */
    const char *p = run.out;
    size_t k = 0, allocs = 0;
    unsigned long long before, after;
    int used;
    while (sscanf(p, "at %llu %llu\n%n", &before, &after, &used) == 2) {
        p += used;
        while (k < rec.nev && rec.ev[k].op != CULEAK_OP_ALLOC)
            k++;
        assert_true(k < rec.nev);
        uint64_t t = rec.ev[k++].t_ns;
        if (t + 2 * tick < before || t > after + margin)
            fail_msg("allocation %zu at %llu ns, called between %llu and %llu (the clock's tick: %llu ns)", allocs,
                     (unsigned long long)t, before, after, (unsigned long long)tick);
    allocs++;
    }
    assert_int_equal(allocs, 80);
}

/* cudaDeviceReset is one event named after it (not also the driver release underneath) */
static void test_device_reset(void **s)
{
    const char *args[] = {"reset", NULL};
    record("client_runtime", args, NULL);
    assert_int_equal(rec.nev, 3);
    assert_int_equal(th_count(&rec, CULEAK_API_CUDA_MALLOC, CULEAK_OP_ALLOC), 2);
    assert_int_equal(rec.ev[2].api, CULEAK_API_CUDA_DEVICE_RESET);
    assert_int_equal(rec.ev[2].op, CULEAK_OP_FREE_ALL);
    assert_int_equal(rec.ev[2].device, 0);
}

/* marks share the sequence with events: M A F, three times */
static void test_marks(void **s)
{
    const char *args[] = {"mark", "3", NULL};
    record("client_static", args, NULL);
    assert_int_equal(rec.nmark, 3);
    assert_int_equal(rec.nev, 6);
    for (int i = 0; i < 3; i++) {
        char want[32];
        snprintf(want, sizeof want, "iteration %d", i);
        assert_string_equal(rec.mark[i].label, want);
        assert_int_equal(rec.mark[i].seq, (uint64_t)(3 * i + 1));
        assert_int_equal(rec.ev[2 * i].seq, (uint64_t)(3 * i + 2));
        assert_int_equal(rec.ev[2 * i].api, CULEAK_API_CU_MEM_ALLOC);
        assert_int_equal(rec.ev[2 * i + 1].seq, (uint64_t)(3 * i + 3));
        assert_int_equal(rec.mark[i].tid, rec.ev[2 * i].tid);
    }
}

/* the v1 entry points take 32-bit pointers: wrapping them with the v2 ABI would corrupt
 * the upper half; the program must run exactly as without the shim */
static void test_v1_abi(void **s)
{
    const char *args[] = {"v1", NULL};
    record("client_static", args, NULL);
    assert_non_null(strstr(run.out, "client_static v1 ok"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_leak, after),
        cmocka_unit_test_teardown(test_repeats_in_few_bytes, after),
        cmocka_unit_test_teardown(test_other_stack_not_again, after),
        cmocka_unit_test_teardown(test_oom_driver, after),
        cmocka_unit_test_teardown(test_oom_runtime, after),
        cmocka_unit_test_teardown(test_free0_driver, after),
        cmocka_unit_test_teardown(test_free0_runtime, after),
        cmocka_unit_test_teardown(test_remap_while_unmapping, after),
        cmocka_unit_test_teardown(test_ctxdestroy, after),
        cmocka_unit_test_teardown(test_devswitch, after),
        cmocka_unit_test_teardown(test_event_times, after),
        cmocka_unit_test_teardown(test_device_reset, after),
        cmocka_unit_test_teardown(test_marks, after),
        cmocka_unit_test_teardown(test_v1_abi, after),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
