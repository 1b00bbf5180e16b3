/* A stand-in for NCCL's libnccl.so.2 (a test double): ncclCommInitRank sets the
 * communicator up on a thread of the library's own, as NCCL's proxy and asynchronous
 * set-up do, which takes pinned and device buffers the communicator keeps. */
#include "cuda/culeak_cudart.h"

#include <pthread.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

struct nccl_comm {
    void *host, *dev;
    int bad;
};

__attribute__((noinline)) static void *proxy_setup(void *arg)
{
    struct nccl_comm *c = arg;
    c->bad = cudaHostAlloc(&c->host, 1024, 0) != cudaSuccess || cudaMalloc(&c->dev, 2048) != cudaSuccess;
    __asm__ volatile("" ::: "memory"); /* not a tail call */
    return NULL;
}

EXPORT int ncclCommInitRank(void **comm, int nranks, const void *id, int rank)
{
    (void)nranks, (void)id, (void)rank;
    struct nccl_comm *c = calloc(1, sizeof *c);
    pthread_t t;
    if (!c || pthread_create(&t, NULL, proxy_setup, c) != 0) {
        free(c);
        return 1;
    }
    pthread_join(t, NULL);
    *comm = c;
    return c->bad;
}
