/* Wrappers of the driver entry points that allocate or free (hooks.h lists them).
 * Each is exported under the driver's versioned name with the driver's ABI; it calls
 * the real function and records one event unless it runs inside another traced call. */
#include "shim.h"
#include "hooks.h"
#include "cuda_api.h"
#include "common/apis.h"
#include "array_bytes.h"

#define TRACE_OR_PASS(fn, ...)                         \
    __typeof__(&fn) real = CULEAK_REAL(fn);            \
    if (!real)                                         \
        return CUDA_ERROR_NOT_INITIALIZED;             \
    if (!culeak_enter())                               \
        return real(__VA_ARGS__)

#define U(x) ((uint64_t)(uintptr_t)(x))

static CUresult after(struct culeak_ev *e, CUresult r)
{
    e->result = (uint64_t)r;
    culeak_after(e);
    return r;
}

static CUresult after_ctx(struct culeak_ev *e, CUresult r)
{
    culeak_fill_ctx(e);
    return after(e, r);
}

static CUresult free_end(struct culeak_ev *e, CUresult r)
{
    e->result = (uint64_t)r;
    culeak_free_end(e);
    return r;
}

/* Starts recording a free: context first (it may be gone after the call), when frees
 * carry it (CULEAK_FREE_STACKS=1). */
static void free_begin(struct culeak_ev *e)
{
    if (culeak_free_stacks)
        culeak_fill_ctx(e);
    culeak_free_begin(e);
}

static uint64_t range_size(CUdeviceptr p)
{
    __typeof__(&cuMemGetAddressRange_v2) get = CULEAK_REAL(cuMemGetAddressRange_v2);
    CUdeviceptr base;
    size_t size = 0;
    if (!p || !get || get(&base, &size, p) != CUDA_SUCCESS)
        return 0;
    return size;
}

/* ---- device, managed, pinned and registered host memory ---- */

CULEAK_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    TRACE_OR_PASS(cuMemAlloc_v2, dptr, bytesize);
    CUresult r = real(dptr, bytesize);
    struct culeak_ev e = EV(CU_MEM_ALLOC);
    e.size = bytesize;
    e.addr = dptr ? *dptr : 0;
    return after_ctx(&e, r);
}

CULEAK_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
                                          unsigned int elem)
{
    TRACE_OR_PASS(cuMemAllocPitch_v2, dptr, pitch, width, height, elem);
    CUresult r = real(dptr, pitch, width, height, elem);
    struct culeak_ev e = EV(CU_MEM_ALLOC_PITCH);
    e.size = (r == CUDA_SUCCESS && pitch ? *pitch : width) * height;
    e.addr = dptr ? *dptr : 0;
    return after_ctx(&e, r);
}

CULEAK_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    /* cuMemFree(0) frees nothing (cudaFree(0) makes it to initialize a context). */
    if (!dptr) {
        __typeof__(&cuMemFree_v2) real = CULEAK_REAL(cuMemFree_v2);
        return real ? real(dptr) : CUDA_ERROR_NOT_INITIALIZED;
    }
    TRACE_OR_PASS(cuMemFree_v2, dptr);
    struct culeak_ev e = EV(CU_MEM_FREE);
    e.addr = dptr;
    free_begin(&e);
    return free_end(&e, real(dptr));
}

CULEAK_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    TRACE_OR_PASS(cuMemAllocManaged, dptr, bytesize, flags);
    CUresult r = real(dptr, bytesize, flags);
    struct culeak_ev e = EV(CU_MEM_ALLOC_MANAGED);
    e.size = bytesize;
    e.addr = dptr ? *dptr : 0;
    return after_ctx(&e, r);
}

CULEAK_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    TRACE_OR_PASS(cuMemAllocHost_v2, pp, bytesize);
    CUresult r = real(pp, bytesize);
    struct culeak_ev e = EV(CU_MEM_ALLOC_HOST);
    e.size = bytesize;
    e.addr = pp ? U(*pp) : 0;
    return after_ctx(&e, r);
}

CULEAK_EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
    TRACE_OR_PASS(cuMemHostAlloc, pp, bytesize, flags);
    CUresult r = real(pp, bytesize, flags);
    struct culeak_ev e = EV(CU_MEM_HOST_ALLOC);
    e.size = bytesize;
    e.addr = pp ? U(*pp) : 0;
    return after_ctx(&e, r);
}

