/* Leak 3: a class whose constructor allocates and whose destructor does not free.
 * Each iteration makes a 1 MiB scratch buffer that goes out of scope; its memory stays. */
#include "demo.h"

class DeviceBuffer {
public:
    explicit DeviceBuffer(size_t n) : n_(n) { CHECK(cudaMalloc(&p_, n * sizeof(float))); }
    ~DeviceBuffer() {} /* should call cudaFree(p_) */
    float *data() const { return p_; }
    size_t size() const { return n_; }

private:
    float *p_ = nullptr;
    size_t n_;
};

__global__ void iota(float *p, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = (float)i;
}

static const size_t kFloats = DEMO_MIB / sizeof(float);

int main(int argc, char **argv)
{
    struct demo_opts o = {20, 0, 0};
    demo_parse(argc, argv, &o);

    for (long i = 1; i <= o.iterations; i++) {
        demo_mark(i);
        DeviceBuffer scratch(kFloats);
        iota<<<64, 256>>>(scratch.data(), scratch.size());
        CHECK(cudaGetLastError());
        float last = 0;
        CHECK(cudaMemcpy(&last, scratch.data() + scratch.size() - 1, sizeof last, cudaMemcpyDeviceToHost));
        if (last != (float)(scratch.size() - 1)) {
            fprintf(stderr, "ctor_leak: iteration %ld read back %g\n", i, last);
            return 1;
        }
        demo_sleep(o.delay_ms);
    } /* ~DeviceBuffer runs here each time and frees nothing */

    printf("ctor_leak: %ld iterations; %ld scratch buffers of 1 MiB never freed (%ld MiB)\n", o.iterations,
           o.iterations, o.iterations);
    return 0;
}
