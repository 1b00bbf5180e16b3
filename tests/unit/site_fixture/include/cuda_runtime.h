/* Stands in for the CUDA toolkit header: code from a file named cuda_runtime.h is the
 * CUDA runtime's, whatever its function is called (like cudaMalloc<T>). */
#ifndef SITE_FIXTURE_CUDA_RUNTIME_H
#define SITE_FIXTURE_CUDA_RUNTIME_H

int cudaMalloc(void **p, unsigned long n);

/* an out-of-line instance, like the weak template nvcc compiles into the program */
static __attribute__((noinline)) int typed_malloc(float **p, unsigned long n)
{
    return cudaMalloc((void **)p, n);
}

/* the same template inlined into the caller (optimized host code) */
static inline __attribute__((always_inline)) int typed_malloc_inline(float **p, unsigned long n)
{
    return cudaMalloc((void **)p, n);
}

#endif
