/* Resolves every driver function by its exported versioned name with dlsym, the way
 * Triton, CuPy, JAX and PyTorch's driver_api do. */
#include "client_api.h"

#include <dlfcn.h>
#include <stdio.h>

const char *client_name = "client_dlsym";

int main(int argc, char **argv)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "FAIL dlopen libcuda.so.1: %s\n", dlerror());
        return 1;
    }
#define RESOLVE(field, sym, type, base, ver, flags)                                          \
    if (!(D.field = (type)dlsym(h, #sym))) {                                                 \
        fprintf(stderr, "FAIL dlsym %s\n", #sym);                                            \
        return 1;                                                                            \
    }
    CLIENT_DRIVER_API(RESOLVE)
#undef RESOLVE
    D.live_bytes = (size_t (*)(void))dlsym(h, "fakecuda_live_bytes");
    D.alloc_count = (unsigned long (*)(void))dlsym(h, "fakecuda_alloc_count");
    D.free_count = (unsigned long (*)(void))dlsym(h, "fakecuda_free_count");
    return client_run(argc, argv);
}
