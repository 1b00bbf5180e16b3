/* Stream-ordered allocation and memory pools. Streams are synchronous in the fake, so an
 * asynchronous free completes at once; each device has an implicit default pool. */
#include "fake.h"

#include <stdlib.h>
#include <string.h>

struct CUmemPoolHandle_st {
    int device;
};

/* The context an async operation on stream s runs in. */
static CUcontext stream_ctx(CUstream s)
{
    (void)s; /* the fake's streams belong to the context current at creation; use the current one */
    return fake_current();
}

static CUresult alloc_async(CUdeviceptr *dptr, size_t size, CUmemoryPool pool, CUstream s, const char *api)
{
    FAKE_NEED_INIT();
    CUcontext c = stream_ctx(s);
    if (!c || !c->alive)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!dptr || !size)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult err = CUDA_SUCCESS;
    pthread_mutex_lock(&fake_lock);
    if (pool && !fake_find((uintptr_t)pool, FK_POOL))
        err = CUDA_ERROR_INVALID_VALUE;
    struct fake_block *b = NULL;
    if (!err)
        b = fake_alloc_block(FK_DEVICE, pool ? pool->device : c->device, c, size, 256, &err);
    if (b) {
        *dptr = b->addr;
        fake_log("alloc", api, b->addr, size);
    }
    pthread_mutex_unlock(&fake_lock);
    return err;
}

static CUresult free_async(CUdeviceptr dptr, CUstream s, const char *api)
{
    FAKE_NEED_INIT();
    if (!dptr)
        return CUDA_SUCCESS;
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = fake_find(dptr, FK_DEVICE);
    if (!b)
        b = fake_find(dptr, FK_POOL_IMPORT);
    if (b) {
        fake_log("free", api, dptr, b->size);
        fake_release(b);
    }
    pthread_mutex_unlock(&fake_lock);
    return b ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemAllocAsync(CUdeviceptr *d, size_t n, CUstream s) { return alloc_async(d, n, NULL, s, "cuMemAllocAsync"); }
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *d, size_t n, CUstream s) { return alloc_async(d, n, NULL, s, "cuMemAllocAsync_ptsz"); }

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *d, size_t n, CUmemoryPool p, CUstream s)
{
    return p ? alloc_async(d, n, p, s, "cuMemAllocFromPoolAsync") : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *d, size_t n, CUmemoryPool p, CUstream s)
{
    return p ? alloc_async(d, n, p, s, "cuMemAllocFromPoolAsync_ptsz") : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemFreeAsync(CUdeviceptr d, CUstream s) { return free_async(d, s, "cuMemFreeAsync"); }
CUresult cuMemFreeAsync_ptsz(CUdeviceptr d, CUstream s) { return free_async(d, s, "cuMemFreeAsync_ptsz"); }

CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
    FAKE_NEED_INIT();
    if (!pool || !poolProps || poolProps->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
        poolProps->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fake_valid_device(poolProps->location.id))
        return CUDA_ERROR_INVALID_DEVICE;
    struct CUmemPoolHandle_st *p = malloc(sizeof *p);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    p->device = poolProps->location.id;
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = fake_track(FK_POOL, p->device, NULL, (uintptr_t)p, 0, p);
    if (b) {
        b->accessible = 0;
        fake_log("alloc", "cuMemPoolCreate", b->addr, 0);
    }
    pthread_mutex_unlock(&fake_lock);
    if (!b) {
        free(p);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *pool = p;
    return CUDA_SUCCESS;
}

CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    FAKE_NEED_INIT();
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = fake_find((uintptr_t)pool, FK_POOL);
    if (b) {
        fake_log("free", "cuMemPoolDestroy", b->addr, 0);
        fake_release(b);
    }
    pthread_mutex_unlock(&fake_lock);
    return b ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
    FAKE_NEED_INIT();
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = fake_find((uintptr_t)pool, FK_POOL);
    pthread_mutex_unlock(&fake_lock);
    return b ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; /* nothing cached to trim */
}

/* Export data carries the exporter's address and size. */
struct pool_export {
    uint64_t magic, addr, size;
};
#define POOL_EXPORT_MAGIC 0x66616b65706f6f6cull

CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData *shareData_out, CUdeviceptr ptr)
{
    FAKE_NEED_INIT();
    if (!shareData_out)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = fake_find(ptr, FK_DEVICE);
    struct pool_export e = {POOL_EXPORT_MAGIC, ptr, b ? b->size : 0};
    pthread_mutex_unlock(&fake_lock);
    if (!b)
        return CUDA_ERROR_INVALID_VALUE;
    memset(shareData_out, 0, sizeof *shareData_out);
    memcpy(shareData_out->reserved, &e, sizeof e);
    return CUDA_SUCCESS;
}

/* Imports map the exporter's memory; the fake hands out a copy at a new address. */
CUresult cuMemPoolImportPointer(CUdeviceptr *ptr_out, CUmemoryPool pool, CUmemPoolPtrExportData *shareData)
{
    FAKE_NEED_INIT();
    struct pool_export e;
    if (!ptr_out || !shareData)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(&e, shareData->reserved, sizeof e);
    if (e.magic != POOL_EXPORT_MAGIC || !e.size)
        return CUDA_ERROR_INVALID_VALUE;
    CUcontext c = fake_current();
    void *mem = malloc(e.size);
    if (!mem)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&fake_lock);
    struct fake_block *src = fake_find(e.addr, FK_DEVICE);
    if (src)
        memcpy(mem, (void *)src->addr, e.size);
    struct fake_block *b =
        fake_find((uintptr_t)pool, FK_POOL) ? fake_track(FK_POOL_IMPORT, pool->device, c, (uintptr_t)mem, e.size, mem) : NULL;
    if (b)
        fake_log("alloc", "cuMemPoolImportPointer", b->addr, e.size);
    pthread_mutex_unlock(&fake_lock);
    if (!b) {
        free(mem);
        return CUDA_ERROR_INVALID_VALUE;
    }
    *ptr_out = (CUdeviceptr)mem;
    return CUDA_SUCCESS;
}
