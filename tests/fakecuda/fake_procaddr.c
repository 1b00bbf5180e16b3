/* cuGetProcAddress with the real driver's semantics: a base name and a CUDA version pick
 * a versioned export (cuMemAlloc@3020 -> cuMemAlloc_v2), the per-thread flag picks the
 * _ptsz/_ptds variant where one exists. The pointers are those of the exported symbols
 * themselves (the library is linked -Bsymbolic-functions, so taking an address here
 * never goes through an interposer), equal to what dlsym(handle, name) returns. */
#include "fake.h"

#include <string.h>

struct proc_entry {
    const char *name;   /* base name, as callers ask for it */
    int version;        /* first CUDA version that gets this variant */
    int per_thread;     /* 1: the CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM variant */
    void *fn;
};

#define E(base, ver, fn) {#base, ver, 0, (void *)&fn},
#define P(base, ver, fn) {#base, ver, 1, (void *)&fn},

static const struct proc_entry table[] = {
    E(cuInit, 2000, cuInit)
    E(cuDriverGetVersion, 2020, cuDriverGetVersion)
    E(cuDeviceGet, 2000, cuDeviceGet)
    E(cuDeviceGetCount, 2000, cuDeviceGetCount)
    E(cuDeviceGetName, 2000, cuDeviceGetName)
    E(cuDeviceTotalMem, 3020, cuDeviceTotalMem_v2)
    E(cuDeviceGetAttribute, 2000, cuDeviceGetAttribute)
    E(cuDevicePrimaryCtxRetain, 7000, cuDevicePrimaryCtxRetain)
    E(cuDevicePrimaryCtxRelease, 7000, cuDevicePrimaryCtxRelease)
    E(cuDevicePrimaryCtxRelease, 11000, cuDevicePrimaryCtxRelease_v2)
    E(cuDevicePrimaryCtxReset, 7000, cuDevicePrimaryCtxReset)
    E(cuDevicePrimaryCtxReset, 11000, cuDevicePrimaryCtxReset_v2)
    E(cuDevicePrimaryCtxGetState, 7000, cuDevicePrimaryCtxGetState)
    E(cuDevicePrimaryCtxSetFlags, 7000, cuDevicePrimaryCtxSetFlags)
    E(cuDevicePrimaryCtxSetFlags, 11000, cuDevicePrimaryCtxSetFlags_v2)
    E(cuCtxCreate, 2000, cuCtxCreate)
    E(cuCtxCreate, 3020, cuCtxCreate_v2)
    E(cuCtxCreate, 11040, cuCtxCreate_v3)
    E(cuCtxCreate, 12050, cuCtxCreate_v4)
    E(cuCtxDestroy, 4000, cuCtxDestroy_v2)
    E(cuCtxSetCurrent, 4000, cuCtxSetCurrent)
    E(cuCtxGetCurrent, 4000, cuCtxGetCurrent)
    E(cuCtxPushCurrent, 4000, cuCtxPushCurrent_v2)
    E(cuCtxPopCurrent, 4000, cuCtxPopCurrent_v2)
    E(cuCtxGetDevice, 2000, cuCtxGetDevice)
    E(cuCtxSynchronize, 2000, cuCtxSynchronize)
    E(cuStreamCreate, 2000, cuStreamCreate)
    E(cuStreamDestroy, 4000, cuStreamDestroy_v2)
    E(cuStreamSynchronize, 2000, cuStreamSynchronize)
    P(cuStreamSynchronize, 7000, cuStreamSynchronize_ptsz)
    E(cuStreamIsCapturing, 10000, cuStreamIsCapturing)
    P(cuStreamIsCapturing, 10000, cuStreamIsCapturing_ptsz)
    E(cuGetErrorName, 6000, cuGetErrorName)
    E(cuGetErrorString, 6000, cuGetErrorString)
    E(cuMemGetInfo, 3020, cuMemGetInfo_v2)
    E(cuMemGetAddressRange, 3020, cuMemGetAddressRange_v2)
    E(cuPointerGetAttribute, 4000, cuPointerGetAttribute)
    E(cuMemAlloc, 2000, cuMemAlloc)
    E(cuMemAlloc, 3020, cuMemAlloc_v2)
    E(cuMemAllocPitch, 2000, cuMemAllocPitch)
    E(cuMemAllocPitch, 3020, cuMemAllocPitch_v2)
    E(cuMemFree, 2000, cuMemFree)
    E(cuMemFree, 3020, cuMemFree_v2)
    E(cuMemAllocManaged, 6000, cuMemAllocManaged)
    E(cuMemAllocHost, 2000, cuMemAllocHost)
    E(cuMemAllocHost, 3020, cuMemAllocHost_v2)
    E(cuMemHostAlloc, 2020, cuMemHostAlloc)
    E(cuMemFreeHost, 2000, cuMemFreeHost)
    E(cuMemHostRegister, 4000, cuMemHostRegister)
    E(cuMemHostRegister, 6050, cuMemHostRegister_v2)
    E(cuMemHostUnregister, 4000, cuMemHostUnregister)
    E(cuMemAllocAsync, 11020, cuMemAllocAsync)
    P(cuMemAllocAsync, 11020, cuMemAllocAsync_ptsz)
    E(cuMemAllocFromPoolAsync, 11020, cuMemAllocFromPoolAsync)
    P(cuMemAllocFromPoolAsync, 11020, cuMemAllocFromPoolAsync_ptsz)
    E(cuMemFreeAsync, 11020, cuMemFreeAsync)
    P(cuMemFreeAsync, 11020, cuMemFreeAsync_ptsz)
    E(cuMemPoolCreate, 11020, cuMemPoolCreate)
    E(cuMemPoolDestroy, 11020, cuMemPoolDestroy)
    E(cuMemPoolTrimTo, 11020, cuMemPoolTrimTo)
    E(cuMemPoolExportPointer, 11020, cuMemPoolExportPointer)
    E(cuMemPoolImportPointer, 11020, cuMemPoolImportPointer)
    E(cuMemCreate, 10020, cuMemCreate)
    E(cuMemRelease, 10020, cuMemRelease)
    E(cuMemMap, 10020, cuMemMap)
    E(cuMemUnmap, 10020, cuMemUnmap)
    E(cuMemSetAccess, 10020, cuMemSetAccess)
    E(cuMemAddressReserve, 10020, cuMemAddressReserve)
    E(cuMemAddressFree, 10020, cuMemAddressFree)
    E(cuMemGetAllocationGranularity, 10020, cuMemGetAllocationGranularity)
    E(cuMemExportToShareableHandle, 10020, cuMemExportToShareableHandle)
    E(cuMemImportFromShareableHandle, 10020, cuMemImportFromShareableHandle)
    E(cuMemRetainAllocationHandle, 11000, cuMemRetainAllocationHandle)
    E(cuArrayCreate, 3020, cuArrayCreate_v2)
    E(cuArray3DCreate, 3020, cuArray3DCreate_v2)
    E(cuArrayDestroy, 2000, cuArrayDestroy)
    E(cuMipmappedArrayCreate, 5000, cuMipmappedArrayCreate)
    E(cuMipmappedArrayDestroy, 5000, cuMipmappedArrayDestroy)
    E(cuIpcGetMemHandle, 4010, cuIpcGetMemHandle)
    E(cuIpcOpenMemHandle, 4010, cuIpcOpenMemHandle)
    E(cuIpcOpenMemHandle, 11000, cuIpcOpenMemHandle_v2)
    E(cuIpcCloseMemHandle, 4010, cuIpcCloseMemHandle)
    E(cuImportExternalMemory, 10000, cuImportExternalMemory)
    E(cuDestroyExternalMemory, 10000, cuDestroyExternalMemory)
    E(cuGraphCreate, 10000, cuGraphCreate)
    E(cuGraphDestroy, 10000, cuGraphDestroy)
    E(cuGraphAddMemAllocNode, 11040, cuGraphAddMemAllocNode)
    E(cuGraphAddMemFreeNode, 11040, cuGraphAddMemFreeNode)
    E(cuDeviceGraphMemTrim, 11040, cuDeviceGraphMemTrim)
    E(cuMemcpyHtoD, 2000, cuMemcpyHtoD)
    E(cuMemcpyHtoD, 3020, cuMemcpyHtoD_v2)
    P(cuMemcpyHtoD, 7000, cuMemcpyHtoD_v2_ptds)
    E(cuMemcpyDtoH, 2000, cuMemcpyDtoH)
    E(cuMemcpyDtoH, 3020, cuMemcpyDtoH_v2)
    P(cuMemcpyDtoH, 7000, cuMemcpyDtoH_v2_ptds)
    E(cuMemsetD8, 2000, cuMemsetD8)
    E(cuMemsetD8, 3020, cuMemsetD8_v2)
    P(cuMemsetD8, 7000, cuMemsetD8_v2_ptds)
    E(cuGetProcAddress, 11030, cuGetProcAddress)
    E(cuGetProcAddress, 12000, cuGetProcAddress_v2)
};

#undef E
#undef P

/* Best entry of one kind (per_thread or not) for name at version; *known says the name exists. */
static const struct proc_entry *pick(const char *name, int version, int per_thread, int *known)
{
    const struct proc_entry *best = NULL;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const struct proc_entry *e = &table[i];
        if (e->per_thread != per_thread || strcmp(e->name, name) != 0)
            continue;
        *known = 1;
        if (e->version <= version && (!best || e->version > best->version))
            best = e;
    }
    return best;
}

void *fake_proc_lookup(const char *name, int version, cuuint64_t flags, CUresult *res,
                       CUdriverProcAddressQueryResult *status)
{
    int known = 0;
    const struct proc_entry *e = NULL;
    if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
        e = pick(name, version, 1, &known);
    if (!e) /* functions without a per-thread variant answer with their only one */
        e = pick(name, version, 0, &known);
    if (status)
        *status = e ? CU_GET_PROC_ADDRESS_SUCCESS
                    : known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    *res = e ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
    return e ? e->fn : NULL;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *symbolStatus)
{
    if (!symbol || !pfn || (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
                                                  CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r;
    *pfn = fake_proc_lookup(symbol, cudaVersion, flags, &r, symbolStatus);
    return r;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, NULL);
}
