// A stand-in for the part of PyTorch's libtorch_cpu.so that runs a backward pass (a test
// double, no torch needed): autograd's engine runs each node on a thread of its own, which
// never ran Python, and the node's kernel allocates its output through ATen's empty helper
// from the caching allocator (libc10_cuda.so of this directory, whose malloc the caller
// passes: the copy the job loaded). Driven by ctypes from the stand-in torch package
// (tests/e2e/python/site-packages/torch).
#include <condition_variable>
#include <cstddef>
#include <mutex>
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

// Waits until `callers` threads have come here (the count goes on from call to call).
static void meet(int &count, int callers)
{
    static std::mutex mu;
    static std::condition_variable cv;
    std::unique_lock<std::mutex> lock(mu);
    int round = count++ / callers;
    if (count % callers == 0)
        cv.notify_all();
    else
        cv.wait(lock, [&] { return count / callers > round; });
}

// The same, but with `callers` calls in flight together (several Python threads inside
// backward() at once): every node allocates after all calls have come in, and no call
// returns before every node has allocated.
extern "C" EXPORT void *fake_autograd_backward_together(malloc_fn c10_malloc, size_t nbytes, int callers)
{
    static int arrived, allocated;
    void *p = nullptr;
    std::thread([&] {
        meet(arrived, callers);
        p = torch::autograd::generated::MmBackward0().apply(c10_malloc, nbytes);
        meet(allocated, callers);
    }).join();
    return p;
}
