/* The closed vocabularies shared by the shim and the console: what an event does
 * (op), which memory it concerns (kind) and which entry point made it (api).
 * Numbers are part of the stream format (man/culeak-stream.5): append, never renumber. */
#ifndef CULEAK_APIS_H
#define CULEAK_APIS_H

#include <stdint.h>

enum culeak_op {
    CULEAK_OP_ALLOC = 1,     /* memory (or a handle to it) came into existence */
    CULEAK_OP_FREE = 2,      /* it went away */
    CULEAK_OP_FREE_ALL = 3,  /* context destroy / primary context reset: every
                                allocation of `device` (and `ctx` when non-zero) ends */
    CULEAK_OP_RETAIN = 4,    /* an extra reference on a VMM physical handle */
    CULEAK_OP_TRIM = 5,      /* pool trim: informational */
    CULEAK_OP_CTX_CREATE = 6,/* a created (non-primary) context: addr = ctx, device */
    CULEAK_OP_COUNT
};

enum culeak_kind {
    CULEAK_KIND_NONE = 0,
    CULEAK_KIND_DEVICE = 1,          /* cuMemAlloc, pitch, async, from pool */
    CULEAK_KIND_MANAGED = 2,         /* cuMemAllocManaged */
    CULEAK_KIND_HOST_PINNED = 3,     /* cuMemAllocHost, cuMemHostAlloc */
    CULEAK_KIND_HOST_REGISTERED = 4, /* cuMemHostRegister: host memory made visible */
    CULEAK_KIND_VMM_PHYSICAL = 5,    /* cuMemCreate: addr is the generic allocation handle */
    CULEAK_KIND_VMM_MAPPED = 6,      /* cuMemMap: addr is the mapped VA, aux the handle */
    CULEAK_KIND_ADDRESS_RESERVE = 7, /* cuMemAddressReserve: address space, never memory */
    CULEAK_KIND_ARRAY = 8,           /* cuArrayCreate & co: addr is the CUarray */
    CULEAK_KIND_IPC = 9,             /* cuIpcOpenMemHandle, cuMemPoolImportPointer */
    CULEAK_KIND_EXTERNAL = 10,       /* cuImportExternalMemory */
    CULEAK_KIND_POOL = 11,           /* cuMemPoolCreate: addr is the pool, size 0 */
    CULEAK_KIND_GRAPH = 12,          /* cuGraphAddMemAllocNode */
    CULEAK_KIND_USER = 13,           /* culeak_alloc(): a program's own pool allocator */
    CULEAK_KIND_BLOCK = 14,          /* a block (tensor, array) a framework's pool hands out
                                        from its segments: never memory of its own */
    CULEAK_KIND_COUNT
};

