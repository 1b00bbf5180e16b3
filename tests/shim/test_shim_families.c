/* Every entry-point family, reached each way a program reaches the driver (static cudart's
 * cuGetProcAddress, dlsym by name, direct linking, the shared runtime), is seen exactly
 * once with the right api, op, kind and size, and frees pair with their allocations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_shim_harness.h"
#include "../fakecuda/scenarios.h"

#define ANY UINT64_MAX /* size not asserted: the shim cannot always know it (imports) */

struct expect {
    int api;
    unsigned op, kind;  /* kind asserted for allocations only */
    uint64_t size;
    int pairs;          /* for a free: index of the allocation it ends; -1 none */
};

#define A(api, kind, size) {CULEAK_API_##api, CULEAK_OP_ALLOC, CULEAK_KIND_##kind, size, -1}
#define F(api, of) {CULEAK_API_##api, CULEAK_OP_FREE, 0, ANY, of}

static const struct expect driver_families[] = {
    /* 0 */ A(CU_MEM_ALLOC, DEVICE, SZ_ALLOC), F(CU_MEM_FREE, 0),
    /* 2 */ A(CU_MEM_ALLOC_PITCH, DEVICE, SZ_PITCH_BYTES), F(CU_MEM_FREE, 2),
    /* 4 */ A(CU_MEM_ALLOC_MANAGED, MANAGED, SZ_MANAGED), F(CU_MEM_FREE, 4),
    /* 6 */ A(CU_MEM_ALLOC_HOST, HOST_PINNED, SZ_HOST), F(CU_MEM_FREE_HOST, 6),
    /* 8 */ A(CU_MEM_HOST_ALLOC, HOST_PINNED, SZ_HOSTALLOC), F(CU_MEM_FREE_HOST, 8),
    /* 10 */ A(CU_MEM_HOST_REGISTER, HOST_REGISTERED, SZ_REGISTER), F(CU_MEM_HOST_UNREGISTER, 10),
    /* 12 */ A(CU_MEM_ALLOC_ASYNC, DEVICE, SZ_ASYNC), F(CU_MEM_FREE_ASYNC, 12),
    /* 14 */ A(CU_MEM_ALLOC_ASYNC_PTSZ, DEVICE, SZ_ASYNC_PTSZ), F(CU_MEM_FREE_ASYNC_PTSZ, 14),
    /* 16 */ A(CU_MEM_POOL_CREATE, POOL, 0),
    /* 17 */ A(CU_MEM_ALLOC_FROM_POOL_ASYNC, DEVICE, SZ_POOL),
    /* 18 */ A(CU_MEM_POOL_IMPORT_POINTER, IPC, ANY), F(CU_MEM_FREE, 18), F(CU_MEM_FREE_ASYNC, 17),
    /* 21 */ A(CU_MEM_ALLOC_FROM_POOL_ASYNC_PTSZ, DEVICE, SZ_POOL_PTSZ), F(CU_MEM_FREE_ASYNC_PTSZ, 21),
    /* 23 */ {CULEAK_API_CU_MEM_POOL_TRIM_TO, CULEAK_OP_TRIM, 0, ANY, 16}, F(CU_MEM_POOL_DESTROY, 16),
    /* 25 */ A(CU_MEM_CREATE, VMM_PHYSICAL, SZ_VMM),
    /* 26 */ A(CU_MEM_ADDRESS_RESERVE, ADDRESS_RESERVE, SZ_VA),
    /* 27 */ A(CU_MEM_MAP, VMM_MAPPED, SZ_VMM),
    /* 28 */ {CULEAK_API_CU_MEM_RETAIN_ALLOCATION_HANDLE, CULEAK_OP_RETAIN, 0, ANY, 25}, F(CU_MEM_RELEASE, 25),
    /* 30 */ A(CU_MEM_IMPORT_FROM_SHAREABLE_HANDLE, VMM_PHYSICAL, ANY), F(CU_MEM_RELEASE, 30),
    /* 32 */ F(CU_MEM_UNMAP, 27), F(CU_MEM_RELEASE, 25), F(CU_MEM_ADDRESS_FREE, 26),
    /* 35 */ A(CU_ARRAY_CREATE, ARRAY, SZ_ARRAY), F(CU_ARRAY_DESTROY, 35),
    /* 37 */ A(CU_ARRAY_3D_CREATE, ARRAY, SZ_ARRAY3D), F(CU_ARRAY_DESTROY, 37),
    /* 39 */ A(CU_MIPMAPPED_ARRAY_CREATE, ARRAY, SZ_MIPMAP), F(CU_MIPMAPPED_ARRAY_DESTROY, 39),
    /* 41 */ A(CU_MEM_ALLOC, DEVICE, SZ_IPC),
    /* 42 */ A(CU_IPC_OPEN_MEM_HANDLE, IPC, ANY), F(CU_IPC_CLOSE_MEM_HANDLE, 42), F(CU_MEM_FREE, 41),
    /* 45 */ A(CU_IMPORT_EXTERNAL_MEMORY, EXTERNAL, SZ_EXTERNAL), F(CU_DESTROY_EXTERNAL_MEMORY, 45),
    /* 47 */ A(CU_GRAPH_ADD_MEM_ALLOC_NODE, GRAPH, SZ_GRAPH), F(CU_GRAPH_ADD_MEM_FREE_NODE, 47),
};

