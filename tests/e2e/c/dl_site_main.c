/* Allocates once (the stream starts, its first MODULES record without the library), then
 * dlopens the library argv[1] and calls its dl_site_leak, which leaks 2 MiB. */
#include "cuda/culeak_cudart.h"
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    void *p;
    if (cudaMalloc(&p, 4096) != cudaSuccess || cudaFree(p) != cudaSuccess)
        return 3;
    void *h = dlopen(argv[1], RTLD_NOW);
    int (*f)(void) = h ? (int (*)(void))dlsym(h, "dl_site_leak") : NULL;
    if (!f) { fprintf(stderr, "%s\n", dlerror()); return 3; }
    return f();
}
