/* Internal state of the fake CUDA driver (a host-memory test double for libcuda.so.1).
 * Exported entry points live in fake_*.c; they only call the helpers declared here, never
 * each other, so a preloaded interposer never sees the fake talk to itself. */
#ifndef FAKECUDA_FAKE_H
#define FAKECUDA_FAKE_H

#define __CUDA_API_VERSION_INTERNAL 1 /* declare every versioned name (_v2, _ptsz, v1) like the real driver build */
#include "cuda/culeak_cuda.h"
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define FAKE_MAX_DEVICES 8
#define FAKE_DRIVER_VERSION 13000

enum fake_kind { /* what a tracked block is, for accounting and for who may free it */
    FK_DEVICE, FK_MANAGED, FK_HOST, FK_REGISTERED, FK_V1, FK_VMM_PHYS, FK_VA, FK_ARRAY,
    FK_IPC, FK_POOL_IMPORT, FK_EXTERNAL, FK_POOL, FK_GRAPH, FK_MAPPED,
};

struct fake_block {
    struct fake_block *next;
    uintptr_t addr;         /* address, or handle value for handle kinds */
    size_t size;
    enum fake_kind kind;
    int device;
    CUcontext ctx;          /* owning context; freed when it is destroyed/reset; NULL: none */
    void *mem;              /* host memory to release, NULL if none */
    size_t map_len;         /* non-zero: mem came from mmap */
    int refs;               /* VMM handles: cuMemCreate + retains + mappings */
    int fd;                 /* VMM physical memory: its memfd, else -1 */
    int accessible;         /* host code may touch [addr, addr+size) */
    uintptr_t aux;          /* mapping: its physical handle */
};

struct CUctx_st {
    struct CUctx_st *next_dead; /* destroyed contexts stay allocated (see cuCtxDestroy_v2) */
    int device;
    int primary;
    int alive;
    unsigned flags;
};

extern pthread_mutex_t fake_lock;
extern int fake_initialized;
extern int fake_device_count;
extern size_t fake_mem_bytes;

/* Fails with NOT_INITIALIZED before cuInit. */
#define FAKE_NEED_INIT()                                                                 \
    do {                                                                                 \
        if (!__atomic_load_n(&fake_initialized, __ATOMIC_ACQUIRE))                       \
            return CUDA_ERROR_NOT_INITIALIZED;                                           \
    } while (0)

int fake_valid_device(CUdevice dev);
CUcontext fake_current(void);          /* the calling thread's current context or NULL */
struct CUctx_st *fake_primary(int dev);

/* Memory accounting. fake_alloc_block returns NULL and sets *err when the device is full. */
struct fake_block *fake_alloc_block(enum fake_kind kind, int device, CUcontext ctx, size_t size,
                                    size_t align, CUresult *err);
struct fake_block *fake_track(enum fake_kind kind, int device, CUcontext ctx, uintptr_t addr,
                              size_t size, void *mem);
struct fake_block *fake_find(uintptr_t addr, enum fake_kind kind);      /* lock held */
struct fake_block *fake_find_any(uintptr_t addr);                       /* lock held; accessible, containing */
uintptr_t fake_new_handle(void);                                       /* lock held; unique opaque value */
void fake_release(struct fake_block *b);                               /* lock held; unlinks + frees */
int fake_free_addr(uintptr_t addr, enum fake_kind kind);               /* 0 ok, -1 unknown */
void fake_free_ctx(CUcontext ctx);                                     /* every block of ctx */
size_t fake_used(int device);                                          /* bytes counted on device */
void fake_log(const char *what, const char *api, uintptr_t addr, size_t size);

void *fake_proc_lookup(const char *name, int version, cuuint64_t flags, CUresult *res,
                       CUdriverProcAddressQueryResult *status);

#endif
