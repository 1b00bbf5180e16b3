/* Snapshot baselines of a built table and per-stack live totals, for the console. */
#include "view_support.h"
#include "model_internal.h"

#include <string.h>

int model_table_baseline(struct model *m, const struct model_query *q, const char *snapshot,
                         const struct model_table *t, uint64_t *bytes, uint64_t *count)
{
    if (t->n) {
        memset(bytes, 0, t->n * sizeof *bytes);
        memset(count, 0, t->n * sizeof *count);
    }
    int si = snapshot ? model_snapshot_find(m, snapshot) : -1;
    if (si < 0)
        return -1;
    struct row_index rows; /* dense: cache classes share a slot */
    row_index_init(&rows, m, 0, t->n);
    for (size_t r = 0; r < t->n; r++) { /* LEAKS tables may repeat an id (cache rows): the first wins */
        uint64_t key = row_key(t->rows[r].id, MODEL_CACHE_NONE, t->rows[r].kinds == 1u << CULEAK_KIND_BLOCK);
        if (row_index_get(&rows, key) == UINT32_MAX && row_index_put(&rows, key, (uint32_t)r) != 0) {
            row_index_done(&rows, t->rows, r);
            return -1;
        }
    }
    const struct snapshot *s = &m->snaps[si];
    for (int i = 0; i < m->nprocs && i < s->nparts; i++) {
        if ((q->proc != MODEL_ALL && q->proc != i) || !s->parts[i].present)
            continue;
        struct process *p = m->procs[i];
        const struct state *st = &s->parts[i];
        for (size_t k = 0; k < st->n; k++) { /* only units live at the snapshot are kept */
            const struct state_item *it = &st->items[k];
            if (it->unit >= p->nunits)
                continue;
            struct unit *u = &p->units[it->unit];
            if (!unit_in_query(u, q))
                continue;
            enum model_cache pool = p->pools_tracked ? unit_pool(m, i, u) : MODEL_CACHE_NONE;
            uint32_t id = pool ? pool_row_id(m, pool, q->group) : unit_row_id(m, i, u, q->group);
            uint32_t r = row_index_get(&rows, row_key(id, MODEL_CACHE_NONE, unit_part(u)));
            if (r == UINT32_MAX)
                continue; /* a row the table left out (filter, only_live) */
            bytes[r] += it->bytes;
            count[r] += it->count;
        }
    }
    row_index_done(&rows, t->rows, t->n);
    return 0;
}

void model_stack_live(const struct model *m, int proc, uint64_t stack, uint32_t kinds, uint64_t *bytes,
                      uint64_t *count)
{
    *bytes = *count = 0;
    const struct process *p = model_proc(m, proc);
    if (!p)
        return;
    struct model_query q = {.kinds = kinds};
    for (unsigned k = 0; k < CULEAK_KIND_COUNT; k++) {
        uint32_t ui = u64map_get(&p->unit_index, stack << 5 | k);
        if (ui == UINT32_MAX || !unit_in_query(&p->units[ui], &q))
            continue;
        *bytes += p->units[ui].live_bytes;
        *count += p->units[ui].live_count;
    }
}

int model_stack_has_blocks(const struct model *m, int proc, uint64_t stack)
{
    const struct process *p = model_proc(m, proc);
    return p && u64map_get(&p->unit_index, stack << 5 | CULEAK_KIND_BLOCK) != UINT32_MAX;
}
