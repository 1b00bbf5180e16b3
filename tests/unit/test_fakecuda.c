/* The fake driver itself: cuGetProcAddress semantics and pointer identity with dlsym,
 * v1 names, _ptsz variants, NOT_INITIALIZED before cuInit, OOM, and teardown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cuda/culeak_cuda.h"
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef CUresult (*gpa_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa1_t)(const char *, void **, int, cuuint64_t);

static void *lib, *interposer;
static gpa_t gpa;

static void *sym(const char *name)
{
    void *p = dlsym(lib, name);
    assert_non_null(p);
    return p;
}

static void *lookup(const char *name, int version, cuuint64_t flags)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    assert_int_equal(gpa(name, &p, version, flags, &st), CUDA_SUCCESS);
    assert_int_equal(st, CU_GET_PROC_ADDRESS_SUCCESS);
    return p;
}

/* Before anything else: an interposer exporting cuMemAlloc_v2 joins the global scope
 * first, the way LD_PRELOAD would, then the fake is loaded. */
static int setup(void **state)
{
    char path[PATH_MAX];
    const char *b = getenv("BUILD");
    snprintf(path, sizeof path, "%s/fakecuda/libinterposer.so", b && *b ? b : "build");
    interposer = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    snprintf(path, sizeof path, "%s/fakecuda/libcuda.so.1", b && *b ? b : "build");
    setenv("FAKECUDA_MEM_BYTES", "4194304", 1);
    setenv("FAKECUDA_DEVICES", "3", 1);
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib || !interposer) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return -1;
    }
    gpa = (gpa_t)dlsym(lib, "cuGetProcAddress_v2");
    return gpa ? 0 : -1;
}

static void test_not_initialized(void **state)
{
    CUresult (*alloc)(CUdeviceptr *, size_t) = (CUresult(*)(CUdeviceptr *, size_t))sym("cuMemAlloc_v2");
    CUresult (*count)(int *) = (CUresult(*)(int *))sym("cuDeviceGetCount");
    CUresult (*version)(int *) = (CUresult(*)(int *))sym("cuDriverGetVersion");
    CUdeviceptr d;
    int n = 0, v = 0;
    assert_int_equal(alloc(&d, 16), CUDA_ERROR_NOT_INITIALIZED);
    assert_int_equal(count(&n), CUDA_ERROR_NOT_INITIALIZED);
    assert_int_equal(version(&v), CUDA_SUCCESS);
    assert_int_equal(v, 13000);
    /* cuGetProcAddress works before cuInit: cudart asks it for cuInit */
    assert_ptr_equal(lookup("cuInit", 2000, 0), sym("cuInit"));
    assert_int_equal(((CUresult(*)(unsigned))sym("cuInit"))(0), CUDA_SUCCESS);
    assert_int_equal(count(&n), CUDA_SUCCESS);
    assert_int_equal(n, 3);
}

