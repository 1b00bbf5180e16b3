/* An aggregated recording's CHURN records (culeak-stream(5)): the allocations made and
 * freed between two flush points, which the recording does not carry one by one, added
 * to their units and counters as the events would have added them; and the high-water
 * marks they reached, which the events written cannot show. */
#include "model_internal.h"

/* A high-water mark: higher, or as high and reached earlier (the events written may
 * reach it again later), than the one seen. */
static void peak_to(struct model_counter *c, const struct culeak_churn_peak *pk)
{
    if (pk->bytes > c->peak_bytes || (pk->bytes == c->peak_bytes && pk->bytes && pk->seq < c->peak_seq)) {
        c->peak_bytes = pk->bytes;
        c->peak_t_ns = pk->t_ns;
        c->peak_seq = pk->seq;
    }
}

static void unit_churn(struct model *m, struct process *p, const struct culeak_churn *c,
                       const struct culeak_churn_unit *cu)
{
    unsigned kind = cu->kind < CULEAK_KIND_COUNT ? cu->kind : CULEAK_KIND_NONE;
    uint64_t stack = cu->stack;
    if (stack >= p->nframes) {
        p->pub.bad_stacks++;
        stack = 0;
    }
    struct unit *u = unit_get(m, p, stack, kind);
    if (!u)
        return;
    if (u->at_peak_epoch != p->peak_epoch) { /* as touch_unit: its value at the last peak */
        u->at_peak_bytes = u->live_bytes;
        u->at_peak_count = u->live_count;
        u->at_peak_epoch = p->peak_epoch;
    }
    u->allocs += cu->count;
    u->frees += cu->count;
    u->alloc_bytes += cu->bytes;
    if (cu->count) {
        if (!u->first_t || (c->t_first && c->t_first < u->first_t))
            u->first_t = c->t_first;
        if (c->t_last > u->last_t)
            u->last_t = c->t_last;
    }
    if (cu->thread) {
        uint64_t tid = (cu->thread - 1) >> 1;
        if (!u->threads) {
            u->tid = tid;
            u->threads = (cu->thread - 1) & 1 ? 2 : 1;
        } else if (((cu->thread - 1) & 1) || u->tid != tid) {
            u->threads = 2;
        }
    }
    if (cu->peak > u->peak_bytes)
        u->peak_bytes = cu->peak;
    struct site *s = &m->sites[u->site];
    uint64_t others = s->live[u->kind] - u->live_bytes; /* other processes' units of the site */
    uint64_t run_live = cu->peak + others - runs_site_base(m, u->site, u->kind);
    if (cu->peak && run_live > s->peak[u->kind]) {
        if (culeak_kind_is_memory(u->kind))
            m->site_peaks[2 * u->site + (u->kind == CULEAK_KIND_BLOCK)] += run_live - s->peak[u->kind];
        s->peak[u->kind] = run_live;
    }
    if (!cu->count)
        return;
    int8_t dev = cu->device < INT8_MIN ? INT8_MIN : cu->device > INT8_MAX ? INT8_MAX : (int8_t)cu->device;
    int ds = device_slot_for(p, dev);
    struct model_counter *cs[8];
    size_t n = counters_of(m, p, ds < 0 ? 0 : ds, kind, cs);
    if (model_kind_is_device_memory(kind))
        cs[n++] = &p->counters[0][MODEL_KIND_DEVICE_MEMORY];
    for (size_t i = 0; i < n; i++) {
        cs[i]->allocs += cu->count;
        cs[i]->frees += cu->count;
    }
    p->pub.events += 2 * cu->count;
    m->events += 2 * cu->count;
    p->pub.folded += cu->count;
}

/* The process's device-memory peak moved within the interval: what each unit held at it
 * is what it holds now, but for the units listed (touch_unit's rule, from a new epoch). */
static void at_peak(struct model *m, struct process *p, const struct culeak_churn *c)
{
    p->peak_epoch++;
    for (size_t i = 0; i < c->nat_peak; i++) {
        const struct culeak_churn_at_peak *ap = &c->at_peak[i];
        unsigned kind = ap->kind < CULEAK_KIND_COUNT ? ap->kind : CULEAK_KIND_NONE;
        struct unit *u = unit_get(m, p, ap->stack < p->nframes ? ap->stack : 0, kind);
        if (!u)
            continue;
        u->at_peak_bytes = ap->bytes;
        u->at_peak_count = ap->count;
        u->at_peak_epoch = p->peak_epoch;
    }
}

void apply_churn(struct model *m, struct process *p, const struct culeak_churn *c)
{
    p->pub.aggregated_ns = c->interval_ns ? c->interval_ns : 1;
    for (size_t i = 0; i < c->nunits; i++)
        unit_churn(m, p, c, &c->unit[i]);
    for (size_t i = 0; i < c->npeaks; i++) {
        const struct culeak_churn_peak *pk = &c->peak[i];
        int ds = pk->all_devices ? 0 : device_slot_for(p, pk->device);
        if (ds < 0)
            continue;
        struct model_counter *pc = &p->counters[ds][pk->slot];
        peak_to(pc, pk);
        if (ds == 0) { /* one process's peak: the run's and all processes' are at least it */
            peak_to(&m->global[pk->slot], pk);
            peak_to(&m->run_now[pk->slot], pk);
        }
    }
    if (c->peak_moved)
        at_peak(m, p, c);
}