CULEAK_EXPORT CUresult cuMemFreeHost(void *p)
{
    TRACE_OR_PASS(cuMemFreeHost, p);
    struct culeak_ev e = EV(CU_MEM_FREE_HOST);
    e.addr = U(p);
    free_begin(&e);
    return free_end(&e, real(p));
}

CULEAK_EXPORT CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int flags)
{
    TRACE_OR_PASS(cuMemHostRegister_v2, p, bytesize, flags);
    CUresult r = real(p, bytesize, flags);
    struct culeak_ev e = EV(CU_MEM_HOST_REGISTER);
    e.size = bytesize;
    e.addr = U(p);
    return after_ctx(&e, r);
}

CULEAK_EXPORT CUresult cuMemHostUnregister(void *p)
{
    TRACE_OR_PASS(cuMemHostUnregister, p);
    struct culeak_ev e = EV(CU_MEM_HOST_UNREGISTER);
    e.addr = U(p);
    free_begin(&e);
    return free_end(&e, real(p));
}

/* ---- stream-ordered allocation and pools ---- */

#define ALLOC_ASYNC(fn, api)                                                  \
    CULEAK_EXPORT CUresult fn(CUdeviceptr *dptr, size_t bytesize, CUstream s) \
    {                                                                         \
        TRACE_OR_PASS(fn, dptr, bytesize, s);                                 \
        CUresult r = real(dptr, bytesize, s);                                 \
        struct culeak_ev e = EV(api);                          \
        e.size = bytesize;                                                    \
        e.addr = dptr ? *dptr : 0;                                            \
        e.aux = U(s);                                                         \
        return after_ctx(&e, r);                                              \
    }
ALLOC_ASYNC(cuMemAllocAsync, CU_MEM_ALLOC_ASYNC)
ALLOC_ASYNC(cuMemAllocAsync_ptsz, CU_MEM_ALLOC_ASYNC_PTSZ)

#define ALLOC_FROM_POOL(fn, api)                                                                \
    CULEAK_EXPORT CUresult fn(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream s) \
    {                                                                                           \
        TRACE_OR_PASS(fn, dptr, bytesize, pool, s);                                             \
        CUresult r = real(dptr, bytesize, pool, s);                                             \
        struct culeak_ev e = EV(api);                                            \
        e.size = bytesize;                                                                      \
        e.addr = dptr ? *dptr : 0;                                                              \
        e.aux = U(pool);                                                                        \
        return after_ctx(&e, r);                                                                \
    }
ALLOC_FROM_POOL(cuMemAllocFromPoolAsync, CU_MEM_ALLOC_FROM_POOL_ASYNC)
ALLOC_FROM_POOL(cuMemAllocFromPoolAsync_ptsz, CU_MEM_ALLOC_FROM_POOL_ASYNC_PTSZ)

#define FREE_ASYNC(fn, api)                                    \
    CULEAK_EXPORT CUresult fn(CUdeviceptr dptr, CUstream s)    \
    {                                                          \
        TRACE_OR_PASS(fn, dptr, s);                            \
        struct culeak_ev e = EV(api);            \
        e.addr = dptr;                                         \
        e.aux = U(s);                                          \
        free_begin(&e);                                        \
        return free_end(&e, real(dptr, s));                    \
    }
FREE_ASYNC(cuMemFreeAsync, CU_MEM_FREE_ASYNC)
FREE_ASYNC(cuMemFreeAsync_ptsz, CU_MEM_FREE_ASYNC_PTSZ)

static int location_device(const CUmemLocation *loc)
{
    return loc->type == CU_MEM_LOCATION_TYPE_DEVICE ? loc->id : -1;
}

CULEAK_EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
    TRACE_OR_PASS(cuMemPoolCreate, pool, props);
    CUresult r = real(pool, props);
    struct culeak_ev e = EV(CU_MEM_POOL_CREATE);
    e.addr = pool ? U(*pool) : 0;
    culeak_fill_ctx(&e);
    if (props && location_device(&props->location) >= 0)
        e.device = location_device(&props->location);
    return after(&e, r);
}

CULEAK_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    TRACE_OR_PASS(cuMemPoolDestroy, pool);
    struct culeak_ev e = EV(CU_MEM_POOL_DESTROY);
    e.addr = U(pool);
    free_begin(&e);
    return free_end(&e, real(pool));
}

CULEAK_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
    TRACE_OR_PASS(cuMemPoolTrimTo, pool, keep);
    CUresult r = real(pool, keep);
    struct culeak_ev e = EV(CU_MEM_POOL_TRIM_TO);
    e.addr = U(pool);
    e.size = keep;
    return after_ctx(&e, r);
}