/* X(enum suffix, name on the wire and in reports, op, kind) */
#define CULEAK_API_LIST(X)                                                        \
    X(UNKNOWN, "unknown", 0, CULEAK_KIND_NONE)                                    \
    X(CU_MEM_ALLOC, "cuMemAlloc_v2", CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE)         \
    X(CU_MEM_ALLOC_PITCH, "cuMemAllocPitch_v2", CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE) \
    X(CU_MEM_FREE, "cuMemFree_v2", CULEAK_OP_FREE, CULEAK_KIND_DEVICE)            \
    X(CU_MEM_ALLOC_MANAGED, "cuMemAllocManaged", CULEAK_OP_ALLOC, CULEAK_KIND_MANAGED) \
    X(CU_MEM_ALLOC_HOST, "cuMemAllocHost_v2", CULEAK_OP_ALLOC, CULEAK_KIND_HOST_PINNED) \
    X(CU_MEM_HOST_ALLOC, "cuMemHostAlloc", CULEAK_OP_ALLOC, CULEAK_KIND_HOST_PINNED) \
    X(CU_MEM_FREE_HOST, "cuMemFreeHost", CULEAK_OP_FREE, CULEAK_KIND_HOST_PINNED) \
    X(CU_MEM_HOST_REGISTER, "cuMemHostRegister_v2", CULEAK_OP_ALLOC, CULEAK_KIND_HOST_REGISTERED) \
    X(CU_MEM_HOST_UNREGISTER, "cuMemHostUnregister", CULEAK_OP_FREE, CULEAK_KIND_HOST_REGISTERED) \
    X(CU_MEM_ALLOC_ASYNC, "cuMemAllocAsync", CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE) \
    X(CU_MEM_ALLOC_ASYNC_PTSZ, "cuMemAllocAsync_ptsz", CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE) \
    X(CU_MEM_ALLOC_FROM_POOL_ASYNC, "cuMemAllocFromPoolAsync", CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE) \
    X(CU_MEM_ALLOC_FROM_POOL_ASYNC_PTSZ, "cuMemAllocFromPoolAsync_ptsz", CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE) \
    X(CU_MEM_FREE_ASYNC, "cuMemFreeAsync", CULEAK_OP_FREE, CULEAK_KIND_DEVICE)   \
    X(CU_MEM_FREE_ASYNC_PTSZ, "cuMemFreeAsync_ptsz", CULEAK_OP_FREE, CULEAK_KIND_DEVICE) \
    X(CU_MEM_POOL_CREATE, "cuMemPoolCreate", CULEAK_OP_ALLOC, CULEAK_KIND_POOL)   \
    X(CU_MEM_POOL_DESTROY, "cuMemPoolDestroy", CULEAK_OP_FREE, CULEAK_KIND_POOL)  \
    X(CU_MEM_POOL_TRIM_TO, "cuMemPoolTrimTo", CULEAK_OP_TRIM, CULEAK_KIND_POOL)   \
    X(CU_MEM_POOL_IMPORT_POINTER, "cuMemPoolImportPointer", CULEAK_OP_ALLOC, CULEAK_KIND_IPC) \
    X(CU_MEM_CREATE, "cuMemCreate", CULEAK_OP_ALLOC, CULEAK_KIND_VMM_PHYSICAL)   \
    X(CU_MEM_RELEASE, "cuMemRelease", CULEAK_OP_FREE, CULEAK_KIND_VMM_PHYSICAL)  \
    X(CU_MEM_RETAIN_ALLOCATION_HANDLE, "cuMemRetainAllocationHandle", CULEAK_OP_RETAIN, CULEAK_KIND_VMM_PHYSICAL) \
    X(CU_MEM_IMPORT_FROM_SHAREABLE_HANDLE, "cuMemImportFromShareableHandle", CULEAK_OP_ALLOC, CULEAK_KIND_VMM_PHYSICAL) \
    X(CU_MEM_MAP, "cuMemMap", CULEAK_OP_ALLOC, CULEAK_KIND_VMM_MAPPED)           \
    X(CU_MEM_UNMAP, "cuMemUnmap", CULEAK_OP_FREE, CULEAK_KIND_VMM_MAPPED)        \
    X(CU_MEM_ADDRESS_RESERVE, "cuMemAddressReserve", CULEAK_OP_ALLOC, CULEAK_KIND_ADDRESS_RESERVE) \
    X(CU_MEM_ADDRESS_FREE, "cuMemAddressFree", CULEAK_OP_FREE, CULEAK_KIND_ADDRESS_RESERVE) \
    X(CU_ARRAY_CREATE, "cuArrayCreate_v2", CULEAK_OP_ALLOC, CULEAK_KIND_ARRAY)   \
    X(CU_ARRAY_3D_CREATE, "cuArray3DCreate_v2", CULEAK_OP_ALLOC, CULEAK_KIND_ARRAY) \
    X(CU_ARRAY_DESTROY, "cuArrayDestroy", CULEAK_OP_FREE, CULEAK_KIND_ARRAY)     \
    X(CU_MIPMAPPED_ARRAY_CREATE, "cuMipmappedArrayCreate", CULEAK_OP_ALLOC, CULEAK_KIND_ARRAY) \
    X(CU_MIPMAPPED_ARRAY_DESTROY, "cuMipmappedArrayDestroy", CULEAK_OP_FREE, CULEAK_KIND_ARRAY) \
    X(CU_IPC_OPEN_MEM_HANDLE, "cuIpcOpenMemHandle_v2", CULEAK_OP_ALLOC, CULEAK_KIND_IPC) \
    X(CU_IPC_CLOSE_MEM_HANDLE, "cuIpcCloseMemHandle", CULEAK_OP_FREE, CULEAK_KIND_IPC) \
    X(CU_IMPORT_EXTERNAL_MEMORY, "cuImportExternalMemory", CULEAK_OP_ALLOC, CULEAK_KIND_EXTERNAL) \
    X(CU_DESTROY_EXTERNAL_MEMORY, "cuDestroyExternalMemory", CULEAK_OP_FREE, CULEAK_KIND_EXTERNAL) \
    X(CU_CTX_CREATE, "cuCtxCreate", CULEAK_OP_CTX_CREATE, CULEAK_KIND_NONE)       \
    X(CU_CTX_DESTROY, "cuCtxDestroy_v2", CULEAK_OP_FREE_ALL, CULEAK_KIND_NONE)    \
    X(CU_DEVICE_PRIMARY_CTX_RESET, "cuDevicePrimaryCtxReset_v2", CULEAK_OP_FREE_ALL, CULEAK_KIND_NONE) \
    X(CU_DEVICE_PRIMARY_CTX_RELEASE, "cuDevicePrimaryCtxRelease_v2", CULEAK_OP_FREE_ALL, CULEAK_KIND_NONE) \
    X(CU_GRAPH_ADD_MEM_ALLOC_NODE, "cuGraphAddMemAllocNode", CULEAK_OP_ALLOC, CULEAK_KIND_GRAPH) \
    X(CU_GRAPH_ADD_MEM_FREE_NODE, "cuGraphAddMemFreeNode", CULEAK_OP_FREE, CULEAK_KIND_GRAPH) \
    X(CUDA_MALLOC, "cudaMalloc", CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE)             \
    X(CUDA_MALLOC_PITCH, "cudaMallocPitch", CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE)  \
    X(CUDA_MALLOC_3D, "cudaMalloc3D", CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE)        \
    X(CUDA_FREE, "cudaFree", CULEAK_OP_FREE, CULEAK_KIND_DEVICE)                  \
    X(CUDA_MALLOC_MANAGED, "cudaMallocManaged", CULEAK_OP_ALLOC, CULEAK_KIND_MANAGED) \
    X(CUDA_MALLOC_HOST, "cudaMallocHost", CULEAK_OP_ALLOC, CULEAK_KIND_HOST_PINNED) \
    X(CUDA_HOST_ALLOC, "cudaHostAlloc", CULEAK_OP_ALLOC, CULEAK_KIND_HOST_PINNED) \
    X(CUDA_FREE_HOST, "cudaFreeHost", CULEAK_OP_FREE, CULEAK_KIND_HOST_PINNED)    \
    X(CUDA_HOST_REGISTER, "cudaHostRegister", CULEAK_OP_ALLOC, CULEAK_KIND_HOST_REGISTERED) \
    X(CUDA_HOST_UNREGISTER, "cudaHostUnregister", CULEAK_OP_FREE, CULEAK_KIND_HOST_REGISTERED) \
    X(CUDA_MALLOC_ASYNC, "cudaMallocAsync", CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE)  \
    X(CUDA_MALLOC_FROM_POOL_ASYNC, "cudaMallocFromPoolAsync", CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE) \
    X(CUDA_FREE_ASYNC, "cudaFreeAsync", CULEAK_OP_FREE, CULEAK_KIND_DEVICE)       \
    X(CUDA_MALLOC_ARRAY, "cudaMallocArray", CULEAK_OP_ALLOC, CULEAK_KIND_ARRAY)   \
    X(CUDA_MALLOC_3D_ARRAY, "cudaMalloc3DArray", CULEAK_OP_ALLOC, CULEAK_KIND_ARRAY) \
    X(CUDA_FREE_ARRAY, "cudaFreeArray", CULEAK_OP_FREE, CULEAK_KIND_ARRAY)        \
    X(CUDA_DEVICE_RESET, "cudaDeviceReset", CULEAK_OP_FREE_ALL, CULEAK_KIND_NONE) \
    X(USER_ALLOC, "culeak_alloc", CULEAK_OP_ALLOC, CULEAK_KIND_USER)              \
    X(USER_FREE, "culeak_free", CULEAK_OP_FREE, CULEAK_KIND_USER)                 \
    X(TORCH_BLOCK_ALLOC, "torch.alloc", CULEAK_OP_ALLOC, CULEAK_KIND_BLOCK)       \
    X(TORCH_BLOCK_FREE, "torch.free", CULEAK_OP_FREE, CULEAK_KIND_BLOCK)          \
    X(CUPY_BLOCK_ALLOC, "cupy.alloc", CULEAK_OP_ALLOC, CULEAK_KIND_BLOCK)         \
    X(CUPY_BLOCK_FREE, "cupy.free", CULEAK_OP_FREE, CULEAK_KIND_BLOCK)           \
    X(BEFORE_ATTACH, "before-attach", CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE)      \
    X(CUDA_MALLOC_MIPMAPPED_ARRAY, "cudaMallocMipmappedArray", CULEAK_OP_ALLOC, CULEAK_KIND_ARRAY) \
    X(CUDA_FREE_MIPMAPPED_ARRAY, "cudaFreeMipmappedArray", CULEAK_OP_FREE, CULEAK_KIND_ARRAY)

