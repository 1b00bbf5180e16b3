/* What was live when culeak attached to a running process: the shim's inventory sends it
 * as allocations of the API "before-attach" with no stack (size, kind, device). They are
 * one row of their own, "(before attach)", under every grouping, so the totals are right
 * from the first screen and no call site is charged with memory it may not have made.
 * A caching allocator's own account (its blocks, and its segments with the pool in the
 * auxiliary value) makes its segments reserved memory of that pool, also where the
 * inventory found them first. */
#include "model_internal.h"
#include "common/wire.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(CULEAK_POOL_TORCH == MODEL_CACHE_PYTORCH, "a before-attach segment's pool is a model_cache");

/* An address of no module (above user space, below the pools' sites). */
#define BEFORE_ATTACH_SITE_KEY 0x7ffffffffffffe00ull
#define BEFORE_ATTACH_UNIT_KEY (UINT64_C(1) << 63)

static uint32_t before_attach_site(struct model *m)
{
    if (m->before_attach_site)
        return m->before_attach_site - 1;
    uint32_t id = model_site_new(m, BEFORE_ATTACH_SITE_KEY);
    if (id == 0)
        return 0;
    struct site *s = &m->sites[id];
    static const char text[] = "(before attach)";
    s->text = strpool_intern(&m->strings, text, sizeof text - 1);
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
    m->before_attach_site = id + 1;
    model_changed(m);
    return id;
}

struct unit *unit_before_attach(struct model *m, struct process *p, unsigned kind, unsigned pool)
{
    if (pool >= MODEL_POOLS)
        pool = MODEL_CACHE_NONE;
    struct unit *u = unit_keyed(p, BEFORE_ATTACH_UNIT_KEY | (uint64_t)pool << 8 | kind, 0, kind, before_attach_site(m));
    if (u && pool != MODEL_CACHE_NONE) {
        u->cache = (uint8_t)(pool + 1);
        p->pools_tracked |= 1u << pool;
    }
    return u;
}

int unit_before_attach_unjudged(const struct model *m, const struct unit *u)
{
    return m->before_attach_site && u->site == m->before_attach_site - 1 && u->cache <= MODEL_CACHE_NONE + 1;
}

static void before_attach_states_move(struct model *m, struct process *p, uint32_t from, uint32_t to, uint64_t bytes);

void before_attach_claim(struct model *m, struct process *p, struct live_entry *le, unsigned pool)
{
    if (pool == MODEL_CACHE_NONE || pool >= MODEL_POOLS || !m->before_attach_site)
        return;
    uint32_t from = le->unit;
    if (p->units[from].site != m->before_attach_site - 1 || p->units[from].cache == pool + 1)
        return; /* made after the attach, or the pool's already */
    struct unit *to = unit_before_attach(m, p, p->units[from].kind, pool);
    if (!to)
        return;
    /* the same site and kind: only the two units' live sums change */
    p->units[from].live_bytes -= le->size;
    p->units[from].live_count--;
    to->live_bytes += le->size;
    to->live_count++;
    to->allocs++;
    p->units[from].allocs--;
    to->alloc_bytes += le->size;
    p->units[from].alloc_bytes -= le->size;
    le->unit = (uint32_t)(to - p->units);
    before_attach_states_move(m, p, from, le->unit, le->size);
    model_changed(m);
}

/* st gets one more allocation of bytes in unit; 0, or -1 out of memory (st unchanged). */
static int state_add(struct state *st, uint32_t unit, uint64_t bytes, size_t *items)
{
    /* the before-attach units are new when the inventory comes: look from the end */
    for (size_t i = st->n; i-- > 0;)
        if (st->items[i].unit == unit) {
            if (st->items[i].count < UINT32_MAX)
                st->items[i].count++;
            st->items[i].bytes += bytes;
            return 0;
        }
    struct state_item *n = realloc(st->items, (st->n + 1) * sizeof *n);
    if (!n)
        return -1;
    st->items = n;
    st->items[st->n++] = (struct state_item){unit, 1, bytes};
    (*items)++;
    return 0;
}

void before_attach_backdate(struct model *m, struct process *p, uint32_t unit, uint64_t bytes)
{
    size_t added = 0;
    for (size_t i = 0; i < p->nmoments; i++)
        if (p->moments[i].st.present)
            state_add(&p->moments[i].st, unit, bytes, &added);
    m->moment_items += added;
    for (int k = 0; k < m->nsnaps; k++) {
        struct snapshot *s = &m->snaps[k];
        if (p->pub.index < s->nparts && s->parts[p->pub.index].present)
            state_add(&s->parts[p->pub.index], unit, bytes, &(size_t){0});
    }
}

/* In st, one allocation of bytes goes from unit from to unit to (where from holds it). */
static void state_move(struct state *st, uint32_t from, uint32_t to, uint64_t bytes, size_t *items)
{
    for (size_t i = 0; i < st->n; i++)
        if (st->items[i].unit == from) {
            if (st->items[i].count == 0 || st->items[i].bytes < bytes)
                return;
            st->items[i].count--;
            st->items[i].bytes -= bytes;
            state_add(st, to, bytes, items);
            return;
        }
}

/* A before-attach allocation a pool claimed was in every state of the process since the
 * attach (captured, or backdated): it is the pool's there too. */
static void before_attach_states_move(struct model *m, struct process *p, uint32_t from, uint32_t to, uint64_t bytes)
{
    size_t added = 0;
    for (size_t i = 0; i < p->nmoments; i++)
        if (p->moments[i].st.present)
            state_move(&p->moments[i].st, from, to, bytes, &added);
    m->moment_items += added;
    for (int k = 0; k < m->nsnaps; k++) {
        struct snapshot *s = &m->snaps[k];
        if (p->pub.index < s->nparts && s->parts[p->pub.index].present)
            state_move(&s->parts[p->pub.index], from, to, bytes, &(size_t){0});
    }
}