CULEAK_EXPORT CUresult cuMemPoolImportPointer(CUdeviceptr *ptr, CUmemoryPool pool, CUmemPoolPtrExportData *data)
{
    TRACE_OR_PASS(cuMemPoolImportPointer, ptr, pool, data);
    CUresult r = real(ptr, pool, data);
    struct culeak_ev e = EV(CU_MEM_POOL_IMPORT_POINTER);
    e.addr = ptr ? *ptr : 0;
    e.size = r == CUDA_SUCCESS ? range_size(e.addr) : 0;
    e.aux = U(pool);
    return after_ctx(&e, r);
}

/* ---- virtual memory management ---- */

CULEAK_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *prop,
                                   unsigned long long flags)
{
    TRACE_OR_PASS(cuMemCreate, h, size, prop, flags);
    CUresult r = real(h, size, prop, flags);
    struct culeak_ev e = EV(CU_MEM_CREATE);
    e.size = size;
    e.addr = h ? *h : 0;
    culeak_fill_ctx(&e);
    if (prop && location_device(&prop->location) >= 0)
        e.device = location_device(&prop->location);
    return after(&e, r);
}

CULEAK_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle h)
{
    TRACE_OR_PASS(cuMemRelease, h);
    struct culeak_ev e = EV(CU_MEM_RELEASE);
    e.addr = h;
    free_begin(&e);
    return free_end(&e, real(h));
}

CULEAK_EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *h, void *addr)
{
    TRACE_OR_PASS(cuMemRetainAllocationHandle, h, addr);
    CUresult r = real(h, addr);
    struct culeak_ev e = EV(CU_MEM_RETAIN_ALLOCATION_HANDLE);
    e.addr = r == CUDA_SUCCESS && h ? *h : 0;
    e.aux = U(addr);
    return after_ctx(&e, r);
}

CULEAK_EXPORT CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *h, void *os_handle,
                                                      CUmemAllocationHandleType type)
{
    TRACE_OR_PASS(cuMemImportFromShareableHandle, h, os_handle, type);
    CUresult r = real(h, os_handle, type);
    struct culeak_ev e = EV(CU_MEM_IMPORT_FROM_SHAREABLE_HANDLE);
    e.addr = h ? *h : 0;
    return after_ctx(&e, r);
}

CULEAK_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle h,
                                unsigned long long flags)
{
    TRACE_OR_PASS(cuMemMap, ptr, size, offset, h, flags);
    CUresult r = real(ptr, size, offset, h, flags);
    struct culeak_ev e = EV(CU_MEM_MAP);
    e.size = size;
    e.addr = ptr;
    e.aux = h;
    return after_ctx(&e, r);
}

CULEAK_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    TRACE_OR_PASS(cuMemUnmap, ptr, size);
    struct culeak_ev e = EV(CU_MEM_UNMAP);
    e.addr = ptr;
    e.size = size;
    free_begin(&e);
    return free_end(&e, real(ptr, size));
}

CULEAK_EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                           unsigned long long flags)
{
    TRACE_OR_PASS(cuMemAddressReserve, ptr, size, alignment, addr, flags);
    CUresult r = real(ptr, size, alignment, addr, flags);
    struct culeak_ev e = EV(CU_MEM_ADDRESS_RESERVE);
    e.size = size;
    e.addr = ptr ? *ptr : 0;
    return after_ctx(&e, r);
}

CULEAK_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    TRACE_OR_PASS(cuMemAddressFree, ptr, size);
    struct culeak_ev e = EV(CU_MEM_ADDRESS_FREE);
    e.addr = ptr;
    e.size = size;
    free_begin(&e);
    return free_end(&e, real(ptr, size));
}

/* ---- arrays: the size is what the descriptor asks for ---- */

static uint64_t format_bytes(CUarray_format f)
{
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF:
    case CU_AD_FORMAT_UNORM_INT16X1: case CU_AD_FORMAT_SNORM_INT16X1: case CU_AD_FORMAT_UNORM_INT8X2:
    case CU_AD_FORMAT_SNORM_INT8X2:
        return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT:
    case CU_AD_FORMAT_UNORM_INT16X2: case CU_AD_FORMAT_SNORM_INT16X2: case CU_AD_FORMAT_UNORM_INT8X4:
    case CU_AD_FORMAT_SNORM_INT8X4: case CU_AD_FORMAT_UNORM_INT_101010_2:
        return 4;
    case CU_AD_FORMAT_UNORM_INT16X4: case CU_AD_FORMAT_SNORM_INT16X4:
        return 8;
    default: /* 8-bit formats; packed and block formats are approximated per byte */
        return 1;
    }
}

