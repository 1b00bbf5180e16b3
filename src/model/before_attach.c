/* What was live when culeak attached to a running process: the shim's inventory sends it
 * as allocations of the API "before-attach" with no stack (size, kind, device). They are
 * one row of their own, "(before attach)", under every grouping, so the totals are right
 * from the first screen and no call site is charged with memory it may not have made. */
#include "model_internal.h"

#include <string.h>

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

struct unit *unit_before_attach(struct model *m, struct process *p, unsigned kind)
{
    return unit_keyed(p, BEFORE_ATTACH_UNIT_KEY | kind, 0, kind, before_attach_site(m));
}
