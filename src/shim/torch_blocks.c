/* PyTorch's caching allocator, block by block. The allocator carves tensors out of
 * segments the shim sees as cudaMalloc / cuMemMap; it calls every registered trace tracker
 * (C++ attachAllocatorTraceTracker) synchronously, in the allocating thread, for each block
 * it hands out and takes back. A tracker attached before the allocator's init() is
 * silently dropped, so it is attached when the first segment allocation made by
 * libc10_cuda passes through the shim: the allocator is initialized then, for every
 * device, and that thread already holds the (recursive) allocator lock.
 *
 * The tracker is C++ (a std::function), so it lives in a bridge library of its own,
 * libculeak_torch.so next to the shim, loaded only when libc10_cuda is: programs without
 * torch never load libstdc++ through culeak. The bridge knows the torch versions it can
 * handle; the first segment entry it passes for the device must be the segment the shim
 * just saw (or, for an expandable segment, a mapping that starts with the page the shim
 * saw mapped), or tensor tracking is turned off with one line on stderr and the rest
 * goes on. */
#include "shim.h"
#include "hooks.h"
#include "cuda_api.h"
#include "common/apis.h"
#include "common/wire.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Trace entry actions (TraceEntry::Action; stable from torch 2.1 on). */
enum { TE_ALLOC = 0, TE_FREE_REQUESTED = 1, TE_FREE_COMPLETED = 2, TE_SEGMENT_ALLOC = 3, TE_SEGMENT_MAP = 5 };

/* Native frames kept under a block's Python frames: the allocator's own, enough to tell
 * a C++ caller apart, while a full unwind through the dispatcher would cost more than the
 * rest of the event (a program without Python frames gets its full native stack). */
#define BLOCK_NATIVE_DEPTH 6

typedef void (*culeak_torch_entry_fn)(int action, int device, uint64_t addr, uint64_t size, uint64_t stream);
typedef int (*culeak_torch_attach_fn)(const char *c10_path, culeak_torch_entry_fn fn, char *why, size_t len);

enum { WAITING, VALIDATING, VALIDATING_NOW, TRACKING, OFF };

int culeak_torch_waiting = 1;
static int state = WAITING;           /* atomic */
static unsigned c10_epoch;            /* culeak_modules_epoch when libc10_cuda was last looked for */
static unsigned long long c10_adds;   /* loader's dlpi_adds then */
static uintptr_t c10_lo, c10_hi;      /* its text; 0 while not loaded */
static uint64_t expect_addr, expect_size;
static unsigned expect_kind;
static int expect_device;

static void turn_off(const char *why)
{
    __atomic_store_n(&state, OFF, __ATOMIC_RELEASE);
    __atomic_store_n(&culeak_torch_waiting, 0, __ATOMIC_RELEASE);
    char line[320];
    int n = snprintf(line, sizeof line, "culeak: tensor tracking off: %s\n", why);
    if (n > 0 && !__atomic_load_n(&culeak_attached, __ATOMIC_ACQUIRE)) /* attached: the NOTE says it */
        (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    size_t len = (size_t)n < sizeof line ? (size_t)n - 1 : sizeof line - 2; /* without the newline */
    culeak_stream_note(line + 8, len - 8);  /* without "culeak: " */
}

static int loader_adds(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    *(unsigned long long *)arg = info->dlpi_adds;
    return 1;
}

struct c10_text {
    uintptr_t lo, hi;
};

static int find_c10(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct c10_text *t = arg;
    const char *name = info->dlpi_name, *slash = strrchr(name, '/');
    if (strcmp(slash ? slash + 1 : name, "libc10_cuda.so") != 0)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            t->lo = info->dlpi_addr + ph->p_vaddr;
            t->hi = t->lo + ph->p_memsz;
        }
    }
    return 1;
}

/* The bridge sits next to the shim (build tree and install tree alike). */
static void *open_bridge(char *why, size_t len)
{
    Dl_info self;
    if (!dladdr((void *)open_bridge, &self) || !self.dli_fname) {
        snprintf(why, len, "the shim cannot find its own path");
        return NULL;
    }
    char path[4096];
    const char *slash = strrchr(self.dli_fname, '/');
    snprintf(path, sizeof path, "%.*slibculeak_torch.so", slash ? (int)(slash - self.dli_fname + 1) : 0,
             self.dli_fname);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        snprintf(why, len, "%s", dlerror());
    return h;
}

static void on_entry(int action, int device, uint64_t addr, uint64_t size, uint64_t stream);