/* Channels multiply only for the plain formats; the packed ones carry theirs. */
static uint64_t element_bytes(CUarray_format f, unsigned channels)
{
    uint64_t b = format_bytes(f);
    return f <= CU_AD_FORMAT_FLOAT ? b * (channels ? channels : 1) : b;
}

static uint64_t array3d_bytes(const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels)
{
    return d ? array_bytes(d->Width, d->Height, d->Depth, element_bytes(d->Format, d->NumChannels), levels) : 0;
}

CULEAK_EXPORT CUresult cuArrayCreate_v2(CUarray *arr, const CUDA_ARRAY_DESCRIPTOR *d)
{
    TRACE_OR_PASS(cuArrayCreate_v2, arr, d);
    CUresult r = real(arr, d);
    struct culeak_ev e = EV(CU_ARRAY_CREATE);
    e.size = d ? array_dim(d->Width) * array_dim(d->Height) * element_bytes(d->Format, d->NumChannels) : 0;
    e.addr = arr ? U(*arr) : 0;
    return after_ctx(&e, r);
}

CULEAK_EXPORT CUresult cuArray3DCreate_v2(CUarray *arr, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    TRACE_OR_PASS(cuArray3DCreate_v2, arr, d);
    CUresult r = real(arr, d);
    struct culeak_ev e = EV(CU_ARRAY_3D_CREATE);
    e.size = array3d_bytes(d, 1);
    e.addr = arr ? U(*arr) : 0;
    return after_ctx(&e, r);
}

CULEAK_EXPORT CUresult cuArrayDestroy(CUarray arr)
{
    TRACE_OR_PASS(cuArrayDestroy, arr);
    struct culeak_ev e = EV(CU_ARRAY_DESTROY);
    e.addr = U(arr);
    free_begin(&e);
    return free_end(&e, real(arr));
}

CULEAK_EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray *arr, const CUDA_ARRAY3D_DESCRIPTOR *d,
                                              unsigned int levels)
{
    TRACE_OR_PASS(cuMipmappedArrayCreate, arr, d, levels);
    CUresult r = real(arr, d, levels);
    struct culeak_ev e = EV(CU_MIPMAPPED_ARRAY_CREATE);
    e.size = array3d_bytes(d, levels);
    e.addr = arr ? U(*arr) : 0;
    return after_ctx(&e, r);
}

CULEAK_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray arr)
{
    TRACE_OR_PASS(cuMipmappedArrayDestroy, arr);
    struct culeak_ev e = EV(CU_MIPMAPPED_ARRAY_DESTROY);
    e.addr = U(arr);
    free_begin(&e);
    return free_end(&e, real(arr));
}

/* ---- memory imported from another process or API ---- */

CULEAK_EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *dptr, CUipcMemHandle h, unsigned int flags)
{
    TRACE_OR_PASS(cuIpcOpenMemHandle_v2, dptr, h, flags);
    CUresult r = real(dptr, h, flags);
    struct culeak_ev e = EV(CU_IPC_OPEN_MEM_HANDLE);
    e.addr = dptr ? *dptr : 0;
    e.size = r == CUDA_SUCCESS ? range_size(e.addr) : 0;
    return after_ctx(&e, r);
}

CULEAK_EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{
    TRACE_OR_PASS(cuIpcCloseMemHandle, dptr);
    struct culeak_ev e = EV(CU_IPC_CLOSE_MEM_HANDLE);
    e.addr = dptr;
    free_begin(&e);
    return free_end(&e, real(dptr));
}

CULEAK_EXPORT CUresult cuImportExternalMemory(CUexternalMemory *mem, const CUDA_EXTERNAL_MEMORY_HANDLE_DESC *d)
{
    TRACE_OR_PASS(cuImportExternalMemory, mem, d);
    CUresult r = real(mem, d);
    struct culeak_ev e = EV(CU_IMPORT_EXTERNAL_MEMORY);
    e.size = d ? d->size : 0;
    e.addr = mem ? U(*mem) : 0;
    return after_ctx(&e, r);
}

CULEAK_EXPORT CUresult cuDestroyExternalMemory(CUexternalMemory mem)
{
    TRACE_OR_PASS(cuDestroyExternalMemory, mem);
    struct culeak_ev e = EV(CU_DESTROY_EXTERNAL_MEMORY);
    e.addr = U(mem);
    free_begin(&e);
    return free_end(&e, real(mem));
}

