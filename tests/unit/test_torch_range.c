/* The check that a PyTorch block entry reads right when the tracker is attached at once
 * (src/shim/torch_blocks.c, compiled in here, the driver and the shim functions it calls
 * played by this file): [addr, addr + size) must lie inside one driver allocation; a
 * block that ends exactly at its allocation's end does, one byte further does not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../src/shim/torch_blocks.c"

/* the driver: one allocation of 2 MiB at BASE */
#define BASE UINT64_C(0x7f0000200000)
#define LEN (UINT64_C(2) << 20)

static CUresult fake_range(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
    if (p < BASE || p >= BASE + LEN)
        return CUDA_ERROR_INVALID_VALUE;
    *base = BASE;
    *size = LEN;
    return CUDA_SUCCESS;
}

struct culeak_row culeak_rows[CULEAK_ROW_COUNT];
void *culeak_real_resolve(enum culeak_row_id id) { return NULL; }
unsigned culeak_depth_limit = 64, culeak_modules_epoch;
int culeak_free_stacks, culeak_attached = 1, culeak_py_off = 1;
int culeak_py_enabled_slow(void) { return 0; }
int culeak_py_stack_after(uintptr_t *ips, int n, int max) { return n; }
int culeak_unwind(uintptr_t *ips, int max, uint64_t *tag) { return 0; }
void *culeak_real_dlsym(void *handle, const char *name) { return NULL; }
int culeak_enter(void) { return 1; }
void culeak_leave(void) {}
void culeak_fill_ctx(struct culeak_ev *e) { e->ctx = 0xc0; }
void culeak_stream_append(const uint8_t *rec, size_t len) {}
void culeak_stream_note(const char *text, size_t len) {}

static struct culeak_ev got[8];
static int ngot;
void culeak_after_stack(struct culeak_ev *e, const uintptr_t *ips, int n, uint64_t tag)
{
    got[ngot++] = *e;
}
void culeak_stream_event(const struct culeak_ev *e, const uintptr_t *ips, int n, uint64_t tag) { got[ngot++] = *e; }

static void test_block_inside_one_allocation(void **st)
{
    culeak_rows[CULEAK_ROW_cuMemGetAddressRange_v2].real = (void *)fake_range;
    assert_int_equal(block_in_device_memory(BASE, 512), 1);           /* at its start */
    assert_int_equal(block_in_device_memory(BASE, LEN), 1);           /* all of it */
    assert_int_equal(block_in_device_memory(BASE + LEN - 512, 512), 1); /* ending at its end */
    assert_int_equal(block_in_device_memory(BASE + LEN - 1, 1), 1);
    assert_int_equal(block_in_device_memory(BASE + LEN - 512, 513), 0); /* one byte past */
    assert_int_equal(block_in_device_memory(BASE, LEN + 1), 0);
    assert_int_equal(block_in_device_memory(BASE + LEN, 512), 0);     /* the next one's */
    assert_int_equal(block_in_device_memory(BASE - 512, 512), 0);
    assert_int_equal(block_in_device_memory(0, 512), 0);
}

/* Attached at once: the first block entry, one that ends at its allocation's end, is
 * taken as read right; tracking starts and that block is recorded whole. */
static void test_first_block_at_the_end_starts_tracking(void **st)
{
    culeak_rows[CULEAK_ROW_cuMemGetAddressRange_v2].real = (void *)fake_range;
    __atomic_store_n(&state, VALIDATING_NOW, __ATOMIC_RELEASE);
    culeak_torch_waiting = 1;
    ngot = 0;
    on_entry(TE_ALLOC, 1, BASE + LEN - 4096, 4096, 7);
    assert_int_equal(__atomic_load_n(&state, __ATOMIC_ACQUIRE), TRACKING);
    assert_int_equal(culeak_torch_waiting, 0);
    assert_int_equal(ngot, 1);
    assert_int_equal(got[0].op, CULEAK_OP_ALLOC);
    assert_int_equal(got[0].api, CULEAK_API_TORCH_BLOCK_ALLOC);
    assert_int_equal(got[0].kind, CULEAK_KIND_BLOCK);
    assert_int_equal(got[0].addr, BASE + LEN - 4096);
    assert_int_equal(got[0].size, 4096);
    assert_int_equal(got[0].device, 1);
    assert_int_equal(got[0].aux, 7);
    /* one byte past the end: tracking is turned off, nothing recorded */
    __atomic_store_n(&state, VALIDATING_NOW, __ATOMIC_RELEASE);
    culeak_torch_waiting = 1;
    on_entry(TE_ALLOC, 1, BASE + LEN - 4096, 4097, 7);
    assert_int_equal(__atomic_load_n(&state, __ATOMIC_ACQUIRE), OFF);
    assert_int_equal(culeak_torch_waiting, 0);
    assert_int_equal(ngot, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_block_inside_one_allocation),
        cmocka_unit_test(test_first_block_at_the_end_starts_tracking),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
