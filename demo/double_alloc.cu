/* Leak 4: one pointer allocated twice. Each iteration allocates a 2 MiB output, then
 * finds it needs 3 MiB and allocates again into the same pointer without freeing the
 * first block; the free at the end of the iteration releases only the second. */
#include "demo.h"

static const size_t kFirstBytes = 2 * DEMO_MIB;
static const size_t kSecondBytes = 3 * DEMO_MIB;

__global__ void fill(float *p, size_t n, float v)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = v;
}

static float run(float *p, size_t bytes, float v)
{
    size_t n = bytes / sizeof(float);
    fill<<<64, 256>>>(p, n, v);
    CHECK(cudaGetLastError());
    float last = 0;
    CHECK(cudaMemcpy(&last, p + n - 1, sizeof last, cudaMemcpyDeviceToHost));
    return last;
}

int main(int argc, char **argv)
{
    struct demo_opts o = {20, 0, 0};
    demo_parse(argc, argv, &o);

    for (long i = 1; i <= o.iterations; i++) {
        demo_mark(i);
        float *out = NULL;
        CHECK(cudaMalloc(&out, kFirstBytes)); /* lost by the next cudaMalloc */
        float a = run(out, kFirstBytes, (float)i);
        CHECK(cudaMalloc(&out, kSecondBytes)); /* out is overwritten: should have freed it first */
        float b = run(out, kSecondBytes, (float)(2 * i));
        if (a != (float)i || b != (float)(2 * i)) {
            fprintf(stderr, "double_alloc: iteration %ld read back %g, %g\n", i, a, b);
            return 1;
        }
        CHECK(cudaFree(out));
        demo_sleep(o.delay_ms);
    }

    printf("double_alloc: %ld iterations; %ld first blocks of %zu MiB lost (%zu MiB)\n", o.iterations,
           o.iterations, kFirstBytes / DEMO_MIB, (size_t)o.iterations * kFirstBytes / DEMO_MIB);
    return 0;
}
