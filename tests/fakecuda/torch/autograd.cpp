// A stand-in for the part of PyTorch's libtorch_cpu.so that runs a backward pass (a test
// double, no torch needed): autograd's engine runs each node on a thread of its own, which
// never ran Python, and the node's kernel allocates its output through ATen's empty helper
// from the caching allocator (libc10_cuda.so of this directory, whose malloc the caller
// passes: the copy the job loaded). Driven by ctypes from the stand-in torch package
// (tests/e2e/python/site-packages/torch).
#include <cstddef>
#include <thread>

#define EXPORT __attribute__((visibility("default")))

using malloc_fn = void *(*)(size_t);

namespace at {
namespace detail {
// ATen's allocation helper: allocator code, never a call site.
__attribute__((noinline)) void *empty_generic(malloc_fn c10_malloc, size_t nbytes)
{
    void *p = c10_malloc(nbytes);
    __asm__ volatile("" ::: "memory"); // not a tail call
    return p;
}
} // namespace detail
} // namespace at

namespace torch {
namespace autograd {
namespace generated {
// An autograd node: the operation whose gradient is computed.
struct MmBackward0 {
    __attribute__((noinline)) void *apply(malloc_fn c10_malloc, size_t nbytes)
    {
        void *p = at::detail::empty_generic(c10_malloc, nbytes);
        __asm__ volatile("" ::: "memory");
        return p;
    }
};
} // namespace generated
} // namespace autograd
} // namespace torch

// Runs one node on an engine thread; returns the gradient's block once the thread is done.
extern "C" EXPORT void *fake_autograd_backward(malloc_fn c10_malloc, size_t nbytes)
{
    void *p = nullptr;
    std::thread([&] { p = torch::autograd::generated::MmBackward0().apply(c10_malloc, nbytes); }).join();
    return p;
}
