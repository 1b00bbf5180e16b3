/* The device's memory at a mark: the free and total bytes of the thread's current
 * context (cuMemGetInfo), appended to MARK records so that the console can forecast
 * when a growing call site fills the device. Never creates a context or loads the
 * driver: without a current context, a mark carries nothing. */
#include "shim.h"
#include "hooks.h"
#include "cuda_api.h"

/* A thread marking faster than this reuses its last answer (same context): NVTX ranges
 * around every operator would otherwise ask the driver thousands of times a second. */
#define DEVMEM_REUSE_NS 1000000u

static CULEAK_TLS struct {
    uint64_t t_ns, ctx, free_bytes, total_bytes;
    int device;
} last;

int culeak_devmem(int *device, uint64_t *free_bytes, uint64_t *total_bytes)
{
    __typeof__(&cuCtxGetCurrent) get_ctx = CULEAK_REAL(cuCtxGetCurrent);
    __typeof__(&cuCtxGetDevice) get_dev = CULEAK_REAL(cuCtxGetDevice);
    __typeof__(&cuMemGetInfo_v2) get_info = CULEAK_REAL(cuMemGetInfo_v2);
    CUcontext ctx = NULL;
    CUdevice dev;
    size_t fr = 0, total = 0;
    if (!get_ctx || !get_dev || !get_info || get_ctx(&ctx) != CUDA_SUCCESS || !ctx ||
        get_dev(&dev) != CUDA_SUCCESS)
        return 0;
    uint64_t now = culeak_now_ns();
    if (!last.total_bytes || last.ctx != (uint64_t)(uintptr_t)ctx || now - last.t_ns >= DEVMEM_REUSE_NS) {
        if (get_info(&fr, &total) != CUDA_SUCCESS || total == 0)
            return 0;
        last.t_ns = now;
        last.ctx = (uint64_t)(uintptr_t)ctx;
        last.device = dev;
        last.free_bytes = fr;
        last.total_bytes = total;
    }
    *device = last.device;
    *free_bytes = last.free_bytes;
    *total_bytes = last.total_bytes;
    return 1;
}
