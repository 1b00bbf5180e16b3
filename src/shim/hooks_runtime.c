/* Wrappers of the runtime API of a shared libcudart, so an event names the call the
 * program made (cudaMalloc, not the cuMemAlloc_v2 it becomes). The driver calls the
 * runtime makes inside run nested and are not recorded again. */
#include "shim.h"
#include "hooks.h"
#include "cuda_api.h"
#include "common/apis.h"
#include "array_bytes.h"

#define TRACE_OR_PASS(fn, ...)                         \
    __typeof__(&fn) real = CULEAK_REAL(fn);            \
    if (!real)                                         \
        return cudaErrorInitializationError;           \
    if (!culeak_enter())                               \
        return real(__VA_ARGS__)

#define U(x) ((uint64_t)(uintptr_t)(x))

static cudaError_t after(struct culeak_ev *e, cudaError_t r)
{
    culeak_fill_ctx(e);
    e->result = (uint64_t)r;
    culeak_after(e);
    return r;
}

static void free_begin(struct culeak_ev *e)
{
    if (culeak_free_stacks)
        culeak_fill_ctx(e);
    culeak_free_begin(e);
}

static cudaError_t free_end(struct culeak_ev *e, cudaError_t r)
{
    e->result = (uint64_t)r;
    culeak_free_end(e);
    return r;
}

static uint64_t channel_bytes(const struct cudaChannelFormatDesc *d)
{
    if (!d)
        return 0;
    int bits = d->x + d->y + d->z + d->w;
    return bits > 0 ? (uint64_t)(bits + 7) / 8 : 1;
}

CULEAK_EXPORT cudaError_t cudaMalloc(void **p, size_t size)
{
    TRACE_OR_PASS(cudaMalloc, p, size);
    cudaError_t r = real(p, size);
    struct culeak_ev e = EV(CUDA_MALLOC);
    e.size = size;
    e.addr = p ? U(*p) : 0;
    return after(&e, r);
}

CULEAK_EXPORT cudaError_t cudaFree(void *p)
{
    TRACE_OR_PASS(cudaFree, p);
    if (!p) { /* cudaFree(0) initializes the context: no free, and no event */
        cudaError_t r = real(p);
        culeak_leave();
        return r;
    }
    struct culeak_ev e = EV(CUDA_FREE);
    e.addr = U(p);
    free_begin(&e);
    return free_end(&e, real(p));
}

CULEAK_EXPORT cudaError_t cudaMallocManaged(void **p, size_t size, unsigned int flags)
{
    TRACE_OR_PASS(cudaMallocManaged, p, size, flags);
    cudaError_t r = real(p, size, flags);
    struct culeak_ev e = EV(CUDA_MALLOC_MANAGED);
    e.size = size;
    e.addr = p ? U(*p) : 0;
    return after(&e, r);
}

CULEAK_EXPORT cudaError_t cudaMallocHost(void **p, size_t size)
{
    TRACE_OR_PASS(cudaMallocHost, p, size);
    cudaError_t r = real(p, size);
    struct culeak_ev e = EV(CUDA_MALLOC_HOST);
    e.size = size;
    e.addr = p ? U(*p) : 0;
    return after(&e, r);
}

CULEAK_EXPORT cudaError_t cudaHostAlloc(void **p, size_t size, unsigned int flags)
{
    TRACE_OR_PASS(cudaHostAlloc, p, size, flags);
    cudaError_t r = real(p, size, flags);
    struct culeak_ev e = EV(CUDA_HOST_ALLOC);
    e.size = size;
    e.addr = p ? U(*p) : 0;
    return after(&e, r);
}

CULEAK_EXPORT cudaError_t cudaFreeHost(void *p)
{
    TRACE_OR_PASS(cudaFreeHost, p);
    if (!p) {
        cudaError_t r = real(p);
        culeak_leave();
        return r;
    }
    struct culeak_ev e = EV(CUDA_FREE_HOST);
    e.addr = U(p);
    free_begin(&e);
    return free_end(&e, real(p));
}

CULEAK_EXPORT cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height)
{
    TRACE_OR_PASS(cudaMallocPitch, p, pitch, width, height);
    cudaError_t r = real(p, pitch, width, height);
    struct culeak_ev e = EV(CUDA_MALLOC_PITCH);
    e.size = (r == cudaSuccess && pitch ? *pitch : width) * height;
    e.addr = p ? U(*p) : 0;
    return after(&e, r);
}

CULEAK_EXPORT cudaError_t cudaMalloc3D(struct cudaPitchedPtr *pp, struct cudaExtent ext)
{
    TRACE_OR_PASS(cudaMalloc3D, pp, ext);
    cudaError_t r = real(pp, ext);
    struct culeak_ev e = EV(CUDA_MALLOC_3D);
    e.size = (r == cudaSuccess && pp ? pp->pitch : ext.width) * array_dim(ext.height) * array_dim(ext.depth);
    e.addr = pp ? U(pp->ptr) : 0;
    return after(&e, r);
}

