/* Applying records to the model: trace-tree nodes, events (alloc, free, free-all, ...)
 * and marks. Every event costs O(1) except FREE_ALL, which walks the live table from its
 * end until it has freed every allocation of its context (none: no walk). */
#include "model_internal.h"
#include "common/wire.h"

#include <stdlib.h>
#include <string.h>

int apply_frame(struct model *m, struct process *p, uint64_t id, uint64_t parent, uint64_t ip)
{
    (void)m;
    /* ids are dense and sequential, parents come first: anything else is corrupt input,
     * ignored so that a hostile id cannot make us allocate without bound */
    if (id != p->nframes || parent >= id || p->nframes >= MODEL_MAX_FRAMES) {
        p->pub.bad_frames++;
        return 0;
    }
    if (p->nframes == p->frames_cap) {
        size_t cap = p->frames_cap * 2;
        uint32_t *np = realloc(p->parent, cap * sizeof *np);
        if (!np)
            return -1;
        p->parent = np;
        uint64_t *ni = realloc(p->ip, cap * sizeof *ni);
        if (!ni)
            return -1;
        p->ip = ni;
        p->frames_cap = cap;
    }
    p->parent[id] = (uint32_t)parent;
    p->ip[id] = ip;
    p->nframes++;
    p->pub.frames++;
    return 0;
}

struct unit *unit_get(struct model *m, struct process *p, uint64_t stack, unsigned kind)
{
    uint64_t key = stack << 5 | kind;
    if (p->unit_last && p->unit_last_key == key)
        return &p->units[p->unit_last - 1];
    uint32_t u = u64map_get(&p->unit_index, key);
    struct unit *un =
        u != UINT32_MAX ? &p->units[u] : unit_keyed(p, key, stack, kind, modules_site_of_stack(m, p, stack));
    if (un) {
        p->unit_last_key = key;
        p->unit_last = (uint32_t)(un - p->units) + 1;
    }
    return un;
}

struct unit *unit_keyed(struct process *p, uint64_t key, uint64_t stack, unsigned kind, uint32_t site)
{
    uint32_t u = u64map_get(&p->unit_index, key);
    if (u != UINT32_MAX)
        return &p->units[u];
    if (p->nunits == p->units_cap) {
        size_t cap = p->units_cap ? p->units_cap * 2 : 64;
        struct unit *nu = realloc(p->units, cap * sizeof *nu);
        if (!nu)
            return NULL;
        p->units = nu;
        p->units_cap = cap;
    }
    if (u64map_put(&p->unit_index, key, (uint32_t)p->nunits) != 0)
        return NULL;
    struct unit *un = &p->units[p->nunits++];
    memset(un, 0, sizeof *un);
    un->stack = stack;
    un->kind = (uint8_t)kind;
    un->stack_row = MODEL_NO_ROW;
    un->site = site;
    un->at_peak_epoch = p->peak_epoch; /* it held nothing at the latest peak */
    return un;
}

/* Before a unit changes: if the process reached a new device-memory peak since the unit
 * last changed, its current value is its value at that peak. Saving it now, lazily,
 * keeps "what was live at the peak" exact at O(1) per event. */
static inline void touch_unit(const struct process *p, struct unit *u)
{
    if (u->at_peak_epoch != p->peak_epoch) {
        u->at_peak_bytes = u->live_bytes;
        u->at_peak_count = u->live_count;
        u->at_peak_epoch = p->peak_epoch;
    }
}

int device_slot_for(struct process *p, int device)
{
    for (int i = 0; i < p->ndev; i++)
        if (p->devices[i] == device)
            return i + 1;
    if (p->ndev == MODEL_MAX_DEVICES)
        return -1;
    struct model_counter(*c)[MODEL_KIND_SLOTS] = realloc(p->counters, (size_t)(p->ndev + 2) * sizeof *c);
    if (!c)
        return -1;
    memset(c[p->ndev + 1], 0, sizeof *c);
    p->counters = c;
    p->devices[p->ndev++] = device;
    return p->ndev;
}

