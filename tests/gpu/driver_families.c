/* The driver API directly (linked to libcuda): plain, pitch, managed, host, registered,
 * stream-ordered, VMM (create/reserve/map/unmap/release), with two deliberate leaks. */
#include <cuda.h>
#include <stdint.h>
#include "ledger.h"

#define CHECK_DRV(call)                                                         \
    do {                                                                        \
        CUresult r_ = (call);                                                   \
        if (r_ != CUDA_SUCCESS) {                                               \
            const char *n_ = "?";                                               \
            cuGetErrorName(r_, &n_);                                            \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, n_);  \
            exit(1);                                                            \
        }                                                                       \
    } while (0)

int main(void) {
    CUdevice dev;
    CUcontext ctx;
    CHECK_DRV(cuInit(0));
    CHECK_DRV(cuDeviceGet(&dev, 0));
    CHECK_DRV(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK_DRV(cuCtxSetCurrent(ctx));
    CUdeviceptr p, q;
    CHECK_DRV(cuMemAlloc(&p, 1 << 20));
    LEDGER_ALLOC("cuMemAlloc_v2", 1 << 20, p);
    CHECK_DRV(cuMemAlloc(&q, 2 << 20));
    LEDGER_ALLOC("cuMemAlloc_v2", 2 << 20, q);  /* leaks */
    CHECK_DRV(cuMemFree(p));
    LEDGER_FREE(p);
    size_t pitch;
    CHECK_DRV(cuMemAllocPitch(&p, &pitch, 1000, 20, 4));
    LEDGER_ALLOC("cuMemAllocPitch_v2", pitch * 20, p);
    CHECK_DRV(cuMemFree(p));
    LEDGER_FREE(p);
    CHECK_DRV(cuMemAllocManaged(&p, 1 << 16, CU_MEM_ATTACH_GLOBAL));
    LEDGER_ALLOC("cuMemAllocManaged", 1 << 16, p);
    CHECK_DRV(cuMemFree(p));
    LEDGER_FREE(p);
    void *h;
    CHECK_DRV(cuMemHostAlloc(&h, 12345, 0));
    LEDGER_ALLOC("cuMemHostAlloc", 12345, h);
    CHECK_DRV(cuMemFreeHost(h));
    LEDGER_FREE(h);
    CHECK_DRV(cuMemAllocHost(&h, 4096));
    LEDGER_ALLOC("cuMemAllocHost_v2", 4096, h);
    CHECK_DRV(cuMemFreeHost(h));
    LEDGER_FREE(h);
    CUstream s;
    CHECK_DRV(cuStreamCreate(&s, 0));
    CHECK_DRV(cuMemAllocAsync(&p, 3 << 20, s));
    LEDGER_ALLOC("cuMemAllocAsync", 3 << 20, p);
    CHECK_DRV(cuMemFreeAsync(p, s));
    LEDGER_FREE(p);
    CHECK_DRV(cuStreamSynchronize(s));
    /* virtual memory */
    CUmemAllocationProp prop = {0};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    size_t gran;
    CHECK_DRV(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    size_t sz = 4 * gran;
    CUmemGenericAllocationHandle hnd;
    CHECK_DRV(cuMemCreate(&hnd, sz, &prop, 0));
    LEDGER_ALLOC("cuMemCreate", sz, hnd);
    CUdeviceptr va;
    CHECK_DRV(cuMemAddressReserve(&va, sz, 0, 0, 0));
    LEDGER_ALLOC("cuMemAddressReserve", sz, va);
    CHECK_DRV(cuMemMap(va, sz, 0, hnd, 0));
    LEDGER_ALLOC("cuMemMap", sz, va);
    CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, dev}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CHECK_DRV(cuMemSetAccess(va, sz, &acc, 1));
    CHECK_DRV(cuMemsetD8(va, 1, sz));
    CHECK_DRV(cuMemUnmap(va, sz));
    LEDGER_FREE(va);
    CHECK_DRV(cuMemAddressFree(va, sz));
    LEDGER_FREE(va);
    CHECK_DRV(cuMemRelease(hnd));
    LEDGER_FREE(hnd);
    CHECK_DRV(cuMemHostAlloc(&h, 777, 0));
    LEDGER_ALLOC("cuMemHostAlloc", 777, h); /* leaks */
    printf("driver_families: done\n");
    return 0;
}
