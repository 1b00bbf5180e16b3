/* The functions include/culeak.h looks up: timeline marks and a program's own pool
 * allocations, recorded like CUDA events with the caller's stack. */
#include "shim.h"
#include "common/apis.h"

CULEAK_EXPORT void culeak_mark_label(const char *label)
{
    if (!culeak_enter())
        return;
    culeak_stream_mark(label, 0);
    culeak_leave();
}

CULEAK_EXPORT void culeak_report_alloc(const void *ptr, size_t size)
{
    if (!culeak_enter())
        return;
    struct culeak_ev e = {CULEAK_OP_ALLOC, CULEAK_API_USER_ALLOC, CULEAK_KIND_USER, -1, 0, size,
                          (uint64_t)(uintptr_t)ptr, 0, 0};
    culeak_fill_ctx(&e);
    culeak_after(&e);
}

CULEAK_EXPORT void culeak_report_free(const void *ptr)
{
    if (!culeak_enter())
        return;
    struct culeak_ev e = {CULEAK_OP_FREE, CULEAK_API_USER_FREE, CULEAK_KIND_USER, -1, 0, 0,
                          (uint64_t)(uintptr_t)ptr, 0, 0};
    culeak_fill_ctx(&e);
    culeak_free_begin(&e);
    culeak_free_end(&e);
}

/* A block of CuPy's memory pool (python/sitecustomize.py's MemoryHook): kind block, like
 * PyTorch's; alloc non-zero for a block handed out, zero for one given back. */
CULEAK_EXPORT void culeak_report_block(int alloc, const void *ptr, size_t size)
{
    if (!culeak_enter())
        return;
    struct culeak_ev e = {alloc ? CULEAK_OP_ALLOC : CULEAK_OP_FREE,
                          alloc ? CULEAK_API_CUPY_BLOCK_ALLOC : CULEAK_API_CUPY_BLOCK_FREE, CULEAK_KIND_BLOCK, -1,
                          0, size, (uint64_t)(uintptr_t)ptr, 0, 0};
    if (alloc || culeak_free_stacks)
        culeak_fill_ctx(&e);
    culeak_block_event(&e);
}
