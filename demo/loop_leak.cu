/* Leak 1: a buffer allocated inside a loop and freed once after it. Each iteration
 * allocates 4 MiB and overwrites the only pointer to the previous block, so every
 * block but the last is lost. */
#include "demo.h"

static const size_t kBlockBytes = 4 * DEMO_MIB;

__global__ void fill(float *p, size_t n, float v)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = v;
}

int main(int argc, char **argv)
{
    struct demo_opts o = {20, 0, 0};
    demo_parse(argc, argv, &o);
    const size_t n = kBlockBytes / sizeof(float);

    float *buf = NULL;
    for (long i = 1; i <= o.iterations; i++) {
        demo_mark(i);
        CHECK(cudaMalloc(&buf, kBlockBytes)); /* the previous block is still allocated */
        fill<<<64, 256>>>(buf, n, (float)i);
        CHECK(cudaGetLastError());
        float last = 0;
        CHECK(cudaMemcpy(&last, buf + n - 1, sizeof last, cudaMemcpyDeviceToHost));
        if (last != (float)i) {
            fprintf(stderr, "loop_leak: iteration %ld read back %g\n", i, last);
            return 1;
        }
        demo_sleep(o.delay_ms);
    }
    CHECK(cudaFree(buf)); /* frees the last block only */

    long lost = o.iterations > 0 ? o.iterations - 1 : 0;
    printf("loop_leak: %ld iterations of %zu MiB; %ld blocks never freed (%zu MiB)\n", o.iterations,
           kBlockBytes / DEMO_MIB, lost, (size_t)lost * kBlockBytes / DEMO_MIB);
    return 0;
}
