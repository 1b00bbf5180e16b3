/* What was live when culeak attached (src/shim/inventory.c, compiled in here, the driver
 * and the shim functions it calls played by this file): a fake process holds pointers to
 * six allocations of a fake driver (by their bases, one by an inner pointer only, beside
 * words that are no allocation's); each is sent once, with its size, its kind as the
 * driver says (device, managed, pinned host) and its device (the driver's ordinal, else
 * the borrowed context's), and the totals add them all up. No debugger, no GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../src/shim/inventory.c"

/* ---- the fake driver's allocations: number i at FAKE_LO + i * STRIDE ---- */
#define FAKE_LO UINT64_C(0x5a5a00000000)
#define STRIDE UINT64_C(0x1000000)
#define NALLOC 6

static const struct {
    uint64_t size;
    unsigned memtype; /* CU_MEMORYTYPE_* (0: the attribute call fails) */
    int managed;
    int ordinal;      /* -1: the driver does not say */
    unsigned kind;    /* what the inventory must call it */
    int device;       /* and where */
} fake[NALLOC] = {
    {1 << 20, CU_MEMORYTYPE_DEVICE, 0, 0, CULEAK_KIND_DEVICE, 0},
    {4096 + 256, CU_MEMORYTYPE_DEVICE, 1, 1, CULEAK_KIND_MANAGED, 1},
    {8192, CU_MEMORYTYPE_HOST, 0, -1, CULEAK_KIND_HOST_PINNED, 0},
    {2 << 20, CU_MEMORYTYPE_DEVICE, 0, 1, CULEAK_KIND_DEVICE, 1},
    {512, CU_MEMORYTYPE_DEVICE, 0, -1, CULEAK_KIND_DEVICE, 0}, /* after one on device 1 */
    {768, 0, 0, 0, CULEAK_KIND_DEVICE, 0},                    /* known by an inner pointer */
};

#define BASE(i) (FAKE_LO + (uint64_t)(i) * STRIDE)

/* The fake process's own variables: the pointers it keeps, in the order the scan meets
 * them (its data segment comes first in its maps). */
uint64_t holder[] = {
    BASE(0), BASE(1), BASE(2), BASE(0) /* again */, BASE(3), BASE(4), BASE(5) + 256 /* inner */,
    BASE(6) /* no allocation */, BASE(1) + 8 /* not aligned: no pointer */, BASE(2) + 512 /* inner, base seen */,
};

static int fake_index(uint64_t p)
{
    if (p < FAKE_LO || p >= BASE(NALLOC))
        return -1;
    int i = (int)((p - FAKE_LO) / STRIDE);
    return p - BASE(i) < fake[i].size ? i : -1;
}

static int range_calls;
static CUresult fake_range(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
    range_calls++;
    int i = fake_index(p);
    if (i < 0)
        return CUDA_ERROR_INVALID_VALUE;
    *base = BASE(i);
    *size = fake[i].size;
    return CUDA_SUCCESS;
}

