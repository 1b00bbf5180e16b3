// libculeak_torch.so: attaches culeak's block tracker to PyTorch's caching allocator.
// Loaded by the shim (src/shim/torch_blocks.c) only in a process that has libc10_cuda,
// so that programs without torch never load libstdc++ through culeak.
//
// libc10_cuda exports no attachAllocatorTraceTracker function: the header's inline
// wrapper calls the CUDAAllocator's virtual method through the exported
// c10::cuda::CUDACachingAllocator::allocator. Where that method sits in the vtable, and
// where TraceEntry keeps its fields, depends on the torch version, so they come from a
// table of versions measured against their headers; any other version is refused with a
// reason, and the shim checks the first entry against the segment it saw.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <exception>
#include <functional>

namespace c10 {
namespace cuda {
namespace CUDACachingAllocator {
struct TraceEntry; // only ever handled by reference: the mangled name is what matters
}
} // namespace cuda
} // namespace c10

namespace {

using TraceEntry = c10::cuda::CUDACachingAllocator::TraceEntry;
using Tracker = std::function<void(const TraceEntry &)>;
using EntryFn = void (*)(int action, int device, uint64_t addr, uint64_t size, uint64_t stream);
using AttachFn = void (*)(void *self, Tracker tracker); // a virtual member, `this` first

struct Layout {
    int major, minor;
    size_t attach_vtable_offset; // bytes from the vtable's address point
    int device_offset;           // -1: no device_ field
};

// Offsets from offsetof / pointer-to-member of each version's own headers
// (c10/cuda/CUDACachingAllocator.h). action_@0, addr_@8, stream_@32, size_@40 in all.
const Layout layouts[] = {
    {2, 11, 352, 4},
};

EntryFn entry_fn;
int device_offset = -1;

void on_entry(const TraceEntry &te)
{
    const unsigned char *p = reinterpret_cast<const unsigned char *>(&te);
    int32_t action;
    uint64_t addr, stream, size;
    std::memcpy(&action, p, 4);
    std::memcpy(&addr, p + 8, 8);
    std::memcpy(&stream, p + 32, 8);
    std::memcpy(&size, p + 40, 8);
    int device = device_offset >= 0 ? static_cast<int8_t>(p[device_offset]) : -1;
    entry_fn(action, device, addr, size, stream);
}

int torch_version(const char *c10_path, int *major, int *minor)
{
    // .../torch/lib/libc10_cuda.so -> .../torch/version.py: __version__ = '2.11.0+cu130'
    char path[4096];
    const char *lib = std::strstr(c10_path, "/lib/libc10_cuda.so");
    if (!lib)
        return -1;
    std::snprintf(path, sizeof path, "%.*s/version.py", static_cast<int>(lib - c10_path), c10_path);
    FILE *f = std::fopen(path, "r");
    if (!f)
        return -1;
    char line[256];
    int found = -1;
    while (found < 0 && std::fgets(line, sizeof line, f)) {
        const char *v = std::strstr(line, "__version__");
        const char *q = v ? std::strpbrk(v, "'\"") : nullptr;
        if (q && std::sscanf(q + 1, "%d.%d", major, minor) == 2)
            found = 0;
    }
    std::fclose(f);
    return found;
}

} // namespace

extern "C" __attribute__((visibility("default"))) int culeak_torch_attach(const char *c10_path, EntryFn fn,
                                                                          char *why, size_t len)
{
    int major = 0, minor = 0;
    if (torch_version(c10_path, &major, &minor) != 0) {
        std::snprintf(why, len, "no torch version next to %s", c10_path);
        return -1;
    }
    const Layout *L = nullptr;
    for (const Layout &l : layouts)
        if (l.major == major && l.minor == minor)
            L = &l;
    if (!L) {
        std::snprintf(why, len, "torch %d.%d is not one culeak knows (tensors: use --no-pool)", major, minor);
        return -1;
    }
    void *c10 = dlopen(c10_path, RTLD_NOW | RTLD_NOLOAD);
    auto *allocator = c10 ? static_cast<std::atomic<void *> *>(
                                dlsym(c10, "_ZN3c104cuda20CUDACachingAllocator9allocatorE"))
                          : nullptr;
    void *self = allocator ? allocator->load() : nullptr;
    if (c10)
        dlclose(c10);
    if (!self) {
        std::snprintf(why, len, "libc10_cuda has no allocator");
        return -1;
    }
    void **vtable = *static_cast<void ***>(self);
    void *method = vtable[L->attach_vtable_offset / sizeof(void *)];
    Dl_info in_method, in_c10;
    if (!dladdr(method, &in_method) || !dladdr(reinterpret_cast<void *>(vtable), &in_c10) ||
        in_method.dli_fbase != in_c10.dli_fbase) {
        std::snprintf(why, len, "torch %d.%d's allocator does not have the expected layout", major, minor);
        return -1;
    }
    entry_fn = fn;
    device_offset = L->device_offset;
    try {
        reinterpret_cast<AttachFn>(method)(self, Tracker(on_entry));
    } catch (const std::exception &e) { // c10::Error: the first line says it
        std::snprintf(why, len, "the allocator refused the tracker: %s", e.what());
        why[std::strcspn(why, "\n")] = '\0';
        return -1;
    } catch (...) {
        std::snprintf(why, len, "the allocator refused the tracker");
        return -1;
    }
    return 0;
}
