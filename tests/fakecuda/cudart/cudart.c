/* A fake shared cudart (libcudart.so.13) shaped like the real one: it never links
 * libcuda; at the first call it dlopens libcuda.so.1, makes ONE dlsym for
 * cuGetProcAddress_v2, asks that for "cuGetProcAddress" itself, resolves its driver
 * table eagerly (symbolStatus NULL) and calls the driver through it. Each thread gets
 * the primary context of the current device, as with the real runtime. */
#include "cuda/culeak_cuda.h"
#include "cuda/culeak_cudart.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

typedef CUresult (*gpa_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

/* X(field, type, base name, version, flags) */
#define RT_DRIVER(X)                                                                          \
    X(init, CUresult (*)(unsigned), cuInit, 2000, 0)                                          \
    X(device_get_count, CUresult (*)(int *), cuDeviceGetCount, 2000, 0)                       \
    X(primary_retain, CUresult (*)(CUcontext *, CUdevice), cuDevicePrimaryCtxRetain, 7000, 0) \
    X(primary_release, CUresult (*)(CUdevice), cuDevicePrimaryCtxRelease, 11000, 0)               \
    X(ctx_set_current, CUresult (*)(CUcontext), cuCtxSetCurrent, 4000, 0)                     \
    X(ctx_get_current, CUresult (*)(CUcontext *), cuCtxGetCurrent, 4000, 0)                   \
    X(ctx_synchronize, CUresult (*)(void), cuCtxSynchronize, 2000, 0)                         \
    X(mem_alloc, CUresult (*)(CUdeviceptr *, size_t), cuMemAlloc, 3020, 0)                    \
    X(mem_free, CUresult (*)(CUdeviceptr), cuMemFree, 3020, 0)                                \
    X(mem_alloc_managed, CUresult (*)(CUdeviceptr *, size_t, unsigned), cuMemAllocManaged, 6000, 0) \
    X(mem_host_alloc, CUresult (*)(void **, size_t, unsigned), cuMemHostAlloc, 2020, 0)       \
    X(mem_free_host, CUresult (*)(void *), cuMemFreeHost, 2000, 0)                            \
    X(mem_alloc_async, CUresult (*)(CUdeviceptr *, size_t, CUstream), cuMemAllocAsync, 11020, 0) \
    X(mem_free_async, CUresult (*)(CUdeviceptr, CUstream), cuMemFreeAsync, 11020, 0)          \
    X(stream_create, CUresult (*)(CUstream *, unsigned), cuStreamCreate, 2000, 0)             \
    X(stream_destroy, CUresult (*)(CUstream), cuStreamDestroy, 4000, 0)                       \
    X(mipmap_create, CUresult (*)(CUmipmappedArray *, const CUDA_ARRAY3D_DESCRIPTOR *, unsigned), \
      cuMipmappedArrayCreate, 5000, 0)                                                        \
    X(mipmap_destroy, CUresult (*)(CUmipmappedArray), cuMipmappedArrayDestroy, 5000, 0)

static struct {
#define RT_FIELD(field, type, base, ver, flags) __typeof__(type) field;
    RT_DRIVER(RT_FIELD)
#undef RT_FIELD
} drv;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static cudaError_t init_error = cudaErrorInitializationError;
static CUcontext primary;
static int primary_held;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread cudaError_t last_error;

static cudaError_t to_rt(CUresult r)
{
    switch (r) {
    case CUDA_SUCCESS: return cudaSuccess;
    case CUDA_ERROR_INVALID_VALUE: return cudaErrorInvalidValue;
    case CUDA_ERROR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
    case CUDA_ERROR_NOT_INITIALIZED: return cudaErrorInitializationError;
    case CUDA_ERROR_DEINITIALIZED: return cudaErrorCudartUnloading;
    case CUDA_ERROR_NO_DEVICE: return cudaErrorNoDevice;
    case CUDA_ERROR_INVALID_DEVICE: return cudaErrorInvalidDevice;
    case CUDA_ERROR_INVALID_CONTEXT: return cudaErrorDeviceUninitialized;
    default: return cudaErrorUnknown;
    }
}

static void load(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    gpa_t boot = h ? (gpa_t)dlsym(h, "cuGetProcAddress_v2") : NULL;
    gpa_t gpa = NULL;
    if (!boot || boot("cuGetProcAddress", (void **)&gpa, 12000, 0, NULL) != CUDA_SUCCESS || !gpa)
        return;
#define RT_RESOLVE(field, type, base, ver, flags)                                             \
    if (gpa(#base, (void **)&drv.field, ver, flags, NULL) != CUDA_SUCCESS)                   \
        return;
    RT_DRIVER(RT_RESOLVE)
#undef RT_RESOLVE
    init_error = to_rt(drv.init(0));
}

/* Loads the driver once and makes the primary context of device 0 current on this thread. */
static cudaError_t lazy_init(void)
{
    pthread_once(&once, load);
    if (init_error != cudaSuccess)
        return init_error;
    CUcontext cur = NULL;
    CUresult r = drv.ctx_get_current(&cur);
    pthread_mutex_lock(&lock);
    if (r == CUDA_SUCCESS && cur && (cur != primary || primary_held)) {
        pthread_mutex_unlock(&lock);
        return cudaSuccess;
    }
    if (!primary_held && (r = drv.primary_retain(&primary, 0)) == CUDA_SUCCESS)
        primary_held = 1;
    pthread_mutex_unlock(&lock);
    if (r != CUDA_SUCCESS)
        return to_rt(r);
    return to_rt(drv.ctx_set_current(primary));
}

static cudaError_t ret(cudaError_t e)
{
    if (e != cudaSuccess)
        last_error = e;
    return e;
}

#define RT_INIT()                                                                            \
    do {                                                                                     \
        cudaError_t e_ = lazy_init();                                                        \
        if (e_ != cudaSuccess)                                                               \
            return ret(e_);                                                                  \
    } while (0)

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    RT_INIT();
    if (!devPtr)
        return ret(cudaErrorInvalidValue);
    CUdeviceptr d = 0;
    cudaError_t e = to_rt(drv.mem_alloc(&d, size));
    *devPtr = (void *)d;
    return ret(e);
}

/* cudaFree(0) initialises the context and frees nothing (it still reaches cuMemFree_v2(0)). */
cudaError_t cudaFree(void *devPtr)
{
    RT_INIT();
    return ret(to_rt(drv.mem_free((CUdeviceptr)devPtr)));
}

cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
    RT_INIT();
    if (!devPtr)
        return ret(cudaErrorInvalidValue);
    CUdeviceptr d = 0;
    cudaError_t e = to_rt(drv.mem_alloc_managed(&d, size, flags));
    *devPtr = (void *)d;
    return ret(e);
}

/* Not through the exported cudaHostAlloc: the real runtime's internal calls bypass the PLT. */
static cudaError_t host_alloc(void **pHost, size_t size, unsigned int flags)
{
    RT_INIT();
    return ret(to_rt(drv.mem_host_alloc(pHost, size, flags)));
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags) { return host_alloc(pHost, size, flags); }
cudaError_t cudaMallocHost(void **ptr, size_t size) { return host_alloc(ptr, size, cudaHostAllocDefault); }

cudaError_t cudaFreeHost(void *ptr)
{
    RT_INIT();
    return ret(to_rt(drv.mem_free_host(ptr)));
}

cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
    RT_INIT();
    if (!devPtr)
        return ret(cudaErrorInvalidValue);
    CUdeviceptr d = 0;
    cudaError_t e = to_rt(drv.mem_alloc_async(&d, size, (CUstream)hStream));
    *devPtr = (void *)d;
    return ret(e);
}

cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
    RT_INIT();
    return ret(to_rt(drv.mem_free_async((CUdeviceptr)devPtr, (CUstream)hStream)));
}

/* A channel description as the driver's array format: channels of the first one's size. */
static CUDA_ARRAY3D_DESCRIPTOR array_descriptor(const struct cudaChannelFormatDesc *d, struct cudaExtent ext)
{
    static const enum CUarray_format_enum sized[3][3] = {
        {CU_AD_FORMAT_SIGNED_INT8, CU_AD_FORMAT_SIGNED_INT16, CU_AD_FORMAT_SIGNED_INT32},
        {CU_AD_FORMAT_UNSIGNED_INT8, CU_AD_FORMAT_UNSIGNED_INT16, CU_AD_FORMAT_UNSIGNED_INT32},
        {CU_AD_FORMAT_HALF, CU_AD_FORMAT_HALF, CU_AD_FORMAT_FLOAT},
    };
    int size = d->x >= 32 ? 2 : d->x >= 16 ? 1 : 0, kind = d->f <= cudaChannelFormatKindFloat ? (int)d->f : 1;
    unsigned channels = (d->x > 0) + (d->y > 0) + (d->z > 0) + (d->w > 0);
    return (CUDA_ARRAY3D_DESCRIPTOR){ext.width, ext.height, ext.depth, sized[kind][size], channels ? channels : 1, 0};
}

cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *mipmappedArray, const struct cudaChannelFormatDesc *desc,
                                     struct cudaExtent extent, unsigned int numLevels, unsigned int flags)
{
    RT_INIT();
    if (!mipmappedArray || !desc)
        return ret(cudaErrorInvalidValue);
    (void)flags;
    CUDA_ARRAY3D_DESCRIPTOR d = array_descriptor(desc, extent);
    return ret(to_rt(drv.mipmap_create((CUmipmappedArray *)mipmappedArray, &d, numLevels)));
}

cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t mipmappedArray)
{
    RT_INIT();
    return ret(to_rt(drv.mipmap_destroy((CUmipmappedArray)mipmappedArray)));
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    RT_INIT();
    return ret(to_rt(drv.stream_create((CUstream *)pStream, 0)));
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    RT_INIT();
    return ret(to_rt(drv.stream_destroy((CUstream)stream)));
}

cudaError_t cudaDeviceSynchronize(void)
{
    RT_INIT();
    return ret(to_rt(drv.ctx_synchronize()));
}

cudaError_t cudaGetDeviceCount(int *count)
{
    pthread_once(&once, load);
    if (init_error != cudaSuccess)
        return ret(init_error);
    return ret(to_rt(drv.device_get_count(count)));
}

/* Releases the runtime's reference to the primary context, its only one, so all its
 * memory goes (the path measured on the real runtime); the next call retains it again. */
cudaError_t cudaDeviceReset(void)
{
    RT_INIT();
    pthread_mutex_lock(&lock);
    CUresult r = primary_held ? drv.primary_release(0) : CUDA_SUCCESS;
    primary_held = 0;
    pthread_mutex_unlock(&lock);
    drv.ctx_set_current(NULL);
    return ret(to_rt(r));
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}

cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
    if (!runtimeVersion)
        return cudaErrorInvalidValue;
    *runtimeVersion = 13000;
    return cudaSuccess;
}

const char *cudaGetErrorString(cudaError_t error)
{
    return error == cudaSuccess ? "no error" : error == cudaErrorMemoryAllocation ? "out of memory" : "error";
}