static inline void counter_up(struct model_counter *c, uint64_t size, uint64_t t, uint64_t seq)
{
    c->live_bytes += size;
    c->live_count++;
    c->allocs++;
    if (c->live_bytes > c->peak_bytes) {
        c->peak_bytes = c->live_bytes;
        c->peak_t_ns = t;
        c->peak_seq = seq;
    }
}

static inline void counter_down(struct model_counter *c, uint64_t size, int reset)
{
    c->live_bytes -= size;
    c->live_count--;
    if (reset) {
        c->reset_bytes += size;
        c->reset_count++;
    } else {
        c->frees++;
    }
}

/* The counters an allocation of `kind` on device slot `ds` counts in. */
size_t counters_of(struct model *m, struct process *p, int ds, unsigned kind, struct model_counter **out)
{
    size_t n = 0;
    int devmem = model_kind_is_device_memory(kind);
    out[n++] = &p->counters[0][kind];
    out[n++] = &m->global[kind];
    out[n++] = &m->run_now[kind];
    if (ds > 0)
        out[n++] = &p->counters[ds][kind];
    if (devmem) {
        out[n++] = &m->global[MODEL_KIND_DEVICE_MEMORY];
        out[n++] = &m->run_now[MODEL_KIND_DEVICE_MEMORY];
        if (ds > 0)
            out[n++] = &p->counters[ds][MODEL_KIND_DEVICE_MEMORY];
    }
    return n;
}

static void sample(struct model *m, struct process *p, int ds, uint64_t t)
{
    unsigned cap = m->opt.timeline_capacity;
    uint64_t step = m->opt.timeline_step_ns;
    series_add(&p->series[0], t, p->counters[0][MODEL_KIND_DEVICE_MEMORY].live_bytes, p->pub.events, cap, step);
    if (ds > 0)
        series_add(&p->series[ds], t, p->counters[ds][MODEL_KIND_DEVICE_MEMORY].live_bytes, p->pub.events, cap,
                   step);
}

static void account_alloc(struct model *m, struct process *p, struct unit *u, int ds, uint64_t size,
                          uint64_t t, uint64_t seq)
{
    touch_unit(p, u);
    u->live_bytes += size;
    u->live_count++;
    u->allocs++;
    u->alloc_bytes += size;
    if (u->live_bytes > u->peak_bytes)
        u->peak_bytes = u->live_bytes;
    if (!u->first_t)
        u->first_t = t;
    u->last_t = t;
    if (p->growth)
        growth_on_change(p, u);
    struct site *s = &m->sites[u->site];
    s->live[u->kind] += size;
    uint64_t run_live = s->live[u->kind] - runs_site_base(m, u->site, u->kind); /* earlier runs' apart */
    if (run_live > s->peak[u->kind]) {
        if (culeak_kind_is_memory(u->kind))
            m->site_peaks[2 * u->site + (u->kind == CULEAK_KIND_BLOCK)] += run_live - s->peak[u->kind];
        s->peak[u->kind] = run_live;
    }
    struct model_counter *cs[7];
    size_t n = counters_of(m, p, ds, u->kind, cs);
    for (size_t i = 0; i < n; i++)
        counter_up(cs[i], size, t, seq);
    if (model_kind_is_device_memory(u->kind)) {
        struct model_counter *pc = &p->counters[0][MODEL_KIND_DEVICE_MEMORY];
        uint64_t old_peak = pc->peak_bytes;
        counter_up(pc, size, t, seq);
        if (pc->peak_bytes > old_peak)
            p->peak_epoch++;
        sample(m, p, ds, t);
    }
}

static void account_free(struct model *m, struct process *p, struct unit *u, int ds, uint64_t size,
                         uint64_t t, int reset)
{
    touch_unit(p, u);
    u->live_bytes -= size;
    u->live_count--;
    if (reset) {
        u->reset_bytes += size;
        u->reset_count++;
    } else {
        u->frees++;
    }
    u->last_t = t;
    if (p->growth)
        growth_on_change(p, u);
    m->sites[u->site].live[u->kind] -= size;
    struct model_counter *cs[7];
    size_t n = counters_of(m, p, ds, u->kind, cs);
    for (size_t i = 0; i < n; i++)
        counter_down(cs[i], size, reset);
    if (model_kind_is_device_memory(u->kind)) {
        counter_down(&p->counters[0][MODEL_KIND_DEVICE_MEMORY], size, reset);
        sample(m, p, ds, t);
    }
}

