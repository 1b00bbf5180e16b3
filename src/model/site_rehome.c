/* Call sites first seen at a bare address. The first event at a new stack inside a library
 * loaded since the last MODULES record comes before the record that names the library
 * (the shim sends it once it sees the stack is new), so its site is made from the address
 * alone. When a later record adds the range holding that address, the site is named by
 * the range's module and offset from then on, as the stack's frames are. */
#include "model_internal.h"

uint32_t sites_bare(struct model *m, uint32_t site)
{
    struct site *s = &m->sites[site];
    if (site != 0 && !s->bare) {
        s->bare = 1;
        m->nbare++;
    }
    return site;
}

/* The site keeps its index: every unit, total and peak counted there stays where it is. */
static void rehome(struct model *m, uint32_t site, const struct range *r)
{
    struct site *s = &m->sites[site];
    uint64_t off = s->offset - r->bias;
    s->bare = 0;
    m->nbare--;
    if (s->symbolized)
        m->nnamed--;
    s->module = r->module;
    s->offset = off;
    s->symbolized = 0;
    s->sym = NULL;
    s->text = NULL;
    s->frame = 0;
    for (int g = 0; g < MODEL_GROUP_COUNT; g++)
        s->group_id[g] = MODEL_NO_ROW;
    m->site_names[site] = (struct site_name){.module = r->module};
    if (m->name_cursor > site)
        m->name_cursor = site;
    /* a site made later at the same place finds this one (the address's key stays too) */
    uint64_t key = (uint64_t)r->module << 44 | off;
    if (u64map_get(&m->site_index, key) == UINT32_MAX)
        u64map_put(&m->site_index, key, site);
}

void sites_rehome(struct model *m, const struct range *r)
{
    if (m->nbare == 0 || r->module == 0 || r->module >= (1u << 20))
        return;
    for (size_t i = 1; i < m->nsites; i++) {
        const struct site *s = &m->sites[i];
        if (s->bare && s->offset >= r->start && s->offset < r->end && s->offset - r->bias < (1ull << 44))
            rehome(m, (uint32_t)i, r);
    }
}
