/* The benches' driver: libcuda loaded as the CUDA runtime does (cuGetProcAddress), the
 * primary context of device 0 current, cuMemAlloc and cuMemFree handed back. */
#ifndef CULEAK_BENCH_DRIVER_H
#define CULEAK_BENCH_DRIVER_H

#include "cuda/culeak_cuda.h"

#include <dlfcn.h>
#include <stdio.h>

typedef CUresult (*bench_gpa_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*bench_alloc_t)(CUdeviceptr *, size_t);
typedef CUresult (*bench_free_t)(CUdeviceptr);

/* 0, or -1 said on stderr after who. */
static inline int bench_load_driver(const char *who, const char *libcuda, bench_alloc_t *alloc, bench_free_t *release)
{
    void *h = dlopen(libcuda, RTLD_NOW | RTLD_LOCAL);
    bench_gpa_t gpa = h ? (bench_gpa_t)dlsym(h, "cuGetProcAddress_v2") : NULL;
    CUresult (*init)(unsigned) = NULL;
    CUresult (*dev_get)(CUdevice *, int) = NULL;
    CUresult (*retain)(CUcontext *, CUdevice) = NULL;
    CUresult (*set_current)(CUcontext) = NULL;
    if (!gpa || gpa("cuGetProcAddress", (void **)&gpa, 12000, 0, NULL) ||
        gpa("cuInit", (void **)&init, 2000, 0, NULL) || gpa("cuDeviceGet", (void **)&dev_get, 2000, 0, NULL) ||
        gpa("cuDevicePrimaryCtxRetain", (void **)&retain, 7000, 0, NULL) ||
        gpa("cuCtxSetCurrent", (void **)&set_current, 4000, 0, NULL) ||
        gpa("cuMemAlloc", (void **)alloc, 3020, 0, NULL) || gpa("cuMemFree", (void **)release, 3020, 0, NULL)) {
        fprintf(stderr, "%s: cannot load the driver %s\n", who, libcuda);
        return -1;
    }
    CUdevice dev;
    CUcontext ctx;
    if (init(0) || dev_get(&dev, 0) || retain(&ctx, dev) || set_current(ctx)) {
        fprintf(stderr, "%s: no context\n", who);
        return -1;
    }
    return 0;
}

#endif
