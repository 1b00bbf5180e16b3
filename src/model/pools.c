/* Tensor tracking in PyTorch's words. Where a process reports a pool's blocks (its
 * tensors, kind block, with their lines), the segments that pool took from the driver are
 * the same memory seen from below: listing them at their call site too would show one
 * growth twice. They are the pool's own row instead ("pytorch caching allocator:
 * reserved"), and totals read as torch.cuda.memory_allocated() (live blocks) and
 * memory_reserved() (live segments), plus the memory outside the pools. A process
 * without block events (--no-pool, tracking off, a plain CUDA program) is left as it is. */
#include "model_internal.h"

#include <stdio.h>
#include <string.h>

/* Addresses of no module that no program allocates from (above user space): the sites
 * standing for the pools. */
#define POOL_SITE_KEY 0x7fffffffffffff00ull

const char *model_pool_name(enum model_cache c)
{
    const struct culeak_framework *f = culeak_framework(c);
    return f ? f->pool : "caching allocator";
}

void pools_on_block(struct process *p, unsigned api)
{
    for (unsigned c = 1; c < CULEAK_FRAMEWORK_COUNT; c++)
        if (culeak_framework(c)->block_api == api)
            p->pools_tracked |= 1u << c;
}

enum model_cache unit_pool(struct model *m, int proc, struct unit *u)
{
    const struct process *p = model_proc(m, proc);
    if (!p || !p->pools_tracked || !model_kind_is_device_memory(u->kind))
        return MODEL_CACHE_NONE;
    enum model_cache c = unit_cache(m, proc, u);
    return (unsigned)c < MODEL_POOLS && (p->pools_tracked >> c & 1) ? c : MODEL_CACHE_NONE;
}

enum model_cache model_stack_allocator(struct model *m, int proc, uint64_t stack, unsigned kind)
{
    struct process *p = model_proc(m, proc);
    uint32_t u = p ? u64map_get(&p->unit_index, stack << 5 | kind) : UINT32_MAX;
    if (u == UINT32_MAX)
        return MODEL_CACHE_NONE;
    if (kind == CULEAK_KIND_BLOCK) /* blocks come from the pool that reports them */
        return p->pools_tracked ? (enum model_cache)__builtin_ctz(p->pools_tracked) : MODEL_CACHE_NONE;
    return unit_cache(m, proc, &p->units[u]);
}

/* The site of a pool's row: named at once, and its own group under every grouping. */
static uint32_t pool_site(struct model *m, enum model_cache pool)
{
    if (m->pool_sites[pool])
        return m->pool_sites[pool] - 1;
    uint32_t id = model_site_new(m, POOL_SITE_KEY | (uint64_t)pool);
    if (id == 0)
        return 0;
    struct site *s = &m->sites[id];
    char buf[128];
    int n = snprintf(buf, sizeof buf, "%s: reserved", model_pool_name(pool));
    s->text = strpool_intern(&m->strings, buf, (size_t)n);
    if (!s->text)
        return 0;
    if (!s->symbolized) {
        s->symbolized = 1;
        m->nnamed++;
    }
    m->site_names[id] = (struct site_name){.text = s->text, .module = 0, .symbolized = 1};
    for (int g = MODEL_GROUP_FUNCTION; g <= MODEL_GROUP_MODULE; g++) {
        uint32_t k = strpool_id(&m->group_keys[g], s->text, strlen(s->text));
        s->group_id[g] = k == UINT32_MAX ? 0 : k;
    }
    m->pool_sites[pool] = id + 1;
    model_changed(m);
    return id;
}

uint32_t pool_row_id(struct model *m, enum model_cache pool, enum model_group g)
{
    uint32_t site = pool_site(m, pool);
    if (g != MODEL_GROUP_STACK)
        return site_group_id(m, site, g);
    uint32_t id = stack_row_id(m, 0xffffffffull << 32 | (uint64_t)pool); /* no process has this index */
    return id == UINT32_MAX ? 0 : id;
}

void pool_describe(struct model *m, enum model_cache pool, struct model_row *r)
{
    r->text = m->sites[pool_site(m, pool)].text;
    r->module = model_cache_name(pool);
    r->function = r->file = r->via = NULL;
    r->line = 0;
    r->named = 1;
    r->proc = -1;
    r->pool = pool;
}

void model_memory_add(struct model *m, int proc, struct unit *u, uint64_t bytes, uint64_t count,
                      struct model_memory *mm)
{
    if (!culeak_kind_is_memory(u->kind))
        return;
    if (u->kind == CULEAK_KIND_BLOCK) {
        mm->allocated_bytes += bytes;
        mm->allocated_blocks += count;
    } else if (unit_pool(m, proc, u) != MODEL_CACHE_NONE) {
        mm->reserved_bytes += bytes;
        mm->reserved_segments += count;
    } else {
        mm->other_bytes += bytes;
        mm->other_count += count;
    }
}

void model_memory_now(struct model *m, int proc, struct model_memory *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < m->nprocs; i++)
        if (proc == MODEL_ALL || proc == i)
            out->pools |= m->procs[i]->pools_tracked;
    if (!out->pools)
        return;
    for (int i = 0; i < m->nprocs; i++) {
        if (proc != MODEL_ALL && proc != i)
            continue;
        struct process *p = m->procs[i];
        for (size_t k = 0; k < p->nunits; k++)
            model_memory_add(m, i, &p->units[k], p->units[k].live_bytes, p->units[k].live_count, out);
    }
}
