/* CUDA arrays: opaque handles backed by host memory of the descriptor's size. */
#include "fake.h"

#include <stdlib.h>

static size_t format_bytes(CUarray_format f)
{
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
        return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
        return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
        return 4;
    default:
        return 0;
    }
}

static size_t dim(size_t v) { return v ? v : 1; }

/* width x height x depth elements; 0 when the descriptor is invalid */
static size_t array_bytes(size_t w, size_t h, size_t d, CUarray_format f, unsigned ch)
{
    size_t e = format_bytes(f);
    if (!w || !e || (ch != 1 && ch != 2 && ch != 4))
        return 0;
    return w * dim(h) * dim(d) * e * ch;
}

/* is_mipmap goes into aux so the two destroy calls accept only their own handles */
static CUresult array_new(void **handle, size_t size, int is_mipmap, const char *api)
{
    FAKE_NEED_INIT();
    CUcontext c = fake_current();
    if (!c || !c->alive)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!handle || !size)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult err;
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = fake_alloc_block(FK_ARRAY, c->device, c, size, 256, &err);
    if (b) {
        b->aux = (uintptr_t)is_mipmap;
        *handle = (void *)b->addr;
        fake_log("alloc", api, b->addr, size);
    }
    pthread_mutex_unlock(&fake_lock);
    return err;
}

static CUresult array_free(void *handle, int is_mipmap, const char *api)
{
    FAKE_NEED_INIT();
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = fake_find((uintptr_t)handle, FK_ARRAY);
    int ok = b && b->aux == (uintptr_t)is_mipmap;
    if (ok) {
        fake_log("free", api, b->addr, b->size);
        fake_release(b);
    }
    pthread_mutex_unlock(&fake_lock);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *d)
{
    size_t n = d ? array_bytes(d->Width, d->Height, 1, d->Format, d->NumChannels) : 0;
    return array_new((void **)pHandle, n, 0, "cuArrayCreate_v2");
}

CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    size_t n = d ? array_bytes(d->Width, d->Height, d->Depth, d->Format, d->NumChannels) : 0;
    return array_new((void **)pHandle, n, 0, "cuArray3DCreate_v2");
}

CUresult cuArrayDestroy(CUarray hArray) { return array_free(hArray, 0, "cuArrayDestroy"); }

CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d,
                                unsigned int numMipmapLevels)
{
    size_t n = 0;
    if (d && numMipmapLevels) {
        size_t w = d->Width, h = d->Height, z = d->Depth;
        for (unsigned l = 0; l < numMipmapLevels; l++) { /* each level halves every extent */
            n += array_bytes(w, h, z, d->Format, d->NumChannels);
            w = w > 1 ? w / 2 : 1;
            h = h > 1 ? h / 2 : h;
            z = z > 1 ? z / 2 : z;
        }
    }
    return array_new((void **)pHandle, n, 1, "cuMipmappedArrayCreate");
}

CUresult cuMipmappedArrayDestroy(CUmipmappedArray h) { return array_free(h, 1, "cuMipmappedArrayDestroy"); }