static void attach(const struct culeak_ev *e, uintptr_t c10_text)
{
    char why[256] = "";
    Dl_info c10;
    if (!dladdr((void *)c10_text, &c10) || !c10.dli_fname) {
        turn_off("libc10_cuda's path is not known");
        return;
    }
    void *h = open_bridge(why, sizeof why);
    culeak_torch_attach_fn attach_fn = h ? (culeak_torch_attach_fn)culeak_real_dlsym(h, "culeak_torch_attach") : NULL;
    if (!attach_fn) {
        turn_off(why[0] ? why : "the bridge library has no culeak_torch_attach");
        return;
    }
    if (e) {
        expect_addr = e->addr;
        expect_size = e->size;
        expect_kind = e->kind;
        expect_device = e->device;
    }
    __atomic_store_n(&state, e ? VALIDATING : VALIDATING_NOW, __ATOMIC_RELEASE);
    if (attach_fn(c10.dli_fname, on_entry, why, sizeof why) != 0)
        turn_off(why);
}

/* In a process culeak attached to: attaches the tracker at once, from the main thread of
 * a Python process (python/culeak_attach.py, through ctypes), rather than at the
 * allocator's next segment, which a job in its steady state may not make for hours. No
 * segment is expected then: the first block entry is checked against the driver (its
 * range must lie inside one device allocation), or tracking is turned off. 0 when the
 * tracker is attached (or was already), -1 when not (a NOTE says why). */
CULEAK_EXPORT int culeak_torch_attach_now(void)
{
    int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (s != WAITING)
        return s == OFF ? -1 : 0;
    struct c10_text t = {0, 0};
    dl_iterate_phdr(find_c10, &t);
    if (!t.lo)
        return -1;
    static int once;
    if (__atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL))
        return 0;
    const char *no = getenv("CULEAK_NO_TENSORS");
    if (no && *no && strcmp(no, "0") != 0) {
        __atomic_store_n(&state, OFF, __ATOMIC_RELEASE);
        __atomic_store_n(&culeak_torch_waiting, 0, __ATOMIC_RELEASE);
        return -1;
    }
    attach(NULL, t.lo);
    return __atomic_load_n(&state, __ATOMIC_ACQUIRE) == OFF ? -1 : 0;
}

/* A block entry read right: [addr, addr + size) lies inside one allocation of the driver. */
static int block_in_device_memory(uint64_t addr, uint64_t size)
{
    __typeof__(&cuMemGetAddressRange_v2) range = CULEAK_REAL(cuMemGetAddressRange_v2);
    CUdeviceptr base = 0;
    size_t len = 0;
    if (!range || !addr || range(&base, &len, (CUdeviceptr)addr) != CUDA_SUCCESS)
        return 0;
    return addr >= base && size <= len && addr - base <= len - size;
}

void culeak_torch_segment(const struct culeak_ev *e, const uintptr_t *ips, int n)
{
    if (e->kind != CULEAK_KIND_DEVICE && e->kind != CULEAK_KIND_VMM_MAPPED)
        return;
    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != WAITING)
        return;
    /* No lock of the shim around dl_iterate_phdr (it takes the loader lock): threads that
     * race here look it up twice and publish the same range. */
    uintptr_t lo = __atomic_load_n(&c10_lo, __ATOMIC_ACQUIRE), hi = __atomic_load_n(&c10_hi, __ATOMIC_RELAXED);
    if (!lo) { /* look again only when libraries were loaded since: no loader lock per allocation */
        unsigned epoch = __atomic_load_n(&culeak_modules_epoch, __ATOMIC_ACQUIRE);
        if (epoch == __atomic_load_n(&c10_epoch, __ATOMIC_RELAXED))
            return;
        __atomic_store_n(&c10_epoch, epoch, __ATOMIC_RELAXED);
        unsigned long long adds = 0;
        dl_iterate_phdr(loader_adds, &adds);
        if (adds == __atomic_load_n(&c10_adds, __ATOMIC_RELAXED))
            return;
        __atomic_store_n(&c10_adds, adds, __ATOMIC_RELAXED);
        struct c10_text t = {0, 0};
        dl_iterate_phdr(find_c10, &t);
        if (!t.lo)
            return;
        lo = t.lo;
        hi = t.hi;
        __atomic_store_n(&c10_hi, hi, __ATOMIC_RELAXED);
        __atomic_store_n(&c10_lo, lo, __ATOMIC_RELEASE);
    }
    int from_c10 = 0;
    for (int i = 0; i < n && !from_c10; i++)
        from_c10 = ips[i] >= lo && ips[i] < hi;
    if (!from_c10)
        return;
    static int once;
    if (__atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL))
        return;
    const char *no = getenv("CULEAK_NO_TENSORS");
    if (no && *no && strcmp(no, "0") != 0) {
        __atomic_store_n(&state, OFF, __ATOMIC_RELEASE);
        __atomic_store_n(&culeak_torch_waiting, 0, __ATOMIC_RELEASE);
        return;
    }
    attach(e, lo);
}

