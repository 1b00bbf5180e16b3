// A stand-in for PyTorch's libc10_cuda.so (a test double, no torch needed): a tiny caching
// allocator that takes segments with cudaMalloc and calls the trace trackers attached to
// it the way torch 2.11's CUDACachingAllocator does: ALLOC, FREE_REQUESTED,
// FREE_COMPLETED, SEGMENT_ALLOC and SEGMENT_FREE, synchronously under its recursive lock.
// FAKE_C10_EXPANDABLE=1 takes segments as torch's expandable_segments does: a reserved
// range mapped 2 MiB page by page (cuMemCreate, cuMemMap), one SEGMENT_MAP entry for them
// all. FAKE_C10_OTHER_DEVICE_FIRST=1 traces another device's segment (another thread's)
// just before the first one of its own. FAKE_C10_BLOCK_DEVICE=N says its blocks are
// device N's while the segments are the current context's (device 0's).
// Like torch, it exports no attach function: only the allocator object, whose vtable has
// attachAllocatorTraceTracker where torch 2.11 has it, after slots that point into
// libc10.so as torch's do; its .symtab names the method like torch's, and a tracker
// attached before init() is dropped. Driven by ctypes (fake_c10_*),
// as torch's Python layer drives the real one.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

extern "C" {
#include "cuda/culeak_cuda.h"   // the CUDA API as culeak declares it: no toolkit needed
#include "cuda/culeak_cudart.h"
}

#include "c10_allocator.h" // c10::Allocator, from the stand-in's libc10.so

namespace c10 {
namespace cuda {
namespace CUDACachingAllocator {

struct TraceEntry { // torch 2.11's field order and sizes, up to size_
    enum Action { ALLOC, FREE_REQUESTED, FREE_COMPLETED, SEGMENT_ALLOC, SEGMENT_FREE, SEGMENT_MAP, SEGMENT_UNMAP };
    Action action_;
#ifdef FAKE_C10_SHIFTED // ... and a byte before device_: its offset is not the table's either
    int8_t other_;
#endif
    int8_t device_;
    size_t addr_;
    std::shared_ptr<void> context_;
    cudaStream_t stream_;
    size_t size_;
};
using AllocatorTraceTracker = std::function<void(const TraceEntry &)>;

#define PAD(n) virtual void pad##n() {}
#define PAD4(n) PAD(n##0) PAD(n##1) PAD(n##2) PAD(n##3)
struct CUDAAllocator : Allocator {
    // torch 2.11: 44 vtable slots come first, Allocator's 3 (in libc10.so) and 41 more
    PAD4(0) PAD4(1) PAD4(2) PAD4(3) PAD4(4) PAD4(5) PAD4(6) PAD4(7) PAD4(8) PAD4(9) PAD(a)
#ifdef FAKE_C10_SHIFTED // a build whose method sits two slots later than torch 2.11's
    PAD(s0) PAD(s1)
#endif
    virtual void attachAllocatorTraceTracker(AllocatorTraceTracker tracker) = 0;
    virtual ~CUDAAllocator() = default;
};

EXPORT std::atomic<CUDAAllocator *> allocator;

struct Segment {
    char *base;
    size_t size, used;
};

namespace Native { // torch's name, found in .symtab when the version is not in culeak's table

struct NativeCachingAllocator : CUDAAllocator {
    std::recursive_mutex mu;
    int ndev = 0;                                    // 0 until init()
    std::vector<std::vector<AllocatorTraceTracker>> trackers; // per device
    std::vector<Segment> segments;
    std::vector<std::pair<void *, size_t>> free_blocks, live;

    void attachAllocatorTraceTracker(AllocatorTraceTracker tracker) override
    {
        std::lock_guard<std::recursive_mutex> lock(mu);
        for (auto &t : trackers) // before init(): no device, nothing kept
            t.push_back(tracker);
    }

    void trace(TraceEntry::Action a, void *addr, size_t size, int8_t device = 0)
    {
        if (trackers.empty())
            return;
        // a layout culeak misreads: its addresses ("addr"), else its sizes
        static const char *skew = std::getenv("FAKE_C10_SKEWED_TRACE");
        static const bool skew_addr = skew && std::strcmp(skew, "addr") == 0, skewed = skew && !skew_addr;
        TraceEntry e{};
        e.action_ = a;
#ifdef FAKE_C10_SHIFTED
        e.other_ = 0x55;
#endif
        e.device_ = device;
        e.addr_ = reinterpret_cast<size_t>(addr) + (skew_addr ? 512 : 0);
        e.size_ = size + (skewed ? 8 : 0);
        for (auto &t : trackers[0])
            t(e);
    }

