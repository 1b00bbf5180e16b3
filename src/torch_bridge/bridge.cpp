// libculeak_torch.so: attaches culeak's block tracker to PyTorch's caching allocator.
// Loaded by the shim (src/shim/torch_blocks.c) only in a process that has libc10_cuda,
// so that programs without torch never load libstdc++ through culeak.
//
// libc10_cuda exports no attachAllocatorTraceTracker function: the header's inline
// wrapper calls the CUDAAllocator's virtual method through the exported
// c10::cuda::CUDACachingAllocator::allocator. Where that method sits in the vtable
// depends on the torch version and build. Where libc10_cuda has a symbol table (PyPI
// wheels keep .symtab), NativeCachingAllocator::attachAllocatorTraceTracker is a local
// symbol there, and only the vtable slot holding that very address is called. Only a
// library without symbols falls back on the table of versions measured against their
// headers, and then only for a version string that is in it exactly (a source build or
// an NGC 2.11.0a0 may lay the class out otherwise). TraceEntry's first fields (action,
// addr, stream, size) have kept their offsets since torch 2.0; the shim checks the first
// entry against the segment it saw, so a misread layout turns tracking off, never on.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <exception>
#include <fcntl.h>
#include <functional>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
    const char *version;         // torch/version.py's __version__, exactly
    size_t attach_vtable_offset; // bytes from the vtable's address point
    int device_offset;           // -1: no device_ field
};

// Offsets from offsetof / pointer-to-member of each version's own headers
// (c10/cuda/CUDACachingAllocator.h). action_@0, addr_@8, stream_@32, size_@40 in all.
// The builds of pytorch.org and PyPI, one source for each CUDA variant.
const Layout layouts[] = {
    {"2.11.0", 352, 4},
    {"2.11.0+cu126", 352, 4},
    {"2.11.0+cu128", 352, 4},
    {"2.11.0+cu130", 352, 4},
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

// The load addresses of the functions of the library at path (loaded at base) whose
// mangled names start with prefix and go on as a mangled name does (a GCC ".cold" or
// ".isra" part is not the function), from the file's .symtab: up to max into out, their
// number returned. *has_symtab says whether the file has a symbol table at all.
int local_functions(const char *path, uintptr_t base, const char *prefix, uintptr_t *out, int max, bool *has_symtab)
{
    *has_symtab = false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    void *map = fstat(fd, &st) == 0 && st.st_size > static_cast<off_t>(sizeof(Elf64_Ehdr))
                    ? mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0)
                    : MAP_FAILED;
    close(fd);
    if (map == MAP_FAILED)
        return 0;
    const char *img = static_cast<const char *>(map);
    size_t size = static_cast<size_t>(st.st_size), plen = std::strlen(prefix);
    int found = 0;
    const Elf64_Ehdr *eh = reinterpret_cast<const Elf64_Ehdr *>(img);
    bool ok = std::memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64 &&
              eh->e_shentsize == sizeof(Elf64_Shdr) && eh->e_shoff < size &&
              eh->e_shnum <= (size - eh->e_shoff) / sizeof(Elf64_Shdr);
    const Elf64_Shdr *sh = ok ? reinterpret_cast<const Elf64_Shdr *>(img + eh->e_shoff) : nullptr;
    for (unsigned i = 0; ok && found < max && i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum || sh[i].sh_entsize != sizeof(Elf64_Sym))
            continue;
        const Elf64_Shdr &strs = sh[sh[i].sh_link];
        *has_symtab = true;
        if (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset || strs.sh_offset > size ||
            strs.sh_size > size - strs.sh_offset)
            continue;
        const Elf64_Sym *sym = reinterpret_cast<const Elf64_Sym *>(img + sh[i].sh_offset);
        const char *names = img + strs.sh_offset;
        for (size_t k = 0; found < max && k < sh[i].sh_size / sizeof(Elf64_Sym); k++) {
            if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || !sym[k].st_value || sym[k].st_name >= strs.sh_size)
                continue;
            const char *name = names + sym[k].st_name;
            size_t room = strs.sh_size - sym[k].st_name;
            if (room > plen && std::strncmp(name, prefix, plen) == 0 && !std::memchr(name, '.', strnlen(name, room)))
                out[found++] = base + sym[k].st_value;
        }
    }
    munmap(map, size);
    return found;
}

