/* The driver table every client program fills in its own way (cuGetProcAddress, dlsym by
 * name, or direct linking) before running the shared scenarios of client_scenarios.c.
 * X(field, exported symbol, pointer type, base name, version, cuGetProcAddress flags) */
#ifndef FAKECUDA_CLIENT_API_H
#define FAKECUDA_CLIENT_API_H

#include "cuda/culeak_cuda.h"

typedef CUresult (*pfn_v1_alloc)(unsigned int *dptr, unsigned int bytesize);
typedef CUresult (*pfn_v1_free)(unsigned int dptr);
typedef CUresult (*pfn_v1_htod)(unsigned int dst, const void *src, unsigned int n);
typedef CUresult (*pfn_v1_dtoh)(void *dst, unsigned int src, unsigned int n);

#define T(f) __typeof__(&f)
#define CLIENT_DRIVER_API(X)                                                                        \
    X(cuInit, cuInit, T(cuInit), cuInit, 2000, 0)                                                   \
    X(cuDriverGetVersion, cuDriverGetVersion, T(cuDriverGetVersion), cuDriverGetVersion, 2020, 0)   \
    X(cuDeviceGet, cuDeviceGet, T(cuDeviceGet), cuDeviceGet, 2000, 0)                               \
    X(cuDeviceGetCount, cuDeviceGetCount, T(cuDeviceGetCount), cuDeviceGetCount, 2000, 0)           \
    X(cuDeviceGetName, cuDeviceGetName, T(cuDeviceGetName), cuDeviceGetName, 2000, 0)               \
    X(cuDeviceTotalMem_v2, cuDeviceTotalMem_v2, T(cuDeviceTotalMem_v2), cuDeviceTotalMem, 3020, 0)  \
    X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, T(cuDevicePrimaryCtxRetain), cuDevicePrimaryCtxRetain, 7000, 0) \
    X(cuDevicePrimaryCtxRelease_v2, cuDevicePrimaryCtxRelease_v2, T(cuDevicePrimaryCtxRelease_v2), cuDevicePrimaryCtxRelease, 11000, 0) \
    X(cuDevicePrimaryCtxReset_v2, cuDevicePrimaryCtxReset_v2, T(cuDevicePrimaryCtxReset_v2), cuDevicePrimaryCtxReset, 11000, 0) \
    X(cuCtxCreate_v4, cuCtxCreate_v4, T(cuCtxCreate_v4), cuCtxCreate, 12050, 0)                    \
    X(cuCtxDestroy_v2, cuCtxDestroy_v2, T(cuCtxDestroy_v2), cuCtxDestroy, 4000, 0)                  \
    X(cuCtxSetCurrent, cuCtxSetCurrent, T(cuCtxSetCurrent), cuCtxSetCurrent, 4000, 0)               \
    X(cuCtxGetCurrent, cuCtxGetCurrent, T(cuCtxGetCurrent), cuCtxGetCurrent, 4000, 0)               \
    X(cuCtxPopCurrent_v2, cuCtxPopCurrent_v2, T(cuCtxPopCurrent_v2), cuCtxPopCurrent, 4000, 0)      \
    X(cuCtxSynchronize, cuCtxSynchronize, T(cuCtxSynchronize), cuCtxSynchronize, 2000, 0)           \
    X(cuStreamCreate, cuStreamCreate, T(cuStreamCreate), cuStreamCreate, 2000, 0)                   \
    X(cuStreamDestroy_v2, cuStreamDestroy_v2, T(cuStreamDestroy_v2), cuStreamDestroy, 4000, 0)      \
    X(cuStreamSynchronize, cuStreamSynchronize, T(cuStreamSynchronize), cuStreamSynchronize, 2000, 0) \
    X(cuStreamSynchronize_ptsz, cuStreamSynchronize_ptsz, T(cuStreamSynchronize), cuStreamSynchronize, 7000, 2) \
    X(cuGetErrorName, cuGetErrorName, T(cuGetErrorName), cuGetErrorName, 6000, 0)                   \
    X(cuMemGetInfo_v2, cuMemGetInfo_v2, T(cuMemGetInfo_v2), cuMemGetInfo, 3020, 0)                  \
    X(cuMemAlloc_v2, cuMemAlloc_v2, T(cuMemAlloc_v2), cuMemAlloc, 3020, 0)                          \
    X(cuMemAllocPitch_v2, cuMemAllocPitch_v2, T(cuMemAllocPitch_v2), cuMemAllocPitch, 3020, 0)      \
    X(cuMemFree_v2, cuMemFree_v2, T(cuMemFree_v2), cuMemFree, 3020, 0)                              \
    X(v1_cuMemAlloc, cuMemAlloc, pfn_v1_alloc, cuMemAlloc, 2000, 0)                                 \
    X(v1_cuMemFree, cuMemFree, pfn_v1_free, cuMemFree, 2000, 0)                                     \
    X(v1_cuMemcpyHtoD, cuMemcpyHtoD, pfn_v1_htod, cuMemcpyHtoD, 2000, 0)                            \
    X(v1_cuMemcpyDtoH, cuMemcpyDtoH, pfn_v1_dtoh, cuMemcpyDtoH, 2000, 0)                            \
    X(cuMemAllocManaged, cuMemAllocManaged, T(cuMemAllocManaged), cuMemAllocManaged, 6000, 0)       \
    X(cuMemAllocHost_v2, cuMemAllocHost_v2, T(cuMemAllocHost_v2), cuMemAllocHost, 3020, 0)          \
    X(cuMemHostAlloc, cuMemHostAlloc, T(cuMemHostAlloc), cuMemHostAlloc, 2020, 0)                   \
    X(cuMemFreeHost, cuMemFreeHost, T(cuMemFreeHost), cuMemFreeHost, 2000, 0)                       \
    X(cuMemHostRegister_v2, cuMemHostRegister_v2, T(cuMemHostRegister_v2), cuMemHostRegister, 6050, 0) \
    X(cuMemHostUnregister, cuMemHostUnregister, T(cuMemHostUnregister), cuMemHostUnregister, 4000, 0) \
    X(cuMemAllocAsync, cuMemAllocAsync, T(cuMemAllocAsync), cuMemAllocAsync, 11020, 0)              \
    X(cuMemAllocAsync_ptsz, cuMemAllocAsync_ptsz, T(cuMemAllocAsync), cuMemAllocAsync, 11020, 2)    \
    X(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync, T(cuMemAllocFromPoolAsync), cuMemAllocFromPoolAsync, 11020, 0) \
    X(cuMemAllocFromPoolAsync_ptsz, cuMemAllocFromPoolAsync_ptsz, T(cuMemAllocFromPoolAsync), cuMemAllocFromPoolAsync, 11020, 2) \
    X(cuMemFreeAsync, cuMemFreeAsync, T(cuMemFreeAsync), cuMemFreeAsync, 11020, 0)                  \
    X(cuMemFreeAsync_ptsz, cuMemFreeAsync_ptsz, T(cuMemFreeAsync), cuMemFreeAsync, 11020, 2)        \
    X(cuMemPoolCreate, cuMemPoolCreate, T(cuMemPoolCreate), cuMemPoolCreate, 11020, 0)              \
    X(cuMemPoolDestroy, cuMemPoolDestroy, T(cuMemPoolDestroy), cuMemPoolDestroy, 11020, 0)          \
    X(cuMemPoolTrimTo, cuMemPoolTrimTo, T(cuMemPoolTrimTo), cuMemPoolTrimTo, 11020, 0)              \
    X(cuMemPoolExportPointer, cuMemPoolExportPointer, T(cuMemPoolExportPointer), cuMemPoolExportPointer, 11020, 0) \
    X(cuMemPoolImportPointer, cuMemPoolImportPointer, T(cuMemPoolImportPointer), cuMemPoolImportPointer, 11020, 0) \
    X(cuMemCreate, cuMemCreate, T(cuMemCreate), cuMemCreate, 10020, 0)                              \
    X(cuMemRelease, cuMemRelease, T(cuMemRelease), cuMemRelease, 10020, 0)                          \
    X(cuMemMap, cuMemMap, T(cuMemMap), cuMemMap, 10020, 0)                                          \
    X(cuMemUnmap, cuMemUnmap, T(cuMemUnmap), cuMemUnmap, 10020, 0)                                  \
    X(cuMemSetAccess, cuMemSetAccess, T(cuMemSetAccess), cuMemSetAccess, 10020, 0)                  \
    X(cuMemAddressReserve, cuMemAddressReserve, T(cuMemAddressReserve), cuMemAddressReserve, 10020, 0) \
    X(cuMemAddressFree, cuMemAddressFree, T(cuMemAddressFree), cuMemAddressFree, 10020, 0)          \
    X(cuMemRetainAllocationHandle, cuMemRetainAllocationHandle, T(cuMemRetainAllocationHandle), cuMemRetainAllocationHandle, 11000, 0) \
    X(cuMemGetAllocationGranularity, cuMemGetAllocationGranularity, T(cuMemGetAllocationGranularity), cuMemGetAllocationGranularity, 10020, 0) \
    X(cuMemExportToShareableHandle, cuMemExportToShareableHandle, T(cuMemExportToShareableHandle), cuMemExportToShareableHandle, 10020, 0) \
    X(cuMemImportFromShareableHandle, cuMemImportFromShareableHandle, T(cuMemImportFromShareableHandle), cuMemImportFromShareableHandle, 10020, 0) \
    X(cuArrayCreate_v2, cuArrayCreate_v2, T(cuArrayCreate_v2), cuArrayCreate, 3020, 0)              \
    X(cuArray3DCreate_v2, cuArray3DCreate_v2, T(cuArray3DCreate_v2), cuArray3DCreate, 3020, 0)      \
    X(cuArrayDestroy, cuArrayDestroy, T(cuArrayDestroy), cuArrayDestroy, 2000, 0)                   \
    X(cuMipmappedArrayCreate, cuMipmappedArrayCreate, T(cuMipmappedArrayCreate), cuMipmappedArrayCreate, 5000, 0) \
    X(cuMipmappedArrayDestroy, cuMipmappedArrayDestroy, T(cuMipmappedArrayDestroy), cuMipmappedArrayDestroy, 5000, 0) \
    X(cuIpcGetMemHandle, cuIpcGetMemHandle, T(cuIpcGetMemHandle), cuIpcGetMemHandle, 4010, 0)       \
    X(cuIpcOpenMemHandle_v2, cuIpcOpenMemHandle_v2, T(cuIpcOpenMemHandle_v2), cuIpcOpenMemHandle, 11000, 0) \
    X(cuIpcCloseMemHandle, cuIpcCloseMemHandle, T(cuIpcCloseMemHandle), cuIpcCloseMemHandle, 4010, 0) \
    X(cuImportExternalMemory, cuImportExternalMemory, T(cuImportExternalMemory), cuImportExternalMemory, 10000, 0) \
    X(cuDestroyExternalMemory, cuDestroyExternalMemory, T(cuDestroyExternalMemory), cuDestroyExternalMemory, 10000, 0) \
    X(cuGraphCreate, cuGraphCreate, T(cuGraphCreate), cuGraphCreate, 10000, 0)                      \
    X(cuGraphDestroy, cuGraphDestroy, T(cuGraphDestroy), cuGraphDestroy, 10000, 0)                  \
    X(cuGraphAddMemAllocNode, cuGraphAddMemAllocNode, T(cuGraphAddMemAllocNode), cuGraphAddMemAllocNode, 11040, 0) \
    X(cuGraphAddMemFreeNode, cuGraphAddMemFreeNode, T(cuGraphAddMemFreeNode), cuGraphAddMemFreeNode, 11040, 0) \
    X(cuMemcpyHtoD_v2, cuMemcpyHtoD_v2, T(cuMemcpyHtoD_v2), cuMemcpyHtoD, 3020, 0)                  \
    X(cuMemcpyDtoH_v2, cuMemcpyDtoH_v2, T(cuMemcpyDtoH_v2), cuMemcpyDtoH, 3020, 0)                  \
    X(cuMemsetD8_v2, cuMemsetD8_v2, T(cuMemsetD8_v2), cuMemsetD8, 3020, 0)

struct client_driver {
#define CLIENT_FIELD(field, sym, type, base, ver, flags) type field;
    CLIENT_DRIVER_API(CLIENT_FIELD)
#undef CLIENT_FIELD
    /* the fake's own counters, NULL when the driver is not the fake */
    size_t (*live_bytes)(void);
    unsigned long (*alloc_count)(void);
    unsigned long (*free_count)(void);
};

extern struct client_driver D;
extern const char *client_name;

/* Runs the scenario named by argv[1] with D filled in; returns the exit status. */
int client_run(int argc, char **argv);

#endif
