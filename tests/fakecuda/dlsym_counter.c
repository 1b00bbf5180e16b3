/* A test double preloaded after the shim: another tool that wraps dlsym the usual way (the
 * real one from dlvsym(RTLD_NEXT)) and hands out its own cuMemAlloc_v2, which counts the
 * calls before passing them on. At exit it writes to stderr "dlsym_counter: N allocations". */
#include "cuda/culeak_cuda.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef void *(*dlsym_fn)(void *, const char *);
typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);

static alloc_fn next_alloc;
static unsigned long allocs;

static CUresult counting_alloc(CUdeviceptr *d, size_t bytes)
{
    __atomic_add_fetch(&allocs, 1, __ATOMIC_RELAXED);
    return next_alloc(d, bytes);
}

void *dlsym(void *handle, const char *name)
{
    static dlsym_fn next;
    if (!next)
        next = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!next)
        next = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    void *p = next ? next(handle, name) : NULL;
    if (p && handle != RTLD_NEXT && strcmp(name, "cuMemAlloc_v2") == 0) {
        next_alloc = (alloc_fn)p;
        return (void *)counting_alloc;
    }
    return p;
}

__attribute__((destructor)) static void report(void)
{
    fprintf(stderr, "dlsym_counter: %lu allocations\n", __atomic_load_n(&allocs, __ATOMIC_RELAXED));
}
