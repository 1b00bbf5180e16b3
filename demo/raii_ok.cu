/* The correct version: the loop of loop_leak.cu with each block owned by a RAII object.
 * DeviceBuffer frees in its destructor, cannot be copied (two owners would free twice)
 * and can be moved. The last three results are kept in a vector, so the memory in use
 * rises to four blocks and stays there; everything is freed by the end. */
#include "demo.h"

#include <utility>
#include <vector>

class DeviceBuffer {
public:
    explicit DeviceBuffer(size_t n) : n_(n) { CHECK(cudaMalloc(&p_, n * sizeof(float))); }
    ~DeviceBuffer() { release(); }
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;
    DeviceBuffer(DeviceBuffer &&other) noexcept : p_(std::exchange(other.p_, nullptr)), n_(std::exchange(other.n_, 0)) {}
    DeviceBuffer &operator=(DeviceBuffer &&other) noexcept
    {
        if (this != &other) {
            release();
            p_ = std::exchange(other.p_, nullptr);
            n_ = std::exchange(other.n_, 0);
        }
        return *this;
    }
    float *data() const { return p_; }
    size_t size() const { return n_; }

private:
    void release()
    {
        if (p_)
            CHECK(cudaFree(p_));
        p_ = nullptr;
    }
    float *p_ = nullptr;
    size_t n_;
};

__global__ void fill(float *p, size_t n, float v)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = v;
}

static const size_t kBlockBytes = 4 * DEMO_MIB;
static const size_t kKeep = 3;

int main(int argc, char **argv)
{
    struct demo_opts o = {20, 0, 0};
    demo_parse(argc, argv, &o);

    std::vector<DeviceBuffer> recent;
    for (long i = 1; i <= o.iterations; i++) {
        demo_mark(i);
        DeviceBuffer buf(kBlockBytes / sizeof(float));
        fill<<<64, 256>>>(buf.data(), buf.size(), (float)i);
        CHECK(cudaGetLastError());
        float last = 0;
        CHECK(cudaMemcpy(&last, buf.data() + buf.size() - 1, sizeof last, cudaMemcpyDeviceToHost));
        if (last != (float)i) {
            fprintf(stderr, "raii_ok: iteration %ld read back %g\n", i, last);
            return 1;
        }
        recent.push_back(std::move(buf)); /* ownership moves; buf is left empty */
        if (recent.size() > kKeep)
            recent.erase(recent.begin()); /* the oldest block is freed here */
        demo_sleep(o.delay_ms);
    }
    size_t kept = recent.size();
    recent.clear();

    printf("raii_ok: %ld iterations of %zu MiB, %zu kept at a time; nothing leaked\n", o.iterations,
           kBlockBytes / DEMO_MIB, kept);
    return 0;
}
