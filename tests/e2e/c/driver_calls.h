/* For the e2e tests' small programs on the simulated driver: its entry points found with
 * dlsym in libcuda.so.1 (dlopen'ed by the program), CUDA initialised and device 0's primary
 * context made current. */
#ifndef DRIVER_CALLS_H
#define DRIVER_CALLS_H
#include <dlfcn.h>
#include <stddef.h>

typedef int (*driver_fn)();

/* cuMemAlloc_v2 once the context is current, or NULL. */
static inline driver_fn driver_start(void *cuda)
{
    driver_fn init = (driver_fn)dlsym(cuda, "cuInit"), get = (driver_fn)dlsym(cuda, "cuDeviceGet"),
              retain = (driver_fn)dlsym(cuda, "cuDevicePrimaryCtxRetain"),
              current = (driver_fn)dlsym(cuda, "cuCtxSetCurrent");
    int dev;
    void *ctx;
    if (!init || !get || !retain || !current || init(0) || get(&dev, 0) || retain(&ctx, dev) || current(ctx))
        return NULL;
    return (driver_fn)dlsym(cuda, "cuMemAlloc_v2");
}
#endif
