/* What was live when culeak attached: CUDA has no call that lists a process's
 * allocations, but the process (its own variables, its allocator's lists, the driver's
 * bookkeeping) holds a pointer to each of them in its writable memory. Every word there
 * that could be a device address is asked of the driver (cuMemGetAddressRange: the
 * allocation that contains it, base and size); each allocation found is sent once as a
 * "before-attach" event: size, kind (device, managed or pinned host memory, as the driver
 * says of the pointer) and device, no stack (apis.h).
 *
 * The memory is read with process_vm_readv on the process itself, never dereferenced: its
 * other threads run on and may unmap a region under the scan (the read then fails, the
 * process does not). The scan has a time budget; past it the inventory says it is
 * incomplete. */
#include "shim.h"
#include "hooks.h"
#include "cuda_api.h"
#include "common/apis.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define SCAN_BUDGET_NS (10ull * 1000 * 1000 * 1000)
#define CHUNK (1u << 20)
#define SEEN_MAX (1u << 22)
#define ALIGN 256          /* the driver's allocations start at least this aligned */
#define ADDR_MIN 0x10000u
#define ADDR_MAX (UINT64_C(1) << 47)
#define MAPPING_MAX (UINT64_C(64) << 30)

struct found {
    uint64_t base, size;
};

struct inv {
    uint64_t *seen;       /* open addressing, 0: empty */
    size_t seen_cap, nseen;
    struct found *v;
    size_t n, cap;
    uint64_t deadline;
    int incomplete;
    CUresult (*range)(CUdeviceptr *, size_t *, CUdeviceptr);
};

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    return x ^ (x >> 33);
}

/* Adds v to the values seen: 1 when it is new, 0 when seen, -1 when the set is full. */
static int seen_add(struct inv *s, uint64_t v)
{
    if (s->nseen * 2 >= s->seen_cap) {
        size_t cap = s->seen_cap ? s->seen_cap * 2 : 1u << 16;
        if (cap > SEEN_MAX)
            return -1;
        uint64_t *t = calloc(cap, sizeof *t);
        if (!t)
            return -1;
        for (size_t i = 0; i < s->seen_cap; i++)
            for (size_t j = mix(s->seen[i]) & (cap - 1); s->seen[i]; j = (j + 1) & (cap - 1))
                if (!t[j]) {
                    t[j] = s->seen[i];
                    break;
                }
        free(s->seen);
        s->seen = t;
        s->seen_cap = cap;
    }
    for (size_t j = mix(v) & (s->seen_cap - 1);; j = (j + 1) & (s->seen_cap - 1)) {
        if (s->seen[j] == v)
            return 0;
        if (!s->seen[j]) {
            s->seen[j] = v;
            s->nseen++;
            return 1;
        }
    }
}

static void consider(struct inv *s, uint64_t v)
{
    if (v < ADDR_MIN || v >= ADDR_MAX || (v & (ALIGN - 1)))
        return;
    int fresh = seen_add(s, v);
    if (fresh < 0)
        s->incomplete = 1;
    if (fresh <= 0)
        return;
    CUdeviceptr base = 0;
    size_t size = 0;
    if (s->range(&base, &size, (CUdeviceptr)v) != CUDA_SUCCESS || size == 0)
        return;
    if (base != v && seen_add(s, base) == 0)
        return; /* the allocation was found by its base already */
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        struct found *f = realloc(s->v, cap * sizeof *f);
        if (!f) {
            s->incomplete = 1;
            return;
        }
        s->v = f;
        s->cap = cap;
    }
    for (size_t i = 0; i < s->n; i++) /* an inner pointer seen before its base */
        if (s->v[i].base == base)
            return;
    s->v[s->n++] = (struct found){base, size};
}

static void scan_range(struct inv *s, uintptr_t lo, uintptr_t hi, uint64_t *buf)
{
    pid_t self = getpid();
    for (uintptr_t a = lo; a < hi && !s->incomplete; a += CHUNK) {
        if (culeak_now_ns() > s->deadline) {
            s->incomplete = 1;
            return;
        }
        size_t len = hi - a < CHUNK ? hi - a : CHUNK;
        struct iovec local = {buf, len}, remote = {(void *)a, len};
        ssize_t k = process_vm_readv(self, &local, 1, &remote, 1, 0);
        if (k <= 0)
            continue; /* unmapped meanwhile */
        for (size_t i = 0; i < (size_t)k / sizeof *buf; i++)
            consider(s, buf[i]);
    }
}

/* Private writable mappings: data of modules, heap, stacks, anonymous memory. Device
 * files (the driver's own mappings of the GPU) and reservations past 64 GiB are never read. */
