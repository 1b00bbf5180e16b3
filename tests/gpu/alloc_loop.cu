// Times N cudaMalloc+cudaFree pairs at a chosen call depth: run with and without
// culeak to see what the shim adds on a real driver. Prints ns per pair.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

__attribute__((noinline)) static double loop(int depth, int n) {
    if (depth > 1) {
        double r = loop(depth - 1, n);
        asm volatile("" ::: "memory");  // keep the frame: no tail call
        return r;
    }
    void *p;
    double t0 = now_ns();
    for (int i = 0; i < n; i++) {
        if (cudaMalloc(&p, 4096) != cudaSuccess) exit(1);
        cudaFree(p);
    }
    return (now_ns() - t0) / n;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 100000;
    int depth = argc > 2 ? atoi(argv[2]) : 32;
    cudaFree(0);
    loop(depth, 1000);  // warm up
    printf("alloc_loop depth=%d pairs=%d ns_per_pair=%.0f\n", depth, n, loop(depth, n));
    return 0;
}
