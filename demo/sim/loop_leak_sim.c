/* The loop-leak scenario of loop_leak.cu written against the CUDA driver API, for
 * machines without a GPU: the same 4 MiB per iteration, iteration count, marks and
 * --delay-ms. It links against libcuda.so.1 like any driver-API program, so it runs on
 * culeak's simulated driver (LD_LIBRARY_PATH=$BUILD/fakecuda) or on a real one. The
 * kernel of the original becomes a device memset, read back to check it. */
#include "demo.h"

#include "cuda/culeak_cuda.h"

#define CU_CHECK(call) cu_check((call), #call, __LINE__)
static void cu_check(CUresult r, const char *what, int line)
{
    if (r != CUDA_SUCCESS) {
        const char *name = NULL;
        if (cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
            name = "unknown error";
        fprintf(stderr, "%s:%d: %s: %s (%d)\n", __FILE__, line, what, name, (int)r);
        exit(1);
    }
}

static const size_t kBlockBytes = 4 * DEMO_MIB;

int main(int argc, char **argv)
{
    struct demo_opts o = {20, 0, 0};
    demo_parse(argc, argv, &o);

    CUdevice dev;
    CUcontext ctx;
    CU_CHECK(cuInit(0));
    CU_CHECK(cuDeviceGet(&dev, 0));
    CU_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev)); /* what the runtime does on first use */
    CU_CHECK(cuCtxSetCurrent(ctx));

    CUdeviceptr buf = 0;
    for (long i = 1; i <= o.iterations; i++) {
        demo_mark(i);
        CU_CHECK(cuMemAlloc(&buf, kBlockBytes)); /* the previous block is still allocated */
        CU_CHECK(cuMemsetD8(buf, (unsigned char)i, kBlockBytes));
        unsigned char last = 0;
        CU_CHECK(cuMemcpyDtoH(&last, buf + kBlockBytes - 1, 1));
        if (last != (unsigned char)i) {
            fprintf(stderr, "loop_leak_sim: iteration %ld read back %u\n", i, last);
            return 1;
        }
        demo_sleep(o.delay_ms);
    }
    if (buf)
        CU_CHECK(cuMemFree(buf)); /* frees the last block only */

    long lost = o.iterations > 0 ? o.iterations - 1 : 0;
    printf("loop_leak_sim: %ld iterations of %zu MiB; %ld blocks never freed (%zu MiB)\n", o.iterations,
           kBlockBytes / DEMO_MIB, lost, (size_t)lost * kBlockBytes / DEMO_MIB);
    return 0;
}
