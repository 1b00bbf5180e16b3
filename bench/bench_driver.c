/* A driver stand-in for make bench: the few entry points shim_bench reaches, each doing
 * as little as a driver can (a per-thread list of 256-byte blocks, a per-thread
 * context), so that what a traced run adds is the tracer's own work and not the
 * test double's malloc traffic meeting the tracer's memory. Loaded like libcuda.so.1:
 * dlopen, cuGetProcAddress_v2. Not a test double: tests use tests/fakecuda. */
#include "cuda/culeak_cuda.h"

#include <stdint.h>
#include <string.h>

#define BLOCKS 65536 /* aggregate_bench keeps 10,000 live and makes 5,000 more at a time */

static _Thread_local uintptr_t free_list[BLOCKS];
static _Thread_local int nfree = -1;
static _Thread_local CUcontext current;
static struct CUctx_st *const the_ctx = (struct CUctx_st *)(uintptr_t)0x1000;

CUresult cuInit(unsigned int flags)
{
    (void)flags;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
    *dev = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    (void)dev;
    *pctx = the_ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
    current = ctx;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    *pctx = current;
    return CUDA_SUCCESS;
}

CUresult cuCtxGetDevice(CUdevice *dev)
{
    if (!current)
        return CUDA_ERROR_INVALID_CONTEXT;
    *dev = 0;
    return CUDA_SUCCESS;
}

/* Device addresses: numbers in a range no host memory uses, never dereferenced. */
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size)
{
    if (!current || size > 256)
        return CUDA_ERROR_INVALID_VALUE;
    if (nfree < 0) {
        for (int i = 0; i < BLOCKS; i++)
            free_list[i] = (uintptr_t)0x700000000000u + (uintptr_t)(BLOCKS - 1 - i) * 256;
        nfree = BLOCKS;
    }
    if (nfree == 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *dptr = free_list[--nfree];
    return CUDA_SUCCESS;
}

CUresult cuMemFree_v2(CUdeviceptr p)
{
    if (nfree < 0 || nfree == BLOCKS)
        return CUDA_ERROR_INVALID_VALUE;
    free_list[nfree++] = (uintptr_t)p;
    return CUDA_SUCCESS;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status)
{
    (void)version;
    (void)flags;
    static const struct { const char *name; void *fn; } table[] = {
        {"cuGetProcAddress", (void *)cuGetProcAddress_v2}, {"cuInit", (void *)cuInit},
        {"cuDeviceGet", (void *)cuDeviceGet}, {"cuDevicePrimaryCtxRetain", (void *)cuDevicePrimaryCtxRetain},
        {"cuCtxSetCurrent", (void *)cuCtxSetCurrent}, {"cuCtxGetCurrent", (void *)cuCtxGetCurrent},
        {"cuCtxGetDevice", (void *)cuCtxGetDevice}, {"cuMemAlloc", (void *)cuMemAlloc_v2},
        {"cuMemFree", (void *)cuMemFree_v2},
    };
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        if (strcmp(symbol, table[i].name) == 0) {
            *pfn = table[i].fn;
            if (status)
                *status = CU_GET_PROC_ADDRESS_SUCCESS;
            return CUDA_SUCCESS;
        }
    *pfn = NULL;
    if (status)
        *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
}
