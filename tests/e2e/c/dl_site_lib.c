/* A library the job dlopens after its first allocation: its leak's call site is here. */
#include "cuda/culeak_cudart.h"
int dl_site_leak(void)
{
    void *p;
    return cudaMalloc(&p, 2u << 20) != cudaSuccess; /* LEAK-DL */
}
