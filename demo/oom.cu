/* Out of memory on purpose: allocates blocks (4 GiB by default, --block-mib) and keeps
 * them until cudaMalloc fails or the step cap (the iteration count, default 200) is
 * reached, then frees them all. On a 140 GiB GPU that is about 35 steps. Exits 0 either
 * way: the failure is what the demo shows. */
#include "demo.h"

__global__ void touch(unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = v;
}

int main(int argc, char **argv)
{
    struct demo_opts o = {200, 0, 4096};
    demo_parse(argc, argv, &o);
    const size_t block = (size_t)o.block_mib * DEMO_MIB;

    size_t free_bytes = 0, total_bytes = 0;
    CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    void **blocks = (void **)calloc(o.iterations ? (size_t)o.iterations : 1, sizeof *blocks);
    if (!blocks) {
        fputs("oom: out of host memory\n", stderr);
        return 1;
    }

    long held = 0, failed_at = 0;
    for (long i = 1; i <= o.iterations; i++) {
        demo_mark(i);
        void *p = NULL;
        cudaError_t e = cudaMalloc(&p, block);
        if (e == cudaErrorMemoryAllocation) {
            failed_at = i;
            (void)cudaGetLastError(); /* clear it: the failure is expected */
            break;
        }
        CHECK(e);
        blocks[held++] = p;
        /* Writes the first MiB, so the block is really used. */
        touch<<<64, 256>>>((unsigned char *)p, block < DEMO_MIB ? block : DEMO_MIB, (unsigned char)i);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        demo_sleep(o.delay_ms);
    }
    for (long k = 0; k < held; k++)
        CHECK(cudaFree(blocks[k]));
    free(blocks);

    size_t held_mib = (size_t)held * (size_t)o.block_mib;
    if (failed_at)
        printf("oom: cudaMalloc of %ld MiB failed (out of memory) at step %ld with %zu MiB held of %zu MiB; "
               "all freed\n",
               o.block_mib, failed_at, held_mib, total_bytes / DEMO_MIB);
    else
        printf("oom: no failure in %ld steps of %ld MiB (%zu MiB held of %zu MiB); all freed\n", o.iterations,
               o.block_mib, held_mib, total_bytes / DEMO_MIB);
    return 0;
}
