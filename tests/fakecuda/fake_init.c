/* Start-up and device queries of the fake driver, configured by the environment:
 * FAKECUDA_DEVICES (default 2), FAKECUDA_MEM_BYTES per device (default 1 GiB). */
#include "fake.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
int fake_initialized;
int fake_device_count = 2;
size_t fake_mem_bytes = (size_t)1 << 30;

CUresult cuInit(unsigned int Flags)
{
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fake_lock);
    if (!fake_initialized) {
        const char *d = getenv("FAKECUDA_DEVICES");
        const char *m = getenv("FAKECUDA_MEM_BYTES");
        if (d && *d) {
            int n = atoi(d);
            fake_device_count = n < 0 ? 0 : n > FAKE_MAX_DEVICES ? FAKE_MAX_DEVICES : n;
        }
        if (m && *m)
            fake_mem_bytes = (size_t)strtoull(m, NULL, 0);
        __atomic_store_n(&fake_initialized, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&fake_lock);
    return fake_device_count ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

CUresult cuDriverGetVersion(int *driverVersion)
{
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = FAKE_DRIVER_VERSION; /* works before cuInit, like the real one */
    return CUDA_SUCCESS;
}

int fake_valid_device(CUdevice dev) { return dev >= 0 && dev < fake_device_count; }

CUresult cuDeviceGetCount(int *count)
{
    FAKE_NEED_INIT();
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = fake_device_count;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    FAKE_NEED_INIT();
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fake_valid_device(ordinal))
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    FAKE_NEED_INIT();
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fake_valid_device(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    snprintf(name, (size_t)len, "Fake CUDA Device %d", dev);
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    FAKE_NEED_INIT();
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fake_valid_device(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    *bytes = fake_mem_bytes;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    FAKE_NEED_INIT();
    if (!pi)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fake_valid_device(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = 0; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *pi = 4; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *pi = 32; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
    case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY:
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
    case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED:
        *pi = 1;
        break;
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID: *pi = dev; break;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
    FAKE_NEED_INIT();
    CUcontext c = fake_current();
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!free_bytes || !total)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fake_lock);
    size_t used = fake_used(c->device);
    pthread_mutex_unlock(&fake_lock);
    *total = fake_mem_bytes;
    *free_bytes = used > fake_mem_bytes ? 0 : fake_mem_bytes - used;
    return CUDA_SUCCESS;
}

/* X(code, name, text) for the codes the fake can return (and a few more). */
#define FAKE_ERRORS(X)                                                                         \
    X(CUDA_SUCCESS, "no error")                                                                \
    X(CUDA_ERROR_INVALID_VALUE, "invalid argument")                                            \
    X(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")                                               \
    X(CUDA_ERROR_NOT_INITIALIZED, "initialization error")                                      \
    X(CUDA_ERROR_DEINITIALIZED, "driver shutting down")                                        \
    X(CUDA_ERROR_NOT_SUPPORTED, "operation not supported")                                     \
    X(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected")                              \
    X(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal")                                     \
    X(CUDA_ERROR_INVALID_CONTEXT, "invalid device context")                                    \
    X(CUDA_ERROR_CONTEXT_ALREADY_IN_USE, "context already in use")                             \
    X(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle")                                    \
    X(CUDA_ERROR_NOT_FOUND, "named symbol not found")                                          \
    X(CUDA_ERROR_ALREADY_MAPPED, "resource already mapped")                                    \
    X(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "part or all of the requested memory range is already mapped") \
    X(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "pointer does not correspond to a registered memory region") \
    X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing")

CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    switch (error) {
#define FAKE_ERR_NAME(code, text) case code: *pStr = #code; return CUDA_SUCCESS;
        FAKE_ERRORS(FAKE_ERR_NAME)
#undef FAKE_ERR_NAME
    default:
        *pStr = NULL;
        return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    switch (error) {
#define FAKE_ERR_TEXT(code, text) case code: *pStr = text; return CUDA_SUCCESS;
        FAKE_ERRORS(FAKE_ERR_TEXT)
#undef FAKE_ERR_TEXT
    default:
        *pStr = NULL;
        return CUDA_ERROR_INVALID_VALUE;
    }
}