// The vtable slot (bytes from the address point) holding one of fns, or -1. The slots
// run until one that is no function of a loaded library (the next vtable's offset-to-top);
// the slots of inherited methods point into other libraries (libc10.so, libstdc++).
long vtable_slot(void **vtable, const uintptr_t *fns, int nfns)
{
    for (long i = 0; i < 512; i++) {
        for (int k = 0; k < nfns; k++)
            if (reinterpret_cast<uintptr_t>(vtable[i]) == fns[k])
                return i * static_cast<long>(sizeof(void *));
        Dl_info in;
        if (!vtable[i] || !dladdr(vtable[i], &in))
            return -1; /* past the end of the vtable */
    }
    return -1;
}

// torch/version.py's __version__ into out; -1 when there is none.
int torch_version(const char *c10_path, char *out, size_t len)
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
        // the line that sets it, not __all__'s list that names it first
        const char *v = line + std::strspn(line, " \t");
        v = std::strncmp(v, "__version__", 11) == 0 ? v + 11 + std::strspn(v + 11, " \t") : nullptr;
        const char *q = v && (*v == '=' || *v == ':') ? std::strpbrk(v, "'\"") : nullptr;
        const char *end = q ? std::strchr(q + 1, *q) : nullptr;
        if (end && end > q + 1) {
            std::snprintf(out, len, "%.*s", static_cast<int>(end - q - 1), q + 1);
            found = 0;
        }
    }
    std::fclose(f);
    return found;
}

} // namespace

extern "C" __attribute__((visibility("default"))) int culeak_torch_attach(const char *c10_path, EntryFn fn,
                                                                          char *why, size_t len)
{
    char version[64];
    if (torch_version(c10_path, version, sizeof version) != 0) {
        std::snprintf(why, len, "no torch version next to %s", c10_path);
        return -1;
    }
    const Layout *L = nullptr;
    for (const Layout &l : layouts)
        if (std::strcmp(l.version, version) == 0)
            L = &l;
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
    Dl_info in_method, in_c10;
    if (!dladdr(reinterpret_cast<void *>(vtable), &in_c10)) {
        std::snprintf(why, len, "torch %s's allocator is not in libc10_cuda", version);
        return -1;
    }
    // The symbol, where there is one, decides: the table's slot is never called unchecked.
    bool has_symtab;
    uintptr_t fns[8];
    int nfns = local_functions(c10_path, reinterpret_cast<uintptr_t>(in_c10.dli_fbase),
                               "_ZN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocator"
                               "27attachAllocatorTraceTrackerE",
                               fns, 8, &has_symtab);
    long slot = -1;
    if (has_symtab && !nfns) {
        std::snprintf(why, len, "torch %s's symbol table has no attachAllocatorTraceTracker", version);
        return -1;
    } else if (nfns) {
        slot = vtable_slot(vtable, fns, nfns);
        if (slot < 0) {
            std::snprintf(why, len, "torch %s's allocator does not hold its attachAllocatorTraceTracker", version);
            return -1;
        }
        if (L && static_cast<long>(L->attach_vtable_offset) != slot)
            L = nullptr; /* not the build the table measured: its device_ offset is not known either */
    } else if (L) {
        slot = static_cast<long>(L->attach_vtable_offset);
    } else {
        std::snprintf(why, len,
                      "torch %s is not one culeak knows and its libc10_cuda has no symbols (tensors: use --no-pool)",
                      version);
        return -1;
    }
    void *method = vtable[slot / static_cast<long>(sizeof(void *))];
    if (!dladdr(method, &in_method) || in_method.dli_fbase != in_c10.dli_fbase) {
        std::snprintf(why, len, "torch %s's allocator does not have the expected layout", version);
        return -1;
    }
    entry_fn = fn;
    device_offset = L ? L->device_offset : -1;
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