/* One event per runtime call, named after it: the driver calls underneath are not counted
 * again, and cudaFree(0) (context set-up) is nothing. */
static const struct expect runtime_families[] = {
    A(CUDA_MALLOC, DEVICE, SZ_ALLOC), F(CUDA_FREE, 0),
    A(CUDA_MALLOC_HOST, HOST_PINNED, SZ_HOST), F(CUDA_FREE_HOST, 2),
    A(CUDA_HOST_ALLOC, HOST_PINNED, SZ_HOSTALLOC), F(CUDA_FREE_HOST, 4),
    A(CUDA_MALLOC_MANAGED, MANAGED, SZ_MANAGED), F(CUDA_FREE, 6),
    A(CUDA_MALLOC_ASYNC, DEVICE, SZ_ASYNC), F(CUDA_FREE_ASYNC, 8),
    A(CUDA_MALLOC_MIPMAPPED_ARRAY, ARRAY, SZ_RT_MIPMAP), F(CUDA_FREE_MIPMAPPED_ARRAY, 10),
    {CULEAK_API_CUDA_DEVICE_RESET, CULEAK_OP_FREE_ALL, 0, ANY, -1},
};

static void check(const char *client, const struct expect *x, size_t n)
{
    char dir[64];
    struct th_rec rec;
    struct th_run run;
    const char *args[] = {"families", NULL};
    assert_non_null(th_mkdtemp(dir, sizeof dir));
    assert_int_equal(th_record(&rec, &run, dir, client, args, NULL, 1), 0);
    assert_true(th_exited_ok(&run));
    assert_int_equal(rec.rc, 0);
    assert_int_equal(rec.hellos, 1);
    assert_int_equal(rec.hello.pid, (uint64_t)run.pid);
    for (size_t i = 0; i < rec.nev && i < n; i++) {
        const struct culeak_event *e = &rec.ev[i];
        if (e->api != (uint32_t)x[i].api || e->op != x[i].op)
            fail_msg("%s event %zu: got %s/%s, expected %s/%s", client, i, culeak_api_name(e->api),
                     culeak_op_name(e->op), culeak_api_name((unsigned)x[i].api), culeak_op_name(x[i].op));
        assert_int_equal(e->seq, i + 1);
        assert_int_equal(e->result, 0);
        assert_int_not_equal(e->tid, 0);
        if (x[i].op == CULEAK_OP_ALLOC) {
            if (e->kind != x[i].kind)
                fail_msg("%s event %zu (%s): kind %s, expected %s", client, i, culeak_api_name(e->api),
                         culeak_kind_name(e->kind), culeak_kind_name(x[i].kind));
            assert_int_not_equal(e->addr, 0);
        }
        if (x[i].size != ANY && e->size != x[i].size)
            fail_msg("%s event %zu (%s): size %llu, expected %llu", client, i, culeak_api_name(e->api),
                     (unsigned long long)e->size, (unsigned long long)x[i].size);
        if (x[i].kind == CULEAK_KIND_DEVICE || x[i].kind == CULEAK_KIND_MANAGED)
            assert_int_equal(e->device, 0);
        if (x[i].pairs >= 0 && e->addr != rec.ev[x[i].pairs].addr)
            fail_msg("%s event %zu (%s): addr %#llx does not match event %d's %#llx", client, i,
                     culeak_api_name(e->api), (unsigned long long)e->addr, x[i].pairs,
                     (unsigned long long)rec.ev[x[i].pairs].addr);
    }
    if (rec.nev != n)
        fail_msg("%s: %zu events, expected %zu", client, rec.nev, n);
    th_rec_free(&rec);
    th_rmdir(dir);
}

/* Stream-ordered allocations carry their stream; a mapping carries its physical handle. */
static void check_aux(const char *client)
{
    char dir[64];
    struct th_rec rec;
    struct th_run run;
    const char *args[] = {"families", NULL};
    assert_non_null(th_mkdtemp(dir, sizeof dir));
    assert_int_equal(th_record(&rec, &run, dir, client, args, NULL, 0), 0);
    assert_true(rec.nev == sizeof driver_families / sizeof driver_families[0]);
    assert_int_not_equal(rec.ev[12].aux, 0);           /* cuMemAllocAsync: the stream */
    assert_int_equal(rec.ev[14].aux, rec.ev[12].aux);  /* same stream, _ptsz */
    assert_int_equal(rec.ev[17].aux == 0, 0);          /* from pool: pool or stream */
    assert_int_equal(rec.ev[27].aux, rec.ev[25].addr); /* cuMemMap: the cuMemCreate handle */
    th_rec_free(&rec);
    th_rmdir(dir);
}

#define N(a) (sizeof a / sizeof a[0])
static void test_static_cudart_path(void **s) { check("client_static", driver_families, N(driver_families)); }
static void test_dlsym_path(void **s) { check("client_dlsym", driver_families, N(driver_families)); }
static void test_linked_path(void **s) { check("client_driver", driver_families, N(driver_families)); }
static void test_runtime_path(void **s) { check("client_runtime", runtime_families, N(runtime_families)); }
static void test_aux_fields(void **s) { check_aux("client_static"); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_static_cudart_path),
        cmocka_unit_test(test_dlsym_path),
        cmocka_unit_test(test_linked_path),
        cmocka_unit_test(test_runtime_path),
        cmocka_unit_test(test_aux_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