    void *malloc(size_t size)
    {
        std::lock_guard<std::recursive_mutex> lock(mu);
        size = (size + 511) & ~size_t(511);
        for (size_t i = 0; i < free_blocks.size(); i++)
            if (free_blocks[i].second == size) {
                void *p = free_blocks[i].first;
                free_blocks.erase(free_blocks.begin() + static_cast<long>(i));
                return hand_out(p, size);
            }
        Segment *seg = nullptr;
        for (auto &s : segments)
            if (s.size - s.used >= size)
                seg = &s;
        if (!seg) {
            static const bool expandable = std::getenv("FAKE_C10_EXPANDABLE") != nullptr;
            static const bool other_first = std::getenv("FAKE_C10_OTHER_DEVICE_FIRST") != nullptr;
            size_t ssize = size > (2u << 20) ? size : (2u << 20);
            void *base = expandable ? map_pages(ssize) : nullptr;
            if (!expandable && cudaMalloc(&base, ssize) != cudaSuccess)
                base = nullptr;
            if (!base)
                return nullptr;
            segments.push_back({static_cast<char *>(base), ssize, 0});
            seg = &segments.back();
            if (other_first && segments.size() == 1)
                trace(TraceEntry::SEGMENT_ALLOC, reinterpret_cast<void *>(0x7e0000000000), 20u << 20, 1);
            trace(expandable ? TraceEntry::SEGMENT_MAP : TraceEntry::SEGMENT_ALLOC, base, ssize);
        }
        void *p = seg->base + seg->used;
        seg->used += size;
        return hand_out(p, size);
    }

    // Two or more 2 MiB pages (size rounded up to them, in place of 2 MiB), each made
    // and mapped on its own, as torch's ExpandableSegment::map does.
    void *map_pages(size_t &size)
    {
        const size_t page = 2u << 20;
        size = size < 2 * page ? 2 * page : (size + page - 1) / page * page;
        CUdeviceptr va = 0;
        if (cuMemAddressReserve(&va, size, 0, 0, 0) != CUDA_SUCCESS)
            return nullptr;
        CUmemAllocationProp prop{};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        for (size_t off = 0; off < size; off += page) {
            CUmemGenericAllocationHandle h;
            if (cuMemCreate(&h, page, &prop, 0) != CUDA_SUCCESS || cuMemMap(va + off, page, 0, h, 0) != CUDA_SUCCESS)
                return nullptr;
        }
        return reinterpret_cast<void *>(va);
    }

    static int8_t block_device()
    {
        static const char *d = std::getenv("FAKE_C10_BLOCK_DEVICE");
        return static_cast<int8_t>(d ? std::atoi(d) : 0);
    }

    void *hand_out(void *p, size_t size)
    {
        live.push_back({p, size});
        trace(TraceEntry::ALLOC, p, size, block_device());
        return p;
    }

    void free(void *p)
    {
        std::lock_guard<std::recursive_mutex> lock(mu);
        for (size_t i = 0; i < live.size(); i++)
            if (live[i].first == p) {
                size_t size = live[i].second;
                live.erase(live.begin() + static_cast<long>(i));
                trace(TraceEntry::FREE_REQUESTED, p, size, block_device());
                trace(TraceEntry::FREE_COMPLETED, p, size, block_device());
                free_blocks.push_back({p, size});
                return;
            }
    }
};

} // namespace Native

namespace {
Native::NativeCachingAllocator pool;
struct Install {
    Install() { allocator.store(&pool); }
} install;
} // namespace
} // namespace CUDACachingAllocator
} // namespace cuda
} // namespace c10

using c10::cuda::CUDACachingAllocator::pool;

extern "C" EXPORT void fake_c10_init(int device_count)
{
    std::lock_guard<std::recursive_mutex> lock(pool.mu);
    pool.ndev = device_count;
    pool.trackers.resize(static_cast<size_t>(device_count));
}

extern "C" EXPORT void *fake_c10_malloc(size_t size) { return pool.malloc(size); }
extern "C" EXPORT void fake_c10_free(void *p) { pool.free(p); }

// Calls nested `depth` deep, so a stack cut at a few frames shows.
__attribute__((noinline)) static void *nested_malloc(size_t size, int depth)
{
    void *p = depth > 0 ? nested_malloc(size, depth - 1) : pool.malloc(size);
    __asm__ volatile("" ::: "memory"); // not a tail call
    return p;
}

// From a thread that never ran Python, as autograd's backward thread allocates gradients.
extern "C" EXPORT void *fake_c10_malloc_in_thread(size_t size)
{
    void *p = nullptr;
    std::thread([&] { p = nested_malloc(size, 10); }).join();
    return p;
}

// torch.cuda.memory_snapshot()'s facts, one row per segment and per block in use:
// kind 0 a segment (addr, size), 1 a block handed out (addr, size). Returns the number of
// rows (up to max written).
extern "C" EXPORT int fake_c10_snapshot(int *kind, uint64_t *addr, uint64_t *size, int max)
{
    std::lock_guard<std::recursive_mutex> lock(pool.mu);
    int n = 0;
    for (auto &s : pool.segments) {
        if (n < max) {
            kind[n] = 0;
            addr[n] = reinterpret_cast<uint64_t>(s.base);
            size[n] = s.size;
        }
        n++;
        for (auto &b : pool.live)
            if (static_cast<char *>(b.first) >= s.base && static_cast<char *>(b.first) < s.base + s.size) {
                if (n < max) {
                    kind[n] = 1;
                    addr[n] = reinterpret_cast<uint64_t>(b.first);
                    size[n] = b.second;
                }
                n++;
            }
    }
    return n;
}