/* Address spaces: device pointers are shared by device and managed memory (cuMemFree
 * frees both); handles and host pointers of other kinds are numbers of their own. */
static unsigned space_of(unsigned kind) { return kind == CULEAK_KIND_MANAGED ? CULEAK_KIND_DEVICE : kind; }

/* Live entries per (device, context), and per device (ctx DEVICE_WIDE): a FREE_ALL of a
 * context or device that holds nothing costs nothing, one that holds some stops when it
 * has found them all. */
#define DEVICE_WIDE 0x10000u
static uint64_t count_key(int8_t dev, uint32_t ctx) { return (uint64_t)(uint8_t)dev << 32 | ctx; }

/* Two map updates per event cost a tenth of reading a recording: a run of events in
 * one (device, context) adds up its change here and writes it once, when the next event
 * is elsewhere or a count is read. */
static void live_count_flush(struct process *p)
{
    if (!p->count_delta)
        return;
    uint32_t d = (uint32_t)p->count_delta;
    p->count_delta = 0;
    if (u64map_add(&p->live_count, p->count_key, d) != 0 ||
        u64map_add(&p->live_count, (p->count_key & ~(uint64_t)UINT32_MAX) | DEVICE_WIDE, d) != 0)
        p->live_count_lost = 1;
}

static uint32_t live_count(struct process *p, int8_t dev, uint32_t ctx)
{
    live_count_flush(p);
    uint32_t n = u64map_get(&p->live_count, count_key(dev, ctx));
    return n == UINT32_MAX ? 0 : n;
}

static void live_count_add(struct process *p, int8_t dev, uint16_t ctx, int delta)
{
    uint64_t key = count_key(dev, ctx);
    if (key != p->count_key)
        live_count_flush(p);
    p->count_key = key;
    p->count_delta += delta;
}

static void end_live(struct model *m, struct process *p, struct live_entry *le, uint64_t t, int reset)
{
    live_count_add(p, le->device, le->ctx, -1);
    struct unit *u = &p->units[le->unit];
    int ds = 0;
    for (int i = 0; i < p->ndev; i++)
        if (p->devices[i] == le->device)
            ds = i + 1;
    account_free(m, p, u, ds, le->size, t, reset);
    live_table_remove(&m->live, le);
}

/* The live table keeps a device in 8 bits; absurd numbers share the extremes. */
static int8_t clamp_device(int32_t d) { return d < INT8_MIN ? INT8_MIN : d > INT8_MAX ? INT8_MAX : (int8_t)d; }

static uint16_t ctx_index(struct process *p, uint64_t ctx)
{
    uint32_t c = u64map_get(&p->ctx_index, ctx);
    if (c != UINT32_MAX)
        return (uint16_t)c;
    if (p->nctx >= MODEL_MAX_CONTEXTS)
        return UINT16_MAX; /* beyond the cap all contexts share one index */
    if (u64map_put(&p->ctx_index, ctx, p->nctx) != 0)
        return UINT16_MAX;
    return (uint16_t)p->nctx++;
}

static void record_failure(struct model *m, struct process *p, const struct culeak_event *e, uint64_t stack)
{
    if (m->nfailures == m->failures_cap) {
        size_t cap = m->failures_cap ? m->failures_cap * 2 : 16;
        struct failure_rec *f = realloc(m->failures, cap * sizeof *f);
        if (!f)
            return;
        m->failures = f;
        struct model_failure *fp = realloc(m->failures_pub, cap * sizeof *fp);
        if (!fp)
            return;
        m->failures_pub = fp;
        m->failures_cap = cap;
    }
    struct failure_rec *f = &m->failures[m->nfailures];
    memset(f, 0, sizeof *f);
    f->pub = (struct model_failure){
        .proc = p->pub.index, .seq = e->seq, .t_ns = e->t_ns, .size = e->size, .result = e->result,
        .stack = stack, .api = e->api, .kind = e->kind, .device = e->device,
    };
    /* the live state is kept for the first failures only: later ones repeat the story */
    if (m->nfailures < m->opt.failure_snapshots && state_capture(m, p, &f->state) == 0)
        f->pub.has_state = 1;
    m->failures_pub[m->nfailures++] = f->pub;
}