/* The tracker: called with the allocator's lock held, in the allocating thread. */
static void on_entry(int action, int device, uint64_t addr, uint64_t size, uint64_t stream)
{
    int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (s == VALIDATING_NOW) {
        if (action != TE_ALLOC && action != TE_FREE_REQUESTED)
            return; /* a segment: its CUDA call is seen by the shim */
        if (!block_in_device_memory(addr, size)) {
            char why[200];
            snprintf(why, sizeof why,
                     "this torch's trace entries do not read as expected (block 0x%llx+%llu is in no device "
                     "allocation)",
                     (unsigned long long)addr, (unsigned long long)size);
            turn_off(why);
            return;
        }
        __atomic_store_n(&state, TRACKING, __ATOMIC_RELEASE);
        __atomic_store_n(&culeak_torch_waiting, 0, __ATOMIC_RELEASE);
        s = TRACKING;
    }
    if (s == VALIDATING) {
        if (action != TE_SEGMENT_ALLOC && action != TE_SEGMENT_MAP)
            return; /* not one we can check: wait for the segment */
        if (device >= 0 && expect_device >= 0 && device != expect_device)
            return; /* another device's, from another thread: not the one seen */
        /* An expandable segment maps its pages one cuMemMap each; its SEGMENT_MAP covers
         * them all, from the first. */
        int kind_ok = action == TE_SEGMENT_ALLOC ? expect_kind == CULEAK_KIND_DEVICE
                                                 : expect_kind == CULEAK_KIND_VMM_MAPPED;
        int size_ok = action == TE_SEGMENT_ALLOC ? size == expect_size : size >= expect_size;
        if (!kind_ok || addr != expect_addr || !size_ok) {
            char why[200];
            snprintf(why, sizeof why,
                     "this torch's trace entries do not read as expected (segment 0x%llx+%llu, read 0x%llx+%llu)",
                     (unsigned long long)expect_addr, (unsigned long long)expect_size, (unsigned long long)addr,
                     (unsigned long long)size);
            turn_off(why);
            return;
        }
        __atomic_store_n(&state, TRACKING, __ATOMIC_RELEASE);
        __atomic_store_n(&culeak_torch_waiting, 0, __ATOMIC_RELEASE);
        return;
    }
    if (s != TRACKING || (action != TE_ALLOC && action != TE_FREE_REQUESTED))
        return; /* segments are seen through their CUDA calls; a completed free was recorded when requested */
    if (!culeak_enter())
        return;
    struct culeak_ev e = {action == TE_ALLOC ? CULEAK_OP_ALLOC : CULEAK_OP_FREE,
                          action == TE_ALLOC ? CULEAK_API_TORCH_BLOCK_ALLOC : CULEAK_API_TORCH_BLOCK_FREE,
                          CULEAK_KIND_BLOCK, -1, 0, size, addr, stream, 0};
    if (e.op == CULEAK_OP_ALLOC || culeak_free_stacks) { /* a bare free has device -1, context 0 */
        culeak_fill_ctx(&e);
        if (device >= 0)
            e.device = device;
    }
    culeak_block_event(&e);
}

__attribute__((noinline)) void culeak_block_event(struct culeak_ev *e)
{
    if (e->op == CULEAK_OP_FREE && !culeak_free_stacks) { /* only its address matters */
        culeak_stream_event(e, NULL, 0, 0);
        culeak_leave();
        return;
    }
    uintptr_t ips[CULEAK_MAX_DEPTH];
    int shallow = culeak_py_enabled() ? culeak_unwind(ips, BLOCK_NATIVE_DEPTH, NULL) : -1;
    int n = shallow >= 0 ? culeak_py_stack_after(ips, shallow, CULEAK_MAX_DEPTH) : -1; /* depth-limited */
    /* A program without Python (libtorch from C++) gets its full native stack: that is
     * where its call sites are. In a Python process a thread without Python frames
     * (autograd's backward thread) keeps the pool's few frames: its blocks' callers are
     * libtorch's own, and unwinding them in full made a training step ~13% slower. */
    uint64_t tag = 0;
    if (n < 0)
        n = culeak_unwind(ips, (int)culeak_depth_limit, &tag);
    culeak_after_stack(e, ips, n, tag);
}
