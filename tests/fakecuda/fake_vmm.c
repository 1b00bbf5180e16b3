/* Virtual memory management: physical memory is a memfd, address reservations are
 * PROT_NONE mappings, and cuMemMap maps the memfd over the reservation, so a mapped
 * range really is readable and writable at the returned address. */
#include "fake.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FAKE_GRANULARITY ((size_t)2 << 20)

CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                       CUmemAllocationGranularity_flags option)
{
    FAKE_NEED_INIT();
    if (!granularity || !prop)
        return CUDA_ERROR_INVALID_VALUE;
    *granularity = FAKE_GRANULARITY;
    return CUDA_SUCCESS;
}

/* Tracks a memfd of `size` bytes as a physical allocation (lock held). */
static CUresult track_phys(int fd, int device, size_t size, CUmemGenericAllocationHandle *handle,
                           const char *api)
{
    if (device >= 0 && (size > fake_mem_bytes || fake_used(device) > fake_mem_bytes - size)) {
        close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    struct fake_block *b = fake_track(FK_VMM_PHYS, device, NULL, fake_new_handle(), size, NULL);
    if (!b) {
        close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    b->fd = fd;
    *handle = b->addr;
    fake_log("alloc", api, b->addr, size);
    return CUDA_SUCCESS;
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                     unsigned long long flags)
{
    FAKE_NEED_INIT();
    if (!handle || !prop || !size || size % FAKE_GRANULARITY || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
        prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (!fake_valid_device(prop->location.id))
        return CUDA_ERROR_INVALID_DEVICE;
    int fd = memfd_create("fakecuda-vmm", MFD_CLOEXEC);
    if (fd < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (ftruncate(fd, (off_t)size) != 0) {
        close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&fake_lock);
    CUresult r = track_phys(fd, prop->location.id, size, handle, "cuMemCreate");
    pthread_mutex_unlock(&fake_lock);
    return r;
}

/* Drops one reference of a physical allocation; the memory goes with the last (lock held). */
static void phys_unref(struct fake_block *b, const char *api)
{
    if (--b->refs > 0)
        return;
    fake_log("free", api, b->addr, b->size);
    fake_release(b);
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    FAKE_NEED_INIT();
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = fake_find(handle, FK_VMM_PHYS);
    if (b)
        phys_unref(b, "cuMemRelease");
    pthread_mutex_unlock(&fake_lock);
    return b ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
    FAKE_NEED_INIT();
    if (!handle)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fake_lock);
    struct fake_block *m = fake_find((uintptr_t)addr, FK_MAPPED);
    struct fake_block *b = m ? fake_find(m->aux, FK_VMM_PHYS) : NULL;
    if (b) {
        b->refs++;
        *handle = b->addr;
    }
    pthread_mutex_unlock(&fake_lock);
    return b ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemExportToShareableHandle(void *shareableHandle, CUmemGenericAllocationHandle handle,
                                      CUmemAllocationHandleType handleType, unsigned long long flags)
{
    FAKE_NEED_INIT();
    if (!shareableHandle || handleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = fake_find(handle, FK_VMM_PHYS);
    int fd = b ? dup(b->fd) : -1;
    pthread_mutex_unlock(&fake_lock);
    if (fd < 0)
        return CUDA_ERROR_INVALID_VALUE;
    *(int *)shareableHandle = fd;
    return CUDA_SUCCESS;
}

CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *osHandle,
                                        CUmemAllocationHandleType shHandleType)
{
    FAKE_NEED_INIT();
    struct stat st;
    int fd = (int)(intptr_t)osHandle;
    if (!handle || shHandleType != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR || fstat(fd, &st) != 0)
        return CUDA_ERROR_INVALID_VALUE;
    int own = dup(fd); /* the caller keeps and closes its descriptor */
    if (own < 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fake_lock);
    /* imported memory belongs to the exporter: it does not count on this process's devices */
    CUresult r = track_phys(own, -1, (size_t)st.st_size, handle, "cuMemImportFromShareableHandle");
    pthread_mutex_unlock(&fake_lock);
    return r;
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags)
{
    FAKE_NEED_INIT();
    if (!ptr || !size || size % FAKE_GRANULARITY)
        return CUDA_ERROR_INVALID_VALUE;
    void *va = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (va == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = fake_track(FK_VA, -1, NULL, (uintptr_t)va, size, va);
    if (b) {
        b->map_len = size;
        fake_log("alloc", "cuMemAddressReserve", b->addr, size);
    }
    pthread_mutex_unlock(&fake_lock);
    if (!b) {
        munmap(va, size);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *ptr = (CUdeviceptr)va;
    return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    FAKE_NEED_INIT();
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = fake_find(ptr, FK_VA);
    int ok = b && b->size == size;
    if (ok) {
        fake_log("free", "cuMemAddressFree", ptr, size);
        fake_release(b);
    }
    pthread_mutex_unlock(&fake_lock);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The reservation containing [p, p+n), lock held. */
static struct fake_block *reservation_of(uintptr_t p, size_t n)
{
    struct fake_block *b;
    for (uintptr_t base = p;; base -= FAKE_GRANULARITY) {
        if ((b = fake_find(base, FK_VA)))
            return p + n <= b->addr + b->size ? b : NULL;
        if (base < FAKE_GRANULARITY)
            return NULL;
    }
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags)
{
    FAKE_NEED_INIT();
    if (!size || size % FAKE_GRANULARITY || ptr % FAKE_GRANULARITY)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&fake_lock);
    struct fake_block *phys = fake_find(handle, FK_VMM_PHYS);
    if (!phys || offset + size > phys->size || !reservation_of(ptr, size))
        r = CUDA_ERROR_INVALID_VALUE;
    else if (fake_find(ptr, FK_MAPPED))
        r = CUDA_ERROR_ALREADY_MAPPED;
    else if (mmap((void *)ptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, phys->fd,
                  (off_t)offset) == MAP_FAILED)
        r = CUDA_ERROR_OUT_OF_MEMORY;
    else {
        struct fake_block *m = fake_track(FK_MAPPED, phys->device, NULL, ptr, size, NULL);
        if (m) {
            m->aux = handle;
            m->accessible = 1;
            phys->refs++;
            fake_log("alloc", "cuMemMap", ptr, size);
        } else
            r = CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_unlock(&fake_lock);
    return r;
}

/* FAKECUDA_UNMAP_LINGER_MS: cuMemUnmap returns that long after the range is unmapped, so
 * another thread can map the range again while the unmap is still inside its call. */
static void unmap_linger(void)
{
    const char *v = getenv("FAKECUDA_UNMAP_LINGER_MS");
    long ms = v ? atol(v) : 0;
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    if (ms > 0)
        nanosleep(&ts, NULL);
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    FAKE_NEED_INIT();
    pthread_mutex_lock(&fake_lock);
    struct fake_block *m = fake_find(ptr, FK_MAPPED);
    int ok = m && m->size == size;
    if (ok) {
        struct fake_block *phys = fake_find(m->aux, FK_VMM_PHYS);
        /* back to a PROT_NONE reservation */
        mmap((void *)ptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
        fake_log("free", "cuMemUnmap", ptr, size);
        fake_release(m);
        if (phys)
            phys_unref(phys, "cuMemUnmap");
    }
    pthread_mutex_unlock(&fake_lock);
    if (ok)
        unmap_linger();
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    FAKE_NEED_INIT();
    if (!desc || !count)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fake_lock);
    struct fake_block *m = fake_find(ptr, FK_MAPPED);
    pthread_mutex_unlock(&fake_lock);
    return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