static CUresult fake_attr(void *data, CUpointer_attribute a, CUdeviceptr p)
{
    int i = fake_index(p);
    if (i < 0)
        return CUDA_ERROR_INVALID_VALUE;
    switch (a) {
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        if (fake[i].ordinal < 0)
            return CUDA_ERROR_INVALID_VALUE;
        *(int *)data = fake[i].ordinal;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *(int *)data = fake[i].managed;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        if (!fake[i].memtype)
            return CUDA_ERROR_INVALID_VALUE;
        *(unsigned *)data = fake[i].memtype;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

/* device 0's primary context is active: the scan borrows it and gives it back */
static int retained, current;
static CUresult fake_state(CUdevice dev, unsigned *flags, int *active)
{
    if (dev > 1)
        return CUDA_ERROR_INVALID_DEVICE;
    *flags = 0;
    *active = dev == 0;
    return CUDA_SUCCESS;
}
static CUresult fake_retain(CUcontext *ctx, CUdevice dev)
{
    retained++;
    *ctx = (CUcontext)(uintptr_t)(0xc0 + dev);
    return CUDA_SUCCESS;
}
static CUresult fake_set(CUcontext ctx)
{
    current = ctx != NULL;
    return CUDA_SUCCESS;
}
static CUresult fake_release(CUdevice dev)
{
    retained--;
    return CUDA_SUCCESS;
}

struct culeak_row culeak_rows[CULEAK_ROW_COUNT];
void *culeak_real_resolve(enum culeak_row_id id) { return NULL; }

uint64_t culeak_now_ns(void) { return 0; }
void culeak_fill_ctx(struct culeak_ev *e) { e->ctx = 0xc0; }

static struct culeak_ev sent[64];
static int nsent;
void culeak_stream_event(const struct culeak_ev *e, const uintptr_t *ips, int n, uint64_t tag)
{
    assert_true(nsent < 64);
    assert_null(ips);
    assert_int_equal(n, 0);
    sent[nsent++] = *e;
}

static void drive(void)
{
    culeak_rows[CULEAK_ROW_cuMemGetAddressRange_v2].real = (void *)fake_range;
    culeak_rows[CULEAK_ROW_cuPointerGetAttribute].real = (void *)fake_attr;
    culeak_rows[CULEAK_ROW_cuDevicePrimaryCtxGetState].real = (void *)fake_state;
    culeak_rows[CULEAK_ROW_cuDevicePrimaryCtxRetain].real = (void *)fake_retain;
    culeak_rows[CULEAK_ROW_cuCtxSetCurrent].real = (void *)fake_set;
    culeak_rows[CULEAK_ROW_cuDevicePrimaryCtxRelease_v2].real = (void *)fake_release;
}

/* Each allocation once, whole: its base, size, kind and device; the totals their sum. */
static void test_each_allocation_once(void **state)
{
    drive();
    nsent = 0;
    struct culeak_inventory_count n;
    culeak_inventory_send(&n);
    printf("# found %lu allocations, %llu bytes, %d range calls\n", n.found, (unsigned long long)n.bytes,
           range_calls);
    assert_int_equal(n.found, NALLOC);
    assert_int_equal(nsent, NALLOC);
    assert_int_equal(n.incomplete, 0);
    uint64_t bytes = 0;
    int seen[NALLOC] = {0};
    for (int k = 0; k < nsent; k++) {
        const struct culeak_ev *e = &sent[k];
        int i = fake_index(e->addr);
        assert_true(i >= 0);
        assert_int_equal(e->addr, BASE(i));
        assert_int_equal(seen[i]++, 0);
        assert_int_equal(e->op, CULEAK_OP_ALLOC);
        assert_int_equal(e->api, CULEAK_API_BEFORE_ATTACH);
        assert_int_equal(e->size, fake[i].size);
        if (e->kind != fake[i].kind || e->device != fake[i].device)
            fail_msg("allocation %d: kind %u device %d, not kind %u device %d", i, e->kind, e->device, fake[i].kind,
                     fake[i].device);
        assert_int_equal(e->ctx, 0xc0);
        bytes += fake[i].size;
    }
    assert_int_equal(n.bytes, bytes);
    assert_int_equal(retained, 0); /* the borrowed context given back */
    assert_int_equal(current, 0);
}

/* No driver, or no active context: nothing is sent, the counts are 0. */
static void test_no_context_nothing(void **state)
{
    drive();
    culeak_rows[CULEAK_ROW_cuDevicePrimaryCtxRetain].real = NULL;
    nsent = 0;
    struct culeak_inventory_count n = {7, 7, 7};
    culeak_inventory_send(&n);
    assert_int_equal(nsent, 0);
    assert_int_equal(n.found, 0);
    assert_int_equal(n.bytes, 0);
    assert_int_equal(n.incomplete, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_allocation_once),
        cmocka_unit_test(test_no_context_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
