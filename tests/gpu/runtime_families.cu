// Every runtime-API allocation family once, with known sizes, and three deliberate
// leaks. Built twice: nvcc's default static cudart and -cudart shared.
#include <cuda_runtime.h>
#include "ledger.h"

__global__ void touch(char *p, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = (char)i;
}

int main() {
    CHECK_RT(cudaFree(0));  // context start-up, not a free
    void *d[4];
    size_t sizes[4] = {1 << 20, 3 << 20, 4096, 123457};
    for (int i = 0; i < 4; i++) {
        CHECK_RT(cudaMalloc(&d[i], sizes[i]));
        LEDGER_ALLOC("cudaMalloc", sizes[i], d[i]);
    }
    touch<<<(sizes[0] + 255) / 256, 256>>>((char *)d[0], sizes[0]);
    CHECK_RT(cudaDeviceSynchronize());
    for (int i = 0; i < 3; i++) {  // d[3] leaks
        CHECK_RT(cudaFree(d[i]));
        LEDGER_FREE(d[i]);
    }
    void *m;
    CHECK_RT(cudaMallocManaged(&m, 2 << 20));
    LEDGER_ALLOC("cudaMallocManaged", 2 << 20, m);
    CHECK_RT(cudaFree(m));
    LEDGER_FREE(m);
    void *h;
    CHECK_RT(cudaMallocHost(&h, 65536));
    LEDGER_ALLOC("cudaMallocHost", 65536, h);
    CHECK_RT(cudaFreeHost(h));
    LEDGER_FREE(h);
    CHECK_RT(cudaHostAlloc(&h, 8192, cudaHostAllocMapped));
    LEDGER_ALLOC("cudaHostAlloc", 8192, h);  // leaks
    void *reg = aligned_alloc(4096, 1 << 20);
    CHECK_RT(cudaHostRegister(reg, 1 << 20, cudaHostRegisterDefault));
    LEDGER_ALLOC("cudaHostRegister", 1 << 20, reg);
    CHECK_RT(cudaHostUnregister(reg));
    LEDGER_FREE(reg);
    free(reg);
    void *pitched;
    size_t pitch;
    CHECK_RT(cudaMallocPitch(&pitched, &pitch, 1000, 10));
    LEDGER_ALLOC("cudaMallocPitch", pitch * 10, pitched);
    CHECK_RT(cudaFree(pitched));
    LEDGER_FREE(pitched);
    cudaStream_t s;
    CHECK_RT(cudaStreamCreate(&s));
    void *a;
    CHECK_RT(cudaMallocAsync(&a, 5 << 20, s));
    LEDGER_ALLOC("cudaMallocAsync", 5 << 20, a);
    CHECK_RT(cudaFreeAsync(a, s));
    LEDGER_FREE(a);
    CHECK_RT(cudaMallocAsync(&a, 7 << 20, s));
    LEDGER_ALLOC("cudaMallocAsync", 7 << 20, a);  // leaks
    CHECK_RT(cudaStreamSynchronize(s));
    cudaArray_t arr;
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    CHECK_RT(cudaMallocArray(&arr, &desc, 256, 64));
    LEDGER_ALLOC("cudaMallocArray", 256 * 64 * 4, arr);
    CHECK_RT(cudaFreeArray(arr));
    LEDGER_FREE(arr);
    cudaMipmappedArray_t mip;  // 3 levels: 64x64, 32x32, 16x16 floats
    CHECK_RT(cudaMallocMipmappedArray(&mip, &desc, make_cudaExtent(64, 64, 0), 3));
    LEDGER_ALLOC("cudaMallocMipmappedArray", (64 * 64 + 32 * 32 + 16 * 16) * 4, mip);
    CHECK_RT(cudaFreeMipmappedArray(mip));
    LEDGER_FREE(mip);
    void *huge;
    size_t too_big = (size_t)1 << 50;
    if (cudaMalloc(&huge, too_big) == cudaErrorMemoryAllocation)
        LEDGER_FAIL("cudaMalloc", too_big);
    cudaGetLastError();
    printf("runtime_families: done\n");
    return 0;
}