/* The threads that allocated at u: the first, and whether there were others. */
static void note_thread(struct unit *u, uint64_t tid)
{
    if (!u->threads) {
        u->tid = tid;
        u->threads = 1;
    } else if (u->tid != tid) {
        u->threads = 2;
    }
}

static void do_alloc(struct model *m, struct process *p, const struct culeak_event *e, uint64_t stack, unsigned kind)
{
    int before = e->api == CULEAK_API_BEFORE_ATTACH;
    unsigned space = space_of(kind);
    struct live_entry *old = live_table_find(&m->live, p->pub.index, space, e->addr);
    unsigned pool = before && e->aux < MODEL_POOLS ? (unsigned)e->aux : MODEL_CACHE_NONE; /* culeak-stream(5) */
    if (before && old) { /* seen by the attach's inventory after its own event: counted once */
        before_attach_claim(m, p, old, pool);
        return;
    }
    struct unit *u = before ? unit_before_attach(m, p, kind, pool) : unit_get(m, p, stack, kind);
    if (!u)
        return;
    if (e->result != 0) {
        touch_unit(p, u);
        u->failed++;
        u->failed_bytes += e->size;
        if (!u->first_t)
            u->first_t = e->t_ns;
        u->last_t = e->t_ns;
        p->pub.failed_allocs++;
        p->counters[0][kind].failed++;
        p->counters[0][kind].failed_bytes += e->size;
        m->global[kind].failed++;
        m->global[kind].failed_bytes += e->size;
        record_failure(m, p, e, stack);
        return;
    }
    if (old) { /* its free was missed (or never made): it ends here */
        p->pub.replaced++;
        end_live(m, p, old, e->t_ns, 0);
    }
    int8_t dev = clamp_device(e->device);
    int ds = device_slot_for(p, dev);
    struct live_entry le = {
        /* what was live before the attach was made before any seq of this stream */
        .addr = e->addr, .size = e->size, .seq_proc = (before ? 0 : e->seq) << 16 | (uint64_t)p->pub.index,
        .unit = (uint32_t)(u - p->units), .device = dev, .space = (uint8_t)space,
        .ctx = ctx_index(p, e->ctx),
    };
    if (!live_table_insert(&m->live, &le))
        return;
    live_count_add(p, dev, le.ctx, 1);
    if (kind == CULEAK_KIND_BLOCK)
        pools_on_block(p, e->api);
    if (!before) /* the thread that sent an attach's inventory made none of those */
        note_thread(u, e->tid);
    account_alloc(m, p, u, ds < 0 ? 0 : ds, e->size, e->t_ns, e->seq);
    if (before)
        before_attach_backdate(m, p, le.unit, e->size);
}

static void do_free(struct model *m, struct process *p, const struct culeak_event *e, unsigned kind)
{
    if (e->result != 0) {
        p->pub.failed_frees++;
        return;
    }
    if (e->addr == 0)
        return; /* cudaFree(0) initialises the context */
    if (kind == CULEAK_KIND_VMM_PHYSICAL) {
        uint32_t refs = u64map_get(&p->retains, e->addr);
        if (refs != UINT32_MAX && refs > 0) { /* an extra reference goes, the memory stays */
            u64map_put(&p->retains, e->addr, refs - 1);
            return;
        }
    }
    struct live_entry *le = live_table_find(&m->live, p->pub.index, space_of(kind), e->addr);
    if (!le) {
        p->pub.unknown_frees++;
        return;
    }
    end_live(m, p, le, e->t_ns, 0);
}

