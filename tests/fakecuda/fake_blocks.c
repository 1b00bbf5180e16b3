/* The fake's bookkeeping: every live block, device accounting, the log and the counters. */
#include "fake.h"
#include "fakecuda.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static struct fake_block *blocks;
static size_t live_bytes, live_blocks;
static unsigned long n_alloc, n_free;
static size_t dev_used[FAKE_MAX_DEVICES];

static int holds_memory(enum fake_kind k)
{
    return k != FK_VA && k != FK_POOL && k != FK_IPC && k != FK_POOL_IMPORT && k != FK_EXTERNAL &&
           k != FK_GRAPH && k != FK_MAPPED;
}

static int counts_on_device(enum fake_kind k)
{
    return k == FK_DEVICE || k == FK_MANAGED || k == FK_V1 || k == FK_VMM_PHYS || k == FK_ARRAY;
}

size_t fake_used(int device) { return device >= 0 && device < FAKE_MAX_DEVICES ? dev_used[device] : 0; }

void fake_log(const char *what, const char *api, uintptr_t addr, size_t size)
{
    static int fd = -2;
    if (fd == -2) {
        const char *path = getenv("FAKECUDA_LOG");
        fd = path && *path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
    }
    if (fd < 0)
        return;
    char line[160];
    int n = snprintf(line, sizeof line, "%d %s %s 0x%lx %zu\n", (int)getpid(), what, api,
                     (unsigned long)addr, size);
    if (n > 0 && write(fd, line, (size_t)n) < 0) { /* one write per line: atomic with O_APPEND */
    }
}

struct fake_block *fake_track(enum fake_kind kind, int device, CUcontext ctx, uintptr_t addr,
                              size_t size, void *mem)
{
    struct fake_block *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->addr = addr;
    b->size = size;
    b->kind = kind;
    b->device = device;
    b->ctx = ctx;
    b->mem = mem;
    b->refs = 1;
    b->fd = -1;
    b->accessible = mem != NULL && kind != FK_VA && kind != FK_ARRAY;
    b->next = blocks;
    blocks = b;
    if (holds_memory(kind))
        live_bytes += size;
    if (counts_on_device(kind) && device >= 0 && device < FAKE_MAX_DEVICES)
        dev_used[device] += size;
    live_blocks++;
    n_alloc++;
    return b;
}

struct fake_block *fake_alloc_block(enum fake_kind kind, int device, CUcontext ctx, size_t size,
                                    size_t align, CUresult *err)
{
    if (counts_on_device(kind) && device >= 0 &&
        (size > fake_mem_bytes || dev_used[device] > fake_mem_bytes - size)) {
        *err = CUDA_ERROR_OUT_OF_MEMORY;
        return NULL;
    }
    void *mem;
    size_t map_len = 0;
    if (kind == FK_V1) { /* v1 entry points carry 32-bit pointers: memory below 2 GiB */
        map_len = size ? size : 1;
        mem = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
        if (mem == MAP_FAILED)
            mem = NULL;
    } else {
        size_t rounded = (size + align - 1) / align * align;
        mem = aligned_alloc(align, rounded ? rounded : align);
    }
    if (!mem) {
        *err = CUDA_ERROR_OUT_OF_MEMORY;
        return NULL;
    }
    struct fake_block *b = fake_track(kind, device, ctx, (uintptr_t)mem, size, mem);
    if (!b) {
        if (map_len)
            munmap(mem, map_len);
        else
            free(mem);
        *err = CUDA_ERROR_OUT_OF_MEMORY;
        return NULL;
    }
    b->map_len = map_len;
    *err = CUDA_SUCCESS;
    return b;
}

uintptr_t fake_new_handle(void)
{
    static uintptr_t next = 0x5a0000001000u; /* far from heap addresses, so never confused with them */
    return next += 0x1000;
}

struct fake_block *fake_find(uintptr_t addr, enum fake_kind kind)
{
    for (struct fake_block *b = blocks; b; b = b->next)
        if (b->addr == addr && b->kind == kind)
            return b;
    return NULL;
}

struct fake_block *fake_find_any(uintptr_t addr)
{
    for (struct fake_block *b = blocks; b; b = b->next)
        if (b->accessible && addr >= b->addr &&
            addr < b->addr + (b->size ? b->size : 1))
            return b;
    return NULL;
}

void fake_release(struct fake_block *b)
{
    for (struct fake_block **pp = &blocks; *pp; pp = &(*pp)->next) {
        if (*pp != b)
            continue;
        *pp = b->next;
        if (holds_memory(b->kind))
            live_bytes -= b->size;
        if (counts_on_device(b->kind) && b->device >= 0 && b->device < FAKE_MAX_DEVICES)
            dev_used[b->device] -= b->size;
        live_blocks--;
        n_free++;
        if (b->map_len)
            munmap(b->mem, b->map_len);
        else
            free(b->mem);
        if (b->fd >= 0)
            close(b->fd);
        free(b);
        return;
    }
}

int fake_free_addr(uintptr_t addr, enum fake_kind kind)
{
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = fake_find(addr, kind);
    if (b)
        fake_release(b);
    pthread_mutex_unlock(&fake_lock);
    return b ? 0 : -1;
}

void fake_free_ctx(CUcontext ctx)
{
    pthread_mutex_lock(&fake_lock);
    for (struct fake_block *b = blocks, *next; b; b = next) {
        next = b->next;
        if (b->ctx == ctx) {
            fake_log("free", "context-teardown", b->addr, b->size);
            fake_release(b);
        }
    }
    pthread_mutex_unlock(&fake_lock);
}

#define LOCKED_READ(type, var)                                                           \
    do {                                                                                 \
        pthread_mutex_lock(&fake_lock);                                                  \
        type v_ = (var);                                                                 \
        pthread_mutex_unlock(&fake_lock);                                                \
        return v_;                                                                       \
    } while (0)

size_t fakecuda_live_bytes(void) { LOCKED_READ(size_t, live_bytes); }
size_t fakecuda_live_blocks(void) { LOCKED_READ(size_t, live_blocks); }
unsigned long fakecuda_alloc_count(void) { LOCKED_READ(unsigned long, n_alloc); }
unsigned long fakecuda_free_count(void) { LOCKED_READ(unsigned long, n_free); }
