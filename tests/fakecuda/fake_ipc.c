/* Imported memory: CUDA IPC handles and external memory. Within one process the fake's
 * "import" is a snapshot copy at a new address (the real driver refuses same-process
 * opens; the shim only cares that an import is an allocation of its own). */
#include "fake.h"

#include <stdlib.h>
#include <string.h>

struct ipc_payload {
    uint64_t magic, addr, size;
};
#define IPC_MAGIC 0x66616b6569706321ull

CUresult cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
    FAKE_NEED_INIT();
    if (!pHandle)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = fake_find(dptr, FK_DEVICE);
    struct ipc_payload p = {IPC_MAGIC, dptr, b ? b->size : 0};
    pthread_mutex_unlock(&fake_lock);
    if (!b)
        return CUDA_ERROR_INVALID_VALUE;
    memset(pHandle, 0, sizeof *pHandle);
    memcpy(pHandle->reserved, &p, sizeof p);
    return CUDA_SUCCESS;
}

static CUresult ipc_open(CUdeviceptr *pdptr, CUipcMemHandle handle, const char *api)
{
    FAKE_NEED_INIT();
    CUcontext c = fake_current();
    if (!c || !c->alive)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct ipc_payload p;
    memcpy(&p, handle.reserved, sizeof p);
    if (!pdptr || p.magic != IPC_MAGIC || !p.size)
        return CUDA_ERROR_INVALID_VALUE;
    void *mem = calloc(1, p.size);
    if (!mem)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&fake_lock);
    struct fake_block *src = fake_find(p.addr, FK_DEVICE);
    if (src && src->size >= p.size)
        memcpy(mem, (void *)src->addr, p.size);
    struct fake_block *b = fake_track(FK_IPC, c->device, c, (uintptr_t)mem, p.size, mem);
    if (b)
        fake_log("alloc", api, b->addr, p.size);
    pthread_mutex_unlock(&fake_lock);
    if (!b) {
        free(mem);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *pdptr = (CUdeviceptr)mem;
    return CUDA_SUCCESS;
}

CUresult cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
    return ipc_open(pdptr, handle, "cuIpcOpenMemHandle");
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
    return ipc_open(pdptr, handle, "cuIpcOpenMemHandle_v2");
}

CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{
    FAKE_NEED_INIT();
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = fake_find(dptr, FK_IPC);
    if (b) {
        fake_log("free", "cuIpcCloseMemHandle", dptr, b->size);
        fake_release(b);
    }
    pthread_mutex_unlock(&fake_lock);
    return b ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuImportExternalMemory(CUexternalMemory *extMem_out, const CUDA_EXTERNAL_MEMORY_HANDLE_DESC *desc)
{
    FAKE_NEED_INIT();
    CUcontext c = fake_current();
    if (!c || !c->alive)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!extMem_out || !desc || !desc->size)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = fake_track(FK_EXTERNAL, c->device, c, fake_new_handle(), desc->size, NULL);
    if (b) {
        *extMem_out = (CUexternalMemory)b->addr;
        fake_log("alloc", "cuImportExternalMemory", b->addr, desc->size);
    }
    pthread_mutex_unlock(&fake_lock);
    return b ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult cuDestroyExternalMemory(CUexternalMemory extMem)
{
    FAKE_NEED_INIT();
    pthread_mutex_lock(&fake_lock);
    struct fake_block *b = fake_find((uintptr_t)extMem, FK_EXTERNAL);
    if (b) {
        fake_log("free", "cuDestroyExternalMemory", b->addr, b->size);
        fake_release(b);
    }
    pthread_mutex_unlock(&fake_lock);
    return b ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
