/* A stand-in for cuBLAS's libcublas.so.13 (a test double): cublasCreate_v2 makes a handle
 * with a workspace of device memory, through an internal function of the library. */
#include "cuda/culeak_cudart.h"

#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

__attribute__((noinline)) static void *make_workspace(void)
{
    void *p = NULL;
    if (cudaMalloc(&p, 8192) != cudaSuccess)
        p = NULL;
    __asm__ volatile("" ::: "memory"); /* not a tail call */
    return p;
}

EXPORT int cublasCreate_v2(void **handle)
{
    void *ws = make_workspace();
    *handle = ws;
    return ws ? 0 : 1;
}

EXPORT int cublasDestroy_v2(void *handle) { return cudaFree(handle) != cudaSuccess; }
