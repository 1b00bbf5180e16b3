/* Moments: per-unit live states kept at marks and at regular times (model.h), so that a
 * picture of a recording can show any of them without replaying it. */
#include "model_internal.h"

#include <stdlib.h>
#include <string.h>

#define FIRST_TICK_NS 10000000ull /* 10 ms: doubles whenever the moments are thinned */
/* Items (a unit live at a moment, 16 bytes) kept in all: 64 MiB. A job with 100k live
 * stacks keeps fewer than 256 moments rather than 400 MB of them. */
#define DEFAULT_ITEMS_MAX ((size_t)1 << 22)

void model_keep_moments(struct model *m, unsigned max, uint64_t first_tick_ns)
{
    m->moments_max = max < 2 ? 2 : max;
    m->moments_tick0 = first_tick_ns ? first_tick_ns : FIRST_TICK_NS;
    if (!m->moment_items_max)
        m->moment_items_max = DEFAULT_ITEMS_MAX;
}

void model_limit_moment_items(struct model *m, size_t items) { m->moment_items_max = items ? items : DEFAULT_ITEMS_MAX; }

/* Is a mark of this label the first of its process that an armed snapshot waits for (a
 * diff's A or B, report --at)? Its moment is never thinned: the page opens on it. */
static int pinned_label(const struct model *m, const struct process *p, const char *label)
{
    int armed = 0;
    for (int i = 0; i < m->nsnaps && !armed; i++)
        armed = m->snaps[i].trigger && !m->snaps[i].trigger_is_seq && !strcmp(m->snaps[i].trigger, label);
    for (size_t i = 0; armed && i < p->nmoments; i++)
        if (p->moments[i].pinned && !strcmp(p->moments[i].label, label))
            return 0;
    return armed;
}

/* Drops every other moment but the pinned ones, keeping the newest, and doubles the tick
 * interval; at least one goes (the oldest unpinned, else the oldest). */
static void thin(struct model *m, struct process *p)
{
    size_t keep = 0;
    for (size_t i = 0; i < p->nmoments; i++) {
        if ((p->nmoments - 1 - i) % 2 == 0 || p->moments[i].pinned) {
            p->moments[keep++] = p->moments[i];
        } else {
            m->moment_items -= p->moments[i].st.n;
            state_free(&p->moments[i].st);
        }
    }
    if (keep == p->nmoments && keep) {
        size_t drop = 0;
        while (drop + 1 < keep && p->moments[drop].pinned)
            drop++;
        m->moment_items -= p->moments[drop].st.n;
        state_free(&p->moments[drop].st);
        memmove(&p->moments[drop], &p->moments[drop + 1], (keep - drop - 1) * sizeof *p->moments);
        keep--;
    }
    p->nmoments = keep;
    p->tick_step *= 2;
}

static void take(struct model *m, struct process *p, unsigned kind, const char *label)
{
    if (!p->moments && !(p->moments = calloc(m->moments_max, sizeof *p->moments)))
        return;
    if (p->nmoments == m->moments_max)
        thin(m, p);
    int pinned = label && pinned_label(m, p, label);
    struct moment *mo = &p->moments[p->nmoments];
    if (state_capture(m, p, &mo->st) != 0)
        return;
    mo->kind = kind;
    mo->label = label;
    mo->pinned = pinned;
    p->nmoments++;
    m->moment_items += mo->st.n;
    while (m->moment_items > m->moment_items_max && p->nmoments > 2) /* this process pays */
        thin(m, p);
    p->next_tick = p->pub.last_t_ns + p->tick_step;
}

void moments_on_mark(struct model *m, struct process *p, const char *label)
{
    if (!p->tick_step)
        p->tick_step = m->moments_tick0;
    take(m, p, MODEL_MOMENT_MARK, label);
}

void moments_on_time(struct model *m, struct process *p, uint64_t t_ns)
{
    if (!p->tick_step) { /* the first event starts the clock */
        p->tick_step = m->moments_tick0;
        p->next_tick = t_ns + p->tick_step;
        return;
    }
    take(m, p, MODEL_MOMENT_TICK, NULL);
}

void moments_free(struct process *p)
{
    for (size_t i = 0; i < p->nmoments; i++) /* only as the model is freed: no count to keep */
        state_free(&p->moments[i].st);
    free(p->moments);
    p->moments = NULL;
    p->nmoments = 0;
}

size_t model_moments(const struct model *m, int proc, struct model_moment *out, size_t max)
{
    const struct process *p = model_proc(m, proc);
    if (!p)
        return 0;
    for (size_t i = 0; i < p->nmoments && i < max; i++)
        out[i] = (struct model_moment){(enum model_moment_kind)p->moments[i].kind, p->moments[i].label,
                                       p->moments[i].st.t_ns, p->moments[i].st.seq};
    return p->nmoments;
}
