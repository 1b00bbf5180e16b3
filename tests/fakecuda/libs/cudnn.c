/* A stand-in for cuDNN's libcudnn.so.9 (a test double): cudnnCreate makes a handle with
 * some device and pinned memory of its own, as the real one does, through internal
 * functions of the library. */
#include "cuda/culeak_cudart.h"

#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

struct cudnn_context {
    void *scratch, *host;
};

__attribute__((noinline)) static int make_context(struct cudnn_context *c)
{
    int bad = cudaMalloc(&c->scratch, 4096) != cudaSuccess || cudaHostAlloc(&c->host, 256, 0) != cudaSuccess;
    __asm__ volatile("" ::: "memory"); /* not a tail call: the frame stays on the stack */
    return bad;
}

EXPORT int cudnnCreate(void **handle)
{
    struct cudnn_context *c = calloc(1, sizeof *c);
    if (!c || make_context(c) != 0) {
        free(c);
        return 1;
    }
    *handle = c;
    return 0;
}

EXPORT int cudnnDestroy(void *handle)
{
    struct cudnn_context *c = handle;
    if (c) {
        cudaFree(c->scratch);
        cudaFreeHost(c->host);
    }
    free(c);
    return 0;
}
