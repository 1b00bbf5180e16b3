/* Reaches the driver the way nvcc's static cudart does: no link to libcuda; dlopen
 * "libcuda.so.1", ONE dlsym for cuGetProcAddress_v2, then cuGetProcAddress asked for
 * itself (11030 and 12000), then the whole table resolved eagerly through what that
 * returned, symbolStatus NULL, stream APIs with flags 0 and 2. */
#include "client_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

const char *client_name = "client_static";

typedef CUresult (*gpa_v1_t)(const char *, void **, int, cuuint64_t);
typedef CUresult (*gpa_v2_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

int main(int argc, char **argv)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "FAIL dlopen libcuda.so.1: %s\n", dlerror());
        return 1;
    }
    gpa_v2_t boot = (gpa_v2_t)dlsym(h, "cuGetProcAddress_v2");
    gpa_v1_t gpa1 = NULL;
    gpa_v2_t gpa = NULL;
    if (!boot || boot("cuGetProcAddress", (void **)&gpa1, 11030, 0, NULL) != CUDA_SUCCESS ||
        boot("cuGetProcAddress", (void **)&gpa, 12000, 0, NULL) != CUDA_SUCCESS || !gpa1 || !gpa) {
        fprintf(stderr, "FAIL cuGetProcAddress bootstrap\n");
        return 1;
    }
#define RESOLVE(field, sym, type, base, ver, flags)                                          \
    if (gpa(#base, (void **)&D.field, ver, flags, NULL) != CUDA_SUCCESS || !D.field) {      \
        fprintf(stderr, "FAIL cuGetProcAddress(%s, %d, %d)\n", #base, ver, flags);          \
        return 1;                                                                           \
    }
    CLIENT_DRIVER_API(RESOLVE)
#undef RESOLVE
    /* the fake's counters are not driver API: a plain dlsym on the same handle */
    D.live_bytes = (size_t (*)(void))dlsym(h, "fakecuda_live_bytes");
    D.alloc_count = (unsigned long (*)(void))dlsym(h, "fakecuda_alloc_count");
    D.free_count = (unsigned long (*)(void))dlsym(h, "fakecuda_free_count");
    return client_run(argc, argv);
}
