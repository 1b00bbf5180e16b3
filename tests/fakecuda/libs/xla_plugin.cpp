// A stand-in for XLA's CUDA plugin (xla_cuda_plugin.so of jax_cuda*_plugin; a test double):
// the StreamExecutor's set-up of cuDNN for a device, under XLA's name, makes the cuDNN
// handle it keeps for the client's life. fake_xla_init() is what the client calls.
#define EXPORT __attribute__((visibility("default")))

extern "C" int cudnnCreate(void **handle);

namespace stream_executor {
namespace gpu {
struct CudnnSupport {
    void *handle = nullptr;
    __attribute__((noinline)) bool Init();
};

bool CudnnSupport::Init()
{
    bool ok = cudnnCreate(&handle) == 0;
    __asm__ volatile("" ::: "memory"); // not a tail call
    return ok;
}
} // namespace gpu
} // namespace stream_executor

static stream_executor::gpu::CudnnSupport dnn;

extern "C" EXPORT int fake_xla_init(void) { return dnn.Init() ? 0 : 1; }
