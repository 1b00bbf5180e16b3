/* Linear device, managed, pinned-host and registered memory; copies and memset. */
#include "fake.h"

#include <string.h>

#define FAKE_ALIGN 256
#define FAKE_PITCH 512

/* Returns the current context or leaves the calling function with the right error. */
#define FAKE_NEED_CTX(c)                                                                 \
    FAKE_NEED_INIT();                                                                    \
    CUcontext c = fake_current();                                                        \
    if (!c || !c->alive)                                                                 \
        return CUDA_ERROR_INVALID_CONTEXT

static CUresult alloc_in(CUcontext c, enum fake_kind kind, const char *api, size_t size,
                         uintptr_t *out)
{
    if (!size)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult err;
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = fake_alloc_block(kind, c->device, c, size, FAKE_ALIGN, &err);
    if (b) {
        *out = b->addr;
        fake_log("alloc", api, b->addr, size);
    }
    pthread_mutex_unlock(&fake_lock);
    return err;
}

static CUresult free_kinds(uintptr_t addr, const char *api, const enum fake_kind *kinds, int n)
{
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = NULL;
    for (int i = 0; i < n && !b; i++)
        b = fake_find(addr, kinds[i]);
    if (b) {
        fake_log("free", api, addr, b->size);
        fake_release(b);
    }
    pthread_mutex_unlock(&fake_lock);
    return b ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static const enum fake_kind device_kinds[] = {FK_DEVICE, FK_MANAGED, FK_POOL_IMPORT};

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    FAKE_NEED_CTX(c);
    if (!dptr)
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t a;
    CUresult r = alloc_in(c, FK_DEVICE, "cuMemAlloc_v2", bytesize, &a);
    if (r == CUDA_SUCCESS)
        *dptr = a;
    return r;
}

CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    FAKE_NEED_CTX(c);
    if (!dptr)
        return CUDA_SUCCESS; /* like the real driver: a no-op that only needs a context */
    return free_kinds(dptr, "cuMemFree_v2", device_kinds, 3);
}

static CUresult pitch_alloc(CUcontext c, uintptr_t *a, size_t *pitch, size_t w, size_t h, unsigned elem,
                            enum fake_kind kind, const char *api)
{
    if (!w || !h || (elem != 4 && elem != 8 && elem != 16))
        return CUDA_ERROR_INVALID_VALUE;
    *pitch = (w + FAKE_PITCH - 1) / FAKE_PITCH * FAKE_PITCH;
    return alloc_in(c, kind, api, *pitch * h, a);
}

CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                            unsigned int ElementSizeBytes)
{
    FAKE_NEED_CTX(c);
    if (!dptr || !pPitch)
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t a;
    size_t pitch;
    CUresult r = pitch_alloc(c, &a, &pitch, WidthInBytes, Height, ElementSizeBytes, FK_DEVICE,
                             "cuMemAllocPitch_v2");
    if (r == CUDA_SUCCESS) {
        *dptr = a;
        *pPitch = pitch;
    }
    return r;
}

/* ---- the v1 (32-bit) entry points, distinct functions as in the real driver ---- */

CUresult cuMemAlloc(CUdeviceptr_v1 *dptr, unsigned int bytesize)
{
    FAKE_NEED_CTX(c);
    if (!dptr)
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t a;
    CUresult r = alloc_in(c, FK_V1, "cuMemAlloc", bytesize, &a);
    if (r == CUDA_SUCCESS)
        *dptr = (CUdeviceptr_v1)a;
    return r;
}

CUresult cuMemAllocPitch(CUdeviceptr_v1 *dptr, unsigned int *pPitch, unsigned int WidthInBytes,
                         unsigned int Height, unsigned int ElementSizeBytes)
{
    FAKE_NEED_CTX(c);
    if (!dptr || !pPitch)
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t a;
    size_t pitch;
    CUresult r = pitch_alloc(c, &a, &pitch, WidthInBytes, Height, ElementSizeBytes, FK_V1, "cuMemAllocPitch");
    if (r == CUDA_SUCCESS) {
        *dptr = (CUdeviceptr_v1)a;
        *pPitch = (unsigned int)pitch;
    }
    return r;
}

CUresult cuMemFree(CUdeviceptr_v1 dptr)
{
    FAKE_NEED_CTX(c);
    static const enum fake_kind v1[] = {FK_V1};
    return dptr ? free_kinds(dptr, "cuMemFree", v1, 1) : CUDA_SUCCESS;
}

CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    FAKE_NEED_CTX(c);
    if (!dptr || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t a;
    CUresult r = alloc_in(c, FK_MANAGED, "cuMemAllocManaged", bytesize, &a);
    if (r == CUDA_SUCCESS)
        *dptr = a;
    return r;
}

/* ---- pinned and registered host memory ---- */

