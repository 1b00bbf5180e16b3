/* Stands in for the CUDA runtime linked statically into a program (nvcc's default):
 * compiled without -g, its functions carry cudart's names. The "driver" prints the stack
 * of each allocation as call addresses, outermost last. */
#include <execinfo.h>
#include <stdint.h>
#include <stdio.h>

static __attribute__((noinline)) void driver_alloc(void)
{
    void *ret[64];
    int n = backtrace(ret, 64);
    printf("stack");
    for (int i = 1; i < n; i++) /* from the driver's caller, as the shim records it */
        printf(" %lx", (unsigned long)((uintptr_t)ret[i] - 1));
    printf("\n");
}

__attribute__((noinline)) int libcudart_static_deadbeef(void **p, unsigned long n)
{
    driver_alloc();
    *p = (void *)(uintptr_t)n;
    return 0;
}

__attribute__((noinline)) int cudaMalloc(void **p, unsigned long n)
{
    return libcudart_static_deadbeef(p, n);
}