enum culeak_api {
#define CULEAK_API_ENUM(id, name, op, kind) CULEAK_API_##id,
    CULEAK_API_LIST(CULEAK_API_ENUM)
#undef CULEAK_API_ENUM
    CULEAK_API_COUNT
};

/* Each API's op and kind as constants (CULEAK_API_OP_CU_MEM_ALLOC): what its wrapper
 * records, read from the one table above. */
enum culeak_api_op {
#define CULEAK_API_OP_ENUM(id, name, op, kind) CULEAK_API_OP_##id = op,
    CULEAK_API_LIST(CULEAK_API_OP_ENUM)
#undef CULEAK_API_OP_ENUM
};
enum culeak_api_kind {
#define CULEAK_API_KIND_ENUM(id, name, op, kind) CULEAK_API_KIND_##id = kind,
    CULEAK_API_LIST(CULEAK_API_KIND_ENUM)
#undef CULEAK_API_KIND_ENUM
};

const char *culeak_api_name(unsigned api);     /* "unknown" outside the table */
const char *culeak_op_name(unsigned op);       /* "alloc", "free", "free_all", ... */
const char *culeak_kind_name(unsigned kind);   /* "device", "managed", "pinned", ... */
int culeak_kind_by_name(const char *name);     /* -1 when unknown */
/* Kinds shown by default: memory (not address space, pool objects or handles) and the
 * blocks pools hand out of it. */
int culeak_kind_is_memory(unsigned kind);

#endif