static void scan_all(struct inv *s)
{
    FILE *f = fopen("/proc/self/maps", "re");
    uint64_t *buf = malloc(CHUNK);
    char line[4352];
    while (f && buf && fgets(line, sizeof line, f) && !s->incomplete) {
        unsigned long lo, hi;
        char perms[8];
        int path_at = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perms, &path_at) < 3)
            continue;
        const char *path = line + path_at;
        if (perms[0] != 'r' || perms[1] != 'w' || perms[3] != 'p')
            continue;
        if (!strncmp(path, "/dev/", 5) || !strncmp(path, "[vvar", 5) || !strncmp(path, "[vsyscall", 9))
            continue;
        if (hi - lo > MAPPING_MAX)
            continue; /* reserved address space (a sanitizer's shadow), never filled */
        scan_range(s, lo, hi, buf);
    }
    free(buf);
    if (f)
        fclose(f);
}

/* The thread has no context of its own: it borrows the primary context of the first
 * device that has one active (retained and released, never created). */
static int borrow_context(int *device)
{
    __typeof__(&cuDevicePrimaryCtxGetState) state = CULEAK_REAL(cuDevicePrimaryCtxGetState);
    __typeof__(&cuDevicePrimaryCtxRetain) retain = CULEAK_REAL(cuDevicePrimaryCtxRetain);
    __typeof__(&cuCtxSetCurrent) set = CULEAK_REAL(cuCtxSetCurrent);
    if (!state || !retain || !set)
        return -1;
    for (int dev = 0; dev < 64; dev++) {
        unsigned flags;
        int active = 0;
        CUcontext ctx;
        if (state(dev, &flags, &active) != CUDA_SUCCESS)
            return -1;
        if (active && retain(&ctx, dev) == CUDA_SUCCESS) {
            if (set(ctx) == CUDA_SUCCESS) {
                *device = dev;
                return 0;
            }
            __typeof__(&cuDevicePrimaryCtxRelease_v2) release = CULEAK_REAL(cuDevicePrimaryCtxRelease_v2);
            if (release)
                release(dev);
        }
    }
    return -1;
}

static void give_back_context(int device)
{
    __typeof__(&cuCtxSetCurrent) set = CULEAK_REAL(cuCtxSetCurrent);
    __typeof__(&cuDevicePrimaryCtxRelease_v2) release = CULEAK_REAL(cuDevicePrimaryCtxRelease_v2);
    if (set)
        set(NULL);
    if (release)
        release(device);
}

/* What the driver says the allocation at base is: its kind, and its device into *device
 * (left as it is when the driver does not say). */
static unsigned found_kind(uint64_t base, int *device)
{
    __typeof__(&cuPointerGetAttribute) attr = CULEAK_REAL(cuPointerGetAttribute);
    unsigned type = 0;
    int managed = 0, ordinal = -1;
    if (!attr)
        return CULEAK_KIND_DEVICE;
    if (attr(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)base) == CUDA_SUCCESS && ordinal >= 0)
        *device = ordinal;
    if (attr(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, (CUdeviceptr)base) == CUDA_SUCCESS && managed)
        return CULEAK_KIND_MANAGED;
    if (attr(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)base) == CUDA_SUCCESS && type == CU_MEMORYTYPE_HOST)
        return CULEAK_KIND_HOST_PINNED;
    return CULEAK_KIND_DEVICE;
}

void culeak_inventory_send(struct culeak_inventory_count *n)
{
    memset(n, 0, sizeof *n);
    struct inv s;
    memset(&s, 0, sizeof s);
    s.range = CULEAK_REAL(cuMemGetAddressRange_v2);
    int device = -1;
    if (!s.range || borrow_context(&device) != 0)
        return; /* no driver, or no context: nothing was allocated */
    s.deadline = culeak_now_ns() + SCAN_BUDGET_NS;
    scan_all(&s);
    struct culeak_ev e = {CULEAK_OP_ALLOC, CULEAK_API_BEFORE_ATTACH, CULEAK_KIND_DEVICE, device, 0, 0, 0, 0, 0};
    culeak_fill_ctx(&e);
    int ctx_device = e.device;
    for (size_t i = 0; i < s.n; i++) {
        e.size = s.v[i].size;
        e.addr = s.v[i].base;
        e.device = ctx_device;
        e.kind = found_kind(e.addr, &e.device);
        culeak_stream_event(&e, NULL, 0, 0);
        n->bytes += s.v[i].size;
    }
    give_back_context(device);
    n->found = s.n;
    n->incomplete = s.incomplete;
    free(s.seen);
    free(s.v);
}