static void do_free_all(struct model *m, struct process *p, const struct culeak_event *e)
{
    if (e->result != 0)
        return;
    p->pub.free_alls++;
    live_count_flush(p); /* a count it could not keep is known before the walk */
    int8_t dev = clamp_device(e->device);
    uint32_t ctx = e->ctx ? u64map_get(&p->ctx_index, e->ctx) : UINT32_MAX;
    if (e->ctx && ctx == UINT32_MAX)
        return; /* a context that never allocated */
    uint32_t left = p->live_count_lost ? UINT32_MAX : live_count(p, dev, e->ctx ? ctx : DEVICE_WIDE);
    /* from the end: an entry removed takes the last one, already looked at, into its place */
    for (size_t i = m->live.n; i-- > 0 && left;) {
        struct live_entry *le = &m->live.entries[i];
        m->free_all_visits++;
        if (live_entry_proc(le) == p->pub.index && le->device == dev && (!e->ctx || le->ctx == ctx)) {
            end_live(m, p, le, e->t_ns, 1);
            left--;
        }
    }
}

void apply_event(struct model *m, struct process *p, const struct culeak_event *e)
{
    if ((e->flags & CULEAK_EVENT_HELD) && m->obs.held)
        m->obs.held(m->obs.ctx, p->pub.index, e);
    if (m->seq_triggers)
        snapshots_on_seq(m, p, e->seq);
    p->pub.events++;
    m->events++;
    p->pub.last_t_ns = e->t_ns;
    p->pub.last_seq = e->seq;
    unsigned kind = e->kind < CULEAK_KIND_COUNT ? e->kind : CULEAK_KIND_NONE;
    uint64_t stack = e->stack;
    if (stack >= p->nframes) {
        p->pub.bad_stacks++;
        stack = 0;
    }
    int new_stack = 0;
    switch (e->op) {
    case CULEAK_OP_ALLOC:
        new_stack = m->obs.new_stack && u64map_get(&p->unit_index, stack << 5 | kind) == UINT32_MAX;
        do_alloc(m, p, e, stack, kind);
        break;
    case CULEAK_OP_FREE:
        do_free(m, p, e, kind);
        break;
    case CULEAK_OP_FREE_ALL:
        do_free_all(m, p, e);
        break;
    case CULEAK_OP_RETAIN:
        if (e->result == 0 && live_table_find(&m->live, p->pub.index, CULEAK_KIND_VMM_PHYSICAL, e->addr)) {
            uint32_t refs = u64map_get(&p->retains, e->addr);
            u64map_put(&p->retains, e->addr, refs == UINT32_MAX ? 1 : refs + (refs < UINT32_MAX - 1));
        }
        break;
    case CULEAK_OP_CTX_CREATE:
        if (e->result == 0)
            ctx_index(p, e->addr);
        break;
    default: /* TRIM and ops of newer shims: nothing to keep */
        break;
    }
    if (new_stack)
        m->obs.new_stack(m->obs.ctx, p->pub.index, stack);
    if (m->moments_max && e->t_ns >= p->next_tick)
        moments_on_time(m, p, e->t_ns);
    if (m->obs.event)
        m->obs.event(m->obs.ctx, p->pub.index, e);
}

void apply_mark(struct model *m, struct process *p, const struct culeak_mark *mk)
{
    p->pub.last_t_ns = mk->t_ns;
    if (p->nmarks == p->marks_cap) {
        size_t cap = p->marks_cap ? p->marks_cap * 2 : 16;
        struct model_mark *nm = realloc(p->marks, cap * sizeof *nm);
        if (!nm)
            return;
        p->marks = nm;
        p->marks_cap = cap;
    }
    const char *label = strpool_intern(&m->strings, mk->label.p ? mk->label.p : "", mk->label.n);
    if (!label)
        return;
    p->marks[p->nmarks++] = (struct model_mark){
        .seq = mk->seq, .t_ns = mk->t_ns, .tid = mk->tid, .flags = mk->flags,
        .live_bytes = p->counters[0][MODEL_KIND_DEVICE_MEMORY].live_bytes, .label = label,
        .mem_device = mk->mem_device, .mem_free = mk->mem_free, .mem_total = mk->mem_total,
    };
    snapshots_on_mark(m, p, label);
    if (m->moments_max && !(mk->flags & CULEAK_MARK_POP))
        moments_on_mark(m, p, label);
    growth_on_mark(m, p, &p->marks[p->nmarks - 1]);
}
