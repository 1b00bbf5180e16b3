/* A CUDA program another one execs: leaks argv[1] bytes. Linked with the fake driver's
 * directory as its run path, it runs in an empty environment too. */
#include "cuda/culeak_cudart.h"

#include <stdlib.h>

int main(int argc, char **argv)
{
    void *p;
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 4096;
    return cudaMalloc(&p, n) != cudaSuccess; /* LEAK-EXEC */
}