static CUresult host_alloc(void **pp, size_t size, const char *api)
{
    FAKE_NEED_CTX(c);
    if (!pp)
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t a;
    CUresult r = alloc_in(c, FK_HOST, api, size, &a);
    if (r == CUDA_SUCCESS)
        *pp = (void *)a;
    return r;
}

CUresult cuMemAllocHost_v2(void **pp, size_t bytesize) { return host_alloc(pp, bytesize, "cuMemAllocHost_v2"); }
CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags) { return host_alloc(pp, bytesize, "cuMemHostAlloc"); }

CUresult cuMemFreeHost(void *p)
{
    FAKE_NEED_CTX(c);
    static const enum fake_kind host[] = {FK_HOST};
    return free_kinds((uintptr_t)p, "cuMemFreeHost", host, 1);
}

CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int Flags)
{
    FAKE_NEED_CTX(c);
    if (!p || !bytesize)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&fake_lock);
    if (fake_find((uintptr_t)p, FK_REGISTERED))
        r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    else if (!fake_track(FK_REGISTERED, c->device, c, (uintptr_t)p, bytesize, NULL))
        r = CUDA_ERROR_OUT_OF_MEMORY;
    else
        fake_log("alloc", "cuMemHostRegister_v2", (uintptr_t)p, bytesize);
    pthread_mutex_unlock(&fake_lock);
    return r;
}

CUresult cuMemHostUnregister(void *p)
{
    FAKE_NEED_CTX(c);
    static const enum fake_kind reg[] = {FK_REGISTERED};
    return free_kinds((uintptr_t)p, "cuMemHostUnregister", reg, 1) == CUDA_SUCCESS
               ? CUDA_SUCCESS
               : CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
}

/* ---- copies: every device pointer must lie inside a live block ---- */

static int in_block(uintptr_t a, size_t n)
{
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = fake_find_any(a);
    int ok = b && a + n <= b->addr + b->size;
    pthread_mutex_unlock(&fake_lock);
    return ok;
}

static CUresult htod(CUdeviceptr dst, const void *src, size_t n)
{
    FAKE_NEED_CTX(c);
    if (!in_block(dst, n) || (n && !src))
        return CUDA_ERROR_INVALID_VALUE;
    memcpy((void *)dst, src, n);
    return CUDA_SUCCESS;
}

static CUresult dtoh(void *dst, CUdeviceptr src, size_t n)
{
    FAKE_NEED_CTX(c);
    if (!in_block(src, n) || (n && !dst))
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(dst, (const void *)src, n);
    return CUDA_SUCCESS;
}

static CUresult memset8(CUdeviceptr dst, unsigned char v, size_t n)
{
    FAKE_NEED_CTX(c);
    if (!in_block(dst, n))
        return CUDA_ERROR_INVALID_VALUE;
    memset((void *)dst, v, n);
    return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { return htod(d, s, n); }
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr d, const void *s, size_t n) { return htod(d, s, n); }
CUresult cuMemcpyHtoD(CUdeviceptr_v1 d, const void *s, unsigned int n) { return htod(d, s, n); }
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { return dtoh(d, s, n); }
CUresult cuMemcpyDtoH_v2_ptds(void *d, CUdeviceptr s, size_t n) { return dtoh(d, s, n); }
CUresult cuMemcpyDtoH(void *d, CUdeviceptr_v1 s, unsigned int n) { return dtoh(d, s, n); }
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { return memset8(d, v, n); }
CUresult cuMemsetD8_v2_ptds(CUdeviceptr d, unsigned char v, size_t n) { return memset8(d, v, n); }

CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    FAKE_NEED_CTX(c);
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = fake_find_any(dptr);
    if (b) {
        if (pbase)
            *pbase = b->addr;
        if (psize)
            *psize = b->size;
    }
    pthread_mutex_unlock(&fake_lock);
    return b ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

/* The attributes culeak asks (the kind and device of what an attach finds). */
CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    FAKE_NEED_CTX(c);
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = fake_find_any(ptr);
    CUresult rc = b ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    if (b && attribute == CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
        *(unsigned *)data = b->kind == FK_HOST || b->kind == FK_REGISTERED ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    else if (b && attribute == CU_POINTER_ATTRIBUTE_IS_MANAGED)
        *(int *)data = b->kind == FK_MANAGED;
    else if (b && attribute == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
        *(int *)data = b->device;
    else if (b)
        rc = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_unlock(&fake_lock);
    return rc;
}

CUresult cuMemAllocHost(void **pp, unsigned int bytesize) { return host_alloc(pp, bytesize, "cuMemAllocHost"); }
CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags) { return cuMemHostRegister_v2(p, bytesize, Flags); }
CUresult cuMemsetD8(CUdeviceptr_v1 d, unsigned char v, unsigned int n) { return memset8(d, v, n); }