static void test_versioned_identity(void **state)
{
    static const struct {
        const char *base;
        int version;
        cuuint64_t flags;
        const char *exported;
    } cases[] = {
        {"cuMemAlloc", 2000, 0, "cuMemAlloc"},
        {"cuMemAlloc", 3010, 0, "cuMemAlloc"},
        {"cuMemAlloc", 3020, 0, "cuMemAlloc_v2"},
        {"cuMemAlloc", 13000, 0, "cuMemAlloc_v2"},
        {"cuMemAlloc", 13000, 2, "cuMemAlloc_v2"}, /* no per-thread variant: the only one */
        {"cuMemFree", 2000, 0, "cuMemFree"},
        {"cuMemFree", 12000, 0, "cuMemFree_v2"},
        {"cuMemAllocPitch", 3000, 0, "cuMemAllocPitch"},
        {"cuMemAllocPitch", 3020, 0, "cuMemAllocPitch_v2"},
        {"cuMemAllocHost", 3020, 0, "cuMemAllocHost_v2"},
        {"cuMemHostRegister", 6000, 0, "cuMemHostRegister"},
        {"cuMemHostRegister", 6050, 0, "cuMemHostRegister_v2"},
        {"cuCtxCreate", 3020, 0, "cuCtxCreate_v2"},
        {"cuCtxCreate", 12000, 0, "cuCtxCreate_v3"},
        {"cuCtxCreate", 13000, 0, "cuCtxCreate_v4"},
        {"cuCtxDestroy", 13000, 0, "cuCtxDestroy_v2"},
        {"cuDevicePrimaryCtxRelease", 10000, 0, "cuDevicePrimaryCtxRelease"},
        {"cuDevicePrimaryCtxRelease", 11000, 0, "cuDevicePrimaryCtxRelease_v2"},
        {"cuDevicePrimaryCtxReset", 13000, 0, "cuDevicePrimaryCtxReset_v2"},
        {"cuIpcOpenMemHandle", 11000, 0, "cuIpcOpenMemHandle_v2"},
        {"cuMemAllocAsync", 11020, 0, "cuMemAllocAsync"},
        {"cuMemAllocAsync", 12000, 2, "cuMemAllocAsync_ptsz"},
        {"cuMemFreeAsync", 12000, 0, "cuMemFreeAsync"},
        {"cuMemFreeAsync", 12000, 2, "cuMemFreeAsync_ptsz"},
        {"cuMemAllocFromPoolAsync", 12000, 0, "cuMemAllocFromPoolAsync"},
        {"cuMemAllocFromPoolAsync", 12000, 2, "cuMemAllocFromPoolAsync_ptsz"},
        {"cuStreamSynchronize", 12000, 2, "cuStreamSynchronize_ptsz"},
        {"cuStreamIsCapturing", 12000, 2, "cuStreamIsCapturing_ptsz"},
        {"cuMemcpyHtoD", 12000, 0, "cuMemcpyHtoD_v2"},
        {"cuMemcpyHtoD", 12000, 2, "cuMemcpyHtoD_v2_ptds"},
        {"cuMemCreate", 12000, 0, "cuMemCreate"},
        {"cuGetProcAddress", 11030, 0, "cuGetProcAddress"},
        {"cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        void *p = lookup(cases[i].base, cases[i].version, cases[i].flags);
        if (p != sym(cases[i].exported))
            fail_msg("%s@%d flags %d: not %s", cases[i].base, cases[i].version, (int)cases[i].flags,
                     cases[i].exported);
    }
    /* v1 and v2 are distinct functions (different ABIs) */
    assert_ptr_not_equal(sym("cuMemAlloc"), sym("cuMemAlloc_v2"));
    assert_ptr_not_equal(sym("cuMemAllocAsync"), sym("cuMemAllocAsync_ptsz"));
}

static void test_interposer_not_returned(void **state)
{
    void *theirs = dlsym(interposer, "cuMemAlloc_v2");
    assert_non_null(theirs);
    assert_ptr_not_equal(theirs, sym("cuMemAlloc_v2"));
    assert_ptr_equal(lookup("cuMemAlloc", 3020, 0), sym("cuMemAlloc_v2"));
}

static void test_status_and_errors(void **state)
{
    void *p = (void *)1;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
    /* symbolStatus may be NULL, as static cudart passes it */
    assert_int_equal(gpa("cuMemFree", &p, 12000, 0, NULL), CUDA_SUCCESS);
    assert_ptr_equal(p, sym("cuMemFree_v2"));
    assert_int_equal(gpa("cuNoSuchFunction", &p, 13000, 0, &st), CUDA_ERROR_NOT_FOUND);
    assert_int_equal(st, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    assert_null(p);
    assert_int_equal(gpa("cuNoSuchFunction", &p, 13000, 0, NULL), CUDA_ERROR_NOT_FOUND);
    assert_int_equal(gpa("cuMemAllocAsync", &p, 11000, 0, &st), CUDA_ERROR_NOT_FOUND);
    assert_int_equal(st, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    assert_int_equal(gpa(NULL, &p, 13000, 0, NULL), CUDA_ERROR_INVALID_VALUE);
    /* the v1 ABI of cuGetProcAddress (no status argument) */
    gpa1_t gpa1 = (gpa1_t)lookup("cuGetProcAddress", 11030, 0);
    assert_int_equal(gpa1("cuMemAllocAsync", &p, 12000, 2), CUDA_SUCCESS);
    assert_ptr_equal(p, sym("cuMemAllocAsync_ptsz"));
    /* what cuGetProcAddress returns for itself resolves the same way */
    gpa_t self = (gpa_t)lookup("cuGetProcAddress", 12000, 0);
    assert_ptr_equal(self, gpa);
}

static void test_memory_accounting(void **state)
{
    CUresult (*retain)(CUcontext *, CUdevice) = (CUresult(*)(CUcontext *, CUdevice))sym("cuDevicePrimaryCtxRetain");
    CUresult (*set)(CUcontext) = (CUresult(*)(CUcontext))sym("cuCtxSetCurrent");
    CUresult (*create)(CUcontext *, CUctxCreateParams *, unsigned, CUdevice) =
        (CUresult(*)(CUcontext *, CUctxCreateParams *, unsigned, CUdevice))sym("cuCtxCreate_v4");
    CUresult (*destroy)(CUcontext) = (CUresult(*)(CUcontext))sym("cuCtxDestroy_v2");
    CUresult (*alloc)(CUdeviceptr *, size_t) = (CUresult(*)(CUdeviceptr *, size_t))sym("cuMemAlloc_v2");
    CUresult (*mfree)(CUdeviceptr) = (CUresult(*)(CUdeviceptr))sym("cuMemFree_v2");
    CUresult (*reset)(CUdevice) = (CUresult(*)(CUdevice))sym("cuDevicePrimaryCtxReset_v2");
    CUresult (*info)(size_t *, size_t *) = (CUresult(*)(size_t *, size_t *))sym("cuMemGetInfo_v2");
    size_t (*live)(void) = (size_t(*)(void))sym("fakecuda_live_bytes");
    CUcontext p, c;
    CUdeviceptr a, b, x;
    size_t fr, total;
    size_t before = live();
    assert_int_equal(alloc(&a, 16), CUDA_ERROR_INVALID_CONTEXT);
    assert_int_equal(retain(&p, 0), CUDA_SUCCESS);
    assert_int_equal(set(p), CUDA_SUCCESS);
    assert_int_equal(mfree(0), CUDA_SUCCESS);
    assert_int_equal(alloc(&a, 3u << 20), CUDA_SUCCESS);
    assert_int_equal(info(&fr, &total), CUDA_SUCCESS);
    assert_int_equal(total, 4u << 20);
    assert_int_equal(fr, 1u << 20);
    assert_int_equal(alloc(&b, 2u << 20), CUDA_ERROR_OUT_OF_MEMORY); /* FAKECUDA_MEM_BYTES */
    assert_int_equal(live(), before + (3u << 20));
    assert_int_equal(mfree(a), CUDA_SUCCESS);
    assert_int_equal(mfree(a), CUDA_ERROR_INVALID_VALUE); /* double free */
    /* destroying a context frees its memory */
    assert_int_equal(create(&c, NULL, 0, 1), CUDA_SUCCESS);
    assert_int_equal(alloc(&x, 1000), CUDA_SUCCESS);
    assert_int_equal(live(), before + 1000);
    assert_int_equal(destroy(c), CUDA_SUCCESS);
    assert_int_equal(live(), before);
    /* and so does resetting the primary context */
    assert_int_equal(set(p), CUDA_SUCCESS);
    assert_int_equal(alloc(&x, 1000), CUDA_SUCCESS);
    assert_int_equal(reset(0), CUDA_SUCCESS);
    assert_int_equal(live(), before);
    assert_int_equal(mfree(x), CUDA_ERROR_INVALID_CONTEXT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_initialized),
        cmocka_unit_test(test_versioned_identity),
        cmocka_unit_test(test_interposer_not_returned),
        cmocka_unit_test(test_status_and_errors),
        cmocka_unit_test(test_memory_accounting),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