CULEAK_EXPORT cudaError_t cudaMallocAsync(void **p, size_t size, cudaStream_t s)
{
    TRACE_OR_PASS(cudaMallocAsync, p, size, s);
    cudaError_t r = real(p, size, s);
    struct culeak_ev e = EV(CUDA_MALLOC_ASYNC);
    e.size = size;
    e.addr = p ? U(*p) : 0;
    e.aux = U(s);
    return after(&e, r);
}

CULEAK_EXPORT cudaError_t cudaMallocFromPoolAsync(void **p, size_t size, cudaMemPool_t pool, cudaStream_t s)
{
    TRACE_OR_PASS(cudaMallocFromPoolAsync, p, size, pool, s);
    cudaError_t r = real(p, size, pool, s);
    struct culeak_ev e = EV(CUDA_MALLOC_FROM_POOL_ASYNC);
    e.size = size;
    e.addr = p ? U(*p) : 0;
    e.aux = U(pool);
    return after(&e, r);
}

CULEAK_EXPORT cudaError_t cudaFreeAsync(void *p, cudaStream_t s)
{
    TRACE_OR_PASS(cudaFreeAsync, p, s);
    struct culeak_ev e = EV(CUDA_FREE_ASYNC);
    e.addr = U(p);
    e.aux = U(s);
    free_begin(&e);
    return free_end(&e, real(p, s));
}

CULEAK_EXPORT cudaError_t cudaHostRegister(void *p, size_t size, unsigned int flags)
{
    TRACE_OR_PASS(cudaHostRegister, p, size, flags);
    cudaError_t r = real(p, size, flags);
    struct culeak_ev e = EV(CUDA_HOST_REGISTER);
    e.size = size;
    e.addr = U(p);
    return after(&e, r);
}

CULEAK_EXPORT cudaError_t cudaHostUnregister(void *p)
{
    TRACE_OR_PASS(cudaHostUnregister, p);
    struct culeak_ev e = EV(CUDA_HOST_UNREGISTER);
    e.addr = U(p);
    free_begin(&e);
    return free_end(&e, real(p));
}

CULEAK_EXPORT cudaError_t cudaMallocArray(cudaArray_t *arr, const struct cudaChannelFormatDesc *d, size_t width,
                                          size_t height, unsigned int flags)
{
    TRACE_OR_PASS(cudaMallocArray, arr, d, width, height, flags);
    cudaError_t r = real(arr, d, width, height, flags);
    struct culeak_ev e = EV(CUDA_MALLOC_ARRAY);
    e.size = array_dim(width) * array_dim(height) * channel_bytes(d);
    e.addr = arr ? U(*arr) : 0;
    return after(&e, r);
}

CULEAK_EXPORT cudaError_t cudaMalloc3DArray(cudaArray_t *arr, const struct cudaChannelFormatDesc *d,
                                            struct cudaExtent ext, unsigned int flags)
{
    TRACE_OR_PASS(cudaMalloc3DArray, arr, d, ext, flags);
    cudaError_t r = real(arr, d, ext, flags);
    struct culeak_ev e = EV(CUDA_MALLOC_3D_ARRAY);
    e.size = array_dim(ext.width) * array_dim(ext.height) * array_dim(ext.depth) * channel_bytes(d);
    e.addr = arr ? U(*arr) : 0;
    return after(&e, r);
}

CULEAK_EXPORT cudaError_t cudaFreeArray(cudaArray_t arr)
{
    TRACE_OR_PASS(cudaFreeArray, arr);
    struct culeak_ev e = EV(CUDA_FREE_ARRAY);
    e.addr = U(arr);
    free_begin(&e);
    return free_end(&e, real(arr));
}

CULEAK_EXPORT cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *arr, const struct cudaChannelFormatDesc *d,
                                                   struct cudaExtent ext, unsigned int levels, unsigned int flags)
{
    TRACE_OR_PASS(cudaMallocMipmappedArray, arr, d, ext, levels, flags);
    cudaError_t r = real(arr, d, ext, levels, flags);
    struct culeak_ev e = EV(CUDA_MALLOC_MIPMAPPED_ARRAY);
    e.size = array_bytes(ext.width, ext.height, ext.depth, channel_bytes(d), levels);
    e.addr = arr ? U(*arr) : 0;
    return after(&e, r);
}

CULEAK_EXPORT cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t arr)
{
    TRACE_OR_PASS(cudaFreeMipmappedArray, arr);
    struct culeak_ev e = EV(CUDA_FREE_MIPMAPPED_ARRAY);
    e.addr = U(arr);
    free_begin(&e);
    return free_end(&e, real(arr));
}

/* Every allocation of the current device ends (ctx 0: whatever context held it). */
CULEAK_EXPORT cudaError_t cudaDeviceReset(void)
{
    culeak_ctx_forget();
    TRACE_OR_PASS(cudaDeviceReset);
    struct culeak_ev e = EV(CUDA_DEVICE_RESET);
    culeak_fill_ctx(&e);
    e.ctx = 0;
    e.result = (uint64_t)real();
    culeak_ctx_forget();
    culeak_after(&e);
    return (cudaError_t)e.result;
}