/* ---- graph memory nodes: aux is the node ---- */

CULEAK_EXPORT CUresult cuGraphAddMemAllocNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                                              CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
    TRACE_OR_PASS(cuGraphAddMemAllocNode, node, g, deps, ndeps, p);
    CUresult r = real(node, g, deps, ndeps, p);
    struct culeak_ev e = EV(CU_GRAPH_ADD_MEM_ALLOC_NODE);
    e.size = p ? p->bytesize : 0;
    e.addr = p ? p->dptr : 0;
    e.aux = r == CUDA_SUCCESS && node ? U(*node) : 0;
    culeak_fill_ctx(&e);
    if (p && location_device(&p->poolProps.location) >= 0)
        e.device = location_device(&p->poolProps.location);
    return after(&e, r);
}

CULEAK_EXPORT CUresult cuGraphAddMemFreeNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                                             CUdeviceptr dptr)
{
    TRACE_OR_PASS(cuGraphAddMemFreeNode, node, g, deps, ndeps, dptr);
    CUresult r = real(node, g, deps, ndeps, dptr);
    struct culeak_ev e = EV(CU_GRAPH_ADD_MEM_FREE_NODE);
    e.addr = dptr;
    e.aux = r == CUDA_SUCCESS && node ? U(*node) : 0;
    return culeak_free_stacks ? after_ctx(&e, r) : after(&e, r);
}

/* ---- contexts: creation, and the calls that free everything of a context ---- */

static CUresult ctx_created(CUcontext *pctx, CUdevice dev, CUresult r)
{
    struct culeak_ev e = EV(CU_CTX_CREATE);
    e.device = dev;
    e.addr = e.ctx = r == CUDA_SUCCESS && pctx ? U(*pctx) : 0;
    return after(&e, r);
}

CULEAK_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    TRACE_OR_PASS(cuCtxCreate_v2, pctx, flags, dev);
    return ctx_created(pctx, dev, real(pctx, flags, dev));
}

CULEAK_EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *params, int nparams,
                                      unsigned int flags, CUdevice dev)
{
    TRACE_OR_PASS(cuCtxCreate_v3, pctx, params, nparams, flags, dev);
    return ctx_created(pctx, dev, real(pctx, params, nparams, flags, dev));
}

CULEAK_EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags, CUdevice dev)
{
    TRACE_OR_PASS(cuCtxCreate_v4, pctx, params, flags, dev);
    return ctx_created(pctx, dev, real(pctx, params, flags, dev));
}

CULEAK_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    culeak_ctx_forget();
    TRACE_OR_PASS(cuCtxDestroy_v2, ctx);
    struct culeak_ev e = EV(CU_CTX_DESTROY);
    __typeof__(&cuCtxGetDevice_v2) get_dev = CULEAK_REAL(cuCtxGetDevice_v2);
    CUdevice dev;
    if (get_dev && get_dev(&dev, ctx) == CUDA_SUCCESS) {
        e.device = dev;
    } else { /* without cuCtxGetDevice_v2: known when ctx is the current context */
        culeak_fill_ctx(&e);
        if (e.ctx != U(ctx))
            e.device = -1;
    }
    e.ctx = U(ctx);
    CUresult r = real(ctx);
    culeak_ctx_forget();
    return after(&e, r);
}

CULEAK_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    culeak_ctx_forget();
    TRACE_OR_PASS(cuDevicePrimaryCtxReset_v2, dev);
    struct culeak_ev e = EV(CU_DEVICE_PRIMARY_CTX_RESET);
    e.device = dev;
    CUresult r = real(dev);
    culeak_ctx_forget();
    return after(&e, r);
}

/* Releasing the last reference destroys the primary context: only then is it a free-all. */
CULEAK_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    culeak_ctx_forget();
    TRACE_OR_PASS(cuDevicePrimaryCtxRelease_v2, dev);
    CUresult r = real(dev);
    culeak_ctx_forget();
    __typeof__(&cuDevicePrimaryCtxGetState) state = CULEAK_REAL(cuDevicePrimaryCtxGetState);
    unsigned int flags;
    int is_active = 1;
    if (r == CUDA_SUCCESS && state && state(dev, &flags, &is_active) == CUDA_SUCCESS && !is_active) {
        struct culeak_ev e = EV(CU_DEVICE_PRIMARY_CTX_RELEASE);
        e.device = dev;
        return after(&e, r);
    }
    culeak_leave();
    return r;
}
