/* Leak 2: an early return that skips the free. process_batch() allocates 2 MiB for a
 * batch, sums it on the GPU, and returns early for an empty batch (sum 0) before
 * reaching cudaFree. Every fourth batch is empty. */
#include "demo.h"

static const size_t kBatchInts = 2 * DEMO_MIB / sizeof(int);

__device__ unsigned long long d_sum;

__global__ void sum(const int *v, size_t n)
{
    unsigned long long local = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        local += (unsigned long long)v[i];
    atomicAdd(&d_sum, local);
}

/* Returns the batch's sum; 0 means the batch was empty and has been skipped. */
static unsigned long long process_batch(const int *host, size_t n)
{
    int *dev = NULL;
    CHECK(cudaMalloc(&dev, n * sizeof *dev));
    CHECK(cudaMemcpy(dev, host, n * sizeof *dev, cudaMemcpyHostToDevice));
    unsigned long long total = 0;
    CHECK(cudaMemcpyToSymbol(d_sum, &total, sizeof total));
    sum<<<64, 256>>>(dev, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyFromSymbol(&total, d_sum, sizeof total));
    if (total == 0)
        return 0; /* empty batch: returns without freeing dev */
    CHECK(cudaFree(dev));
    return total;
}

int main(int argc, char **argv)
{
    struct demo_opts o = {20, 0, 0};
    demo_parse(argc, argv, &o);
    int *host = (int *)malloc(kBatchInts * sizeof *host);
    if (!host) {
        fputs("early_return: out of host memory\n", stderr);
        return 1;
    }

    long skipped = 0;
    unsigned long long grand = 0;
    for (long i = 1; i <= o.iterations; i++) {
        demo_mark(i);
        int value = i % 4 == 0 ? 0 : (int)i;
        for (size_t k = 0; k < kBatchInts; k++)
            host[k] = value;
        unsigned long long total = process_batch(host, kBatchInts);
        if (total != (unsigned long long)value * kBatchInts) {
            fprintf(stderr, "early_return: batch %ld summed to %llu\n", i, total);
            return 1;
        }
        skipped += total == 0;
        grand += total;
        demo_sleep(o.delay_ms);
    }
    free(host);

    printf("early_return: %ld batches, sum %llu; %ld empty batches each lost %zu MiB (%zu MiB)\n",
           o.iterations, grand, skipped, kBatchInts * sizeof(int) / DEMO_MIB,
           (size_t)skipped * kBatchInts * sizeof(int) / DEMO_MIB);
    return 0;
}
