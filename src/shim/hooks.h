/* The table of entry points the shim interposes: one row per exported, versioned name.
 * The dlsym wrapper and the cuGetProcAddress wrapper share it: a row maps the real
 * function (found by name in the driver, or by pointer identity from cuGetProcAddress)
 * to the shim's wrapper of the same ABI. */
#ifndef CULEAK_HOOKS_H
#define CULEAK_HOOKS_H

/* Driver entry points with a wrapper. */
#define CULEAK_DRIVER_HOOKS(X)                                                          \
    X(cuGetProcAddress) X(cuGetProcAddress_v2)                                          \
    X(cuMemAlloc_v2) X(cuMemAllocPitch_v2) X(cuMemFree_v2) X(cuMemAllocManaged)         \
    X(cuMemAllocHost_v2) X(cuMemHostAlloc) X(cuMemFreeHost)                             \
    X(cuMemHostRegister_v2) X(cuMemHostUnregister)                                      \
    X(cuMemAllocAsync) X(cuMemAllocAsync_ptsz)                                          \
    X(cuMemAllocFromPoolAsync) X(cuMemAllocFromPoolAsync_ptsz)                          \
    X(cuMemFreeAsync) X(cuMemFreeAsync_ptsz)                                            \
    X(cuMemPoolCreate) X(cuMemPoolDestroy) X(cuMemPoolTrimTo) X(cuMemPoolImportPointer) \
    X(cuMemCreate) X(cuMemRelease) X(cuMemRetainAllocationHandle)                       \
    X(cuMemImportFromShareableHandle) X(cuMemMap) X(cuMemUnmap)                         \
    X(cuMemAddressReserve) X(cuMemAddressFree)                                          \
    X(cuArrayCreate_v2) X(cuArray3DCreate_v2) X(cuArrayDestroy)                         \
    X(cuMipmappedArrayCreate) X(cuMipmappedArrayDestroy)                                \
    X(cuIpcOpenMemHandle_v2) X(cuIpcCloseMemHandle)                                     \
    X(cuImportExternalMemory) X(cuDestroyExternalMemory)                                \
    X(cuGraphAddMemAllocNode) X(cuGraphAddMemFreeNode)                                  \
    X(cuCtxCreate_v2) X(cuCtxCreate_v3) X(cuCtxCreate_v4) X(cuCtxDestroy_v2)            \
    X(cuDevicePrimaryCtxReset_v2) X(cuDevicePrimaryCtxRelease_v2)

/* Driver entry points the shim only calls (to describe an event). */
#define CULEAK_DRIVER_PLAIN(X)                                                          \
    X(cuCtxGetCurrent) X(cuCtxGetDevice) X(cuCtxGetDevice_v2)                           \
    X(cuDevicePrimaryCtxGetState) X(cuMemGetAddressRange_v2) X(cuMemGetInfo_v2)       \
    X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuPointerGetAttribute)

/* Runtime entry points of a shared libcudart. */
#define CULEAK_RUNTIME_HOOKS(X)                                                         \
    X(cudaMalloc) X(cudaFree) X(cudaMallocManaged) X(cudaMallocHost) X(cudaHostAlloc)   \
    X(cudaFreeHost) X(cudaMallocPitch) X(cudaMalloc3D) X(cudaMallocAsync)               \
    X(cudaMallocFromPoolAsync) X(cudaFreeAsync) X(cudaHostRegister)                     \
    X(cudaHostUnregister) X(cudaMallocArray) X(cudaMalloc3DArray) X(cudaFreeArray)      \
    X(cudaMallocMipmappedArray) X(cudaFreeMipmappedArray) X(cudaDeviceReset)

enum culeak_row_id {
#define CULEAK_ROW_ENUM(fn) CULEAK_ROW_##fn,
    CULEAK_DRIVER_HOOKS(CULEAK_ROW_ENUM)
    CULEAK_DRIVER_PLAIN(CULEAK_ROW_ENUM)
    CULEAK_RUNTIME_HOOKS(CULEAK_ROW_ENUM)
#undef CULEAK_ROW_ENUM
    CULEAK_ROW_COUNT
};

#define CULEAK_FIRST_PLAIN CULEAK_ROW_cuCtxGetCurrent
#define CULEAK_FIRST_RUNTIME CULEAK_ROW_cudaMalloc

struct culeak_row {
    const char *name;
    void *hook;   /* NULL for plain rows */
    void *real;   /* atomic; resolved once */
    void *via;    /* atomic: another tool's wrapper of real, handed out by the dlsym
                   * preloaded after the shim's; the hook calls it instead (NULL: none) */
};

extern struct culeak_row culeak_rows[CULEAK_ROW_COUNT];

/* The real function of a row, resolved on first use; NULL when it cannot be found.
 * Resolved rows are read inline: the wrappers ask for one to three rows per call. */
void *culeak_real_resolve(enum culeak_row_id id);
__attribute__((no_sanitize("address", "undefined"))) static inline void *culeak_real(enum culeak_row_id id)
{
    void *p = __atomic_load_n(&culeak_rows[id].via, __ATOMIC_ACQUIRE);
    if (!p)
        p = __atomic_load_n(&culeak_rows[id].real, __ATOMIC_ACQUIRE);
    return p ? p : culeak_real_resolve(id);
}

#define CULEAK_REAL(fn) ((__typeof__(&fn))culeak_real(CULEAK_ROW_##fn))

/* The event a wrapper records: its API's op and kind come from common/apis.h's table, so
 * a wrapper names only its API (EV(CU_MEM_ALLOC)). */
#define EV(api) {CULEAK_API_OP_##api, CULEAK_API_##api, CULEAK_API_KIND_##api, -1, 0, 0, 0, 0, 0}

#endif
