/* The functions include/culeak.h looks up: timeline marks and a program's own pool
 * allocations, recorded like CUDA events with the caller's stack. */
#include "shim.h"
#include "common/apis.h"
#include "common/frameworks.h"
#include "culeak.h"

CULEAK_EXPORT void culeak_mark_label(const char *label)
{
    if (!culeak_enter())
        return;
    culeak_stream_mark(label, 0);
    culeak_leave();
    culeak_holders_at_mark();
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

/* include/culeak.h's pool ids are the frameworks table's. */
_Static_assert(CULEAK_POOL_ID_PYTORCH == CULEAK_FRAMEWORK_PYTORCH && CULEAK_POOL_ID_CUPY == CULEAK_FRAMEWORK_CUPY,
               "culeak.h's pool ids");

/* A block of a framework's pool (pool: its row in common/frameworks.c), kind block with
 * the row's block APIs; alloc non-zero for a block handed out, zero for one given back.
 * -1 when the row reports no blocks (or there is no such row). */
CULEAK_EXPORT int culeak_report_pool_block(unsigned pool, int alloc, const void *ptr, size_t size)
{
    const struct culeak_framework *fw = culeak_framework(pool);
    if (!fw || !fw->block_api || !fw->block_free_api)
        return -1;
    if (!culeak_enter())
        return 0;
    struct culeak_ev e = {alloc ? CULEAK_OP_ALLOC : CULEAK_OP_FREE, alloc ? fw->block_api : fw->block_free_api,
                          CULEAK_KIND_BLOCK, -1, 0, size, (uint64_t)(uintptr_t)ptr, 0, 0};
    if (alloc || culeak_free_stacks)
        culeak_fill_ctx(&e);
    culeak_block_event(&e);
    return 0;
}

/* The first name of culeak_report_pool_block: CuPy's pool only (older sitecustomize.py). */
CULEAK_EXPORT void culeak_report_block(int alloc, const void *ptr, size_t size)
{
    culeak_report_pool_block(CULEAK_FRAMEWORK_CUPY, alloc, ptr, size);
}
