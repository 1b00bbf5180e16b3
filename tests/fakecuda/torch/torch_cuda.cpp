// A stand-in for PyTorch's libtorch_cuda.so (a test double, no torch needed): its pinned-host
// caching allocator under torch 2.11's names, ATen's CachingHostAllocatorImpl template and
// the CUDA backend's CUDACachingHostAllocatorImpl in an anonymous namespace (so, as in
// torch, in no export table). As torch's, it rounds a request up to a power of two, takes
// a new block with cudaHostAlloc only when its free list has none of that size, and puts a
// freed block back on the free list: the memory stays pinned until the process exits.
// Driven by ctypes (fake_torch_*), as torch's Python layer drives it; fake_torch_item()
// reads a scalar back through a 4-byte pinned block, as x.item() and float(x.sum()) do.
// Also at::cuda::getCurrentCUDABlasHandle(), whose pool makes one cuBLAS handle (the
// fake libcublas.so.13's) and keeps it.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

extern "C" {
#include "cuda/culeak_cudart.h" // the CUDA runtime API as culeak declares it: no toolkit needed
}

#define EXPORT __attribute__((visibility("default")))
#define NOINLINE __attribute__((noinline))

namespace c10 {
namespace cuda {
struct CUDAStream {
    int id;
};
} // namespace cuda
} // namespace c10

namespace at {

template <typename S> struct HostBlock {
    HostBlock(size_t size, void *ptr) : size_(size), ptr_(ptr) {}
    size_t size_;
    void *ptr_;
    bool allocated_ = false;
};

template <typename S, typename E, typename B = HostBlock<S>> struct CachingHostAllocatorImpl {
    virtual ~CachingHostAllocatorImpl() = default;

    // the data pointer and its block, as torch's allocate returns them
    NOINLINE virtual std::pair<void *, void *> allocate(size_t size)
    {
        if (size == 0)
            return {nullptr, nullptr};
        size_t round = 1;
        while (round < size)
            round <<= 1;
        {
            std::lock_guard<std::mutex> lock(mu_);
            for (size_t i = 0; i < free_.size(); i++)
                if (free_[i]->size_ == round) {
                    B *b = free_[i];
                    free_.erase(free_.begin() + static_cast<long>(i));
                    b->allocated_ = true;
                    return {b->ptr_, b};
                }
        }
        void *ptr = nullptr;
        allocate_host_memory(round, &ptr);
        if (!ptr)
            return {nullptr, nullptr};
        B *b = new B(round, ptr);
        b->allocated_ = true;
        return {ptr, b};
    }

    NOINLINE virtual void free(void *ctx)
    {
        if (!ctx)
            return;
        B *b = static_cast<B *>(ctx);
        std::lock_guard<std::mutex> lock(mu_);
        b->allocated_ = false;
        free_.push_back(b); // cached: never cudaFreeHost here
    }

    virtual void allocate_host_memory(size_t size, void **ptr) = 0;

    std::mutex mu_;
    std::vector<B *> free_;
};

} // namespace at

namespace at {
namespace cuda {
namespace {

struct Event {
    int id;
};

struct CUDACachingHostAllocatorImpl : public CachingHostAllocatorImpl<c10::cuda::CUDAStream, Event> {
    NOINLINE void allocate_host_memory(size_t size, void **ptr) override
    {
        allocate_host_memory_slowpath(size, ptr);
        __asm__ volatile("" ::: "memory"); // not a tail call: the frame stays on the stack
    }

    NOINLINE void allocate_host_memory_slowpath(size_t size, void **ptr)
    {
        if (cudaHostAlloc(ptr, size, cudaHostAllocDefault) != cudaSuccess)
            *ptr = nullptr;
        __asm__ volatile("" ::: "memory");
    }
};

CUDACachingHostAllocatorImpl caching_host_allocator;

} // namespace
} // namespace cuda
} // namespace at

extern "C" int cublasCreate_v2(void **handle);

namespace at {
namespace cuda {
namespace {
NOINLINE void *createCublasHandle()
{
    void *h = nullptr;
    if (cublasCreate_v2(&h) != 0)
        h = nullptr;
    __asm__ volatile("" ::: "memory");
    return h;
}
} // namespace

EXPORT void *getCurrentCUDABlasHandle()
{
    static void *handle = createCublasHandle(); // the pool's: kept for the process's life
    return handle;
}
} // namespace cuda
} // namespace at

extern "C" EXPORT int fake_torch_blas_handle(void) { return at::cuda::getCurrentCUDABlasHandle() ? 0 : -1; }

using at::cuda::caching_host_allocator;

// A pinned tensor (Tensor.pin_memory(), torch.empty(..., pin_memory=True)): its block's
// context, which fake_torch_unpin gives back.
extern "C" EXPORT void *fake_torch_pin(size_t size) { return caching_host_allocator.allocate(size).second; }
extern "C" EXPORT void fake_torch_unpin(void *block) { caching_host_allocator.free(block); }

// x.item(): the scalar lands in a pinned block, which goes back to the cache at once.
extern "C" EXPORT int fake_torch_item(void)
{
    std::pair<void *, void *> b = caching_host_allocator.allocate(4);
    if (!b.first)
        return -1;
    caching_host_allocator.free(b.second);
    return 0;
}
