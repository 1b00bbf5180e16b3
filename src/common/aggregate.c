/* The aggregated recording's filter (aggregate.h): each record of the stream is decoded
 * and written again with the stream's own encoder (wire_encode.h), its seq and time
 * kept; the allocations made since the last flush point wait in a pending list, and one
 * freed before the next flush point leaves it unwritten, its free with it, and is counted
 * in its unit (stack, kind: the model's) by device for the next CHURN record. The filter keeps what
 * the model would keep to tell the high-water marks: every live allocation's unit and
 * size, and the live bytes per unit and per counter. */
#include "aggregate.h"
#include "apis.h"
#include "decode.h"
#include "u64map.h"
#include "wire.h"
#include "wire_encode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PENDING_DEFAULT 65536
#define MAX_DEVICES 16 /* devices with counters of their own; the rest share the last */
#define SLOTS (CULEAK_KIND_COUNT + 1) /* each kind, then device memory */

int culeak_agg_kind_is_device_memory(unsigned kind)
{
    switch (kind) {
    case CULEAK_KIND_DEVICE: case CULEAK_KIND_MANAGED: case CULEAK_KIND_VMM_PHYSICAL:
    case CULEAK_KIND_ARRAY: case CULEAK_KIND_GRAPH: case CULEAK_KIND_EXTERNAL:
        return 1;
    default:
        return 0;
    }
}

/* As the model: managed memory shares the device's addresses. */
static unsigned space_of(unsigned kind) { return kind == CULEAK_KIND_MANAGED ? CULEAK_KIND_DEVICE : kind; }

/* What a unit folded on one device since the last CHURN. */
struct fold {
    int32_t device;
    uint64_t n, bytes;
};

struct unit {
    uint64_t stack;
    uint32_t kind;
    struct fold *folds; /* by device, in the order they came */
    uint32_t nfolds;
    uint64_t live, live_count, peak, told_peak;
    /* live at the process's latest device-memory peak, saved at its first change since
     * (the model's touch_unit) */
    uint64_t at_peak, at_peak_count, at_peak_epoch;
    uint64_t tid, told_tid;
    uint8_t threads, told_threads;  /* 0 none, 1 one thread, 2 several */
    uint8_t dirty;                  /* in the dirty list */
};

struct live {
    uint64_t addr, ctx, size;
    uint32_t unit, pend, gen, refs;
    int32_t device;
    uint8_t space, used;
    uint8_t first; /* its unit's first allocation: written, never folded */
};

struct pend {
    struct culeak_event e;
    uint8_t type, dead;
};

struct counter {
    uint64_t live, peak, t_ns, seq;
    uint8_t risen;
};

struct culeak_agg {
    uint64_t interval_ns, next_tick;
    size_t max_pending;
    culeak_agg_write write;
    void *ctx;
    struct culeak_decoder dec;
    struct culeak_enc enc;
    uint8_t rtype;            /* the record being decoded, and its bytes */
    const uint8_t *raw;
    size_t raw_len;
    int broken;
    /* input carried between feeds, output gathered in one feed */
    uint8_t *in, *out;
    size_t in_len, in_cap, out_len, out_cap;
    /* units by (stack, kind) */
    struct unit *units;
    size_t nunits, units_cap;
    struct u64map unit_index;
    uint32_t *dirty;
    size_t ndirty, dirty_cap;
    /* live allocations: open addressing by (space, addr) */
    struct live *live;
    size_t live_slots, nlive;
    /* allocations and frees held back since the last flush point */
    struct pend *pend;
    size_t npend, pend_cap;
    uint32_t gen;
    /* per device row (0: all devices), per slot */
    int32_t devices[MAX_DEVICES];
    int ndev;
    struct counter counters[MAX_DEVICES + 1][SLOTS];
    uint64_t t_first, t_last; /* of the folded allocations since the last CHURN */
    uint64_t peak_epoch;      /* bumped at each new device-memory peak of the process */
    int peak_moved;           /* since the last CHURN */
    uint32_t *touched;        /* units changed since the latest peak */
    size_t ntouched, touched_cap;
    struct culeak_agg_stats st;
};

/* ---- output ---- */

static uint8_t *room(struct culeak_agg *a, size_t n)
{
    if (a->out_len + n > a->out_cap) {
        size_t cap = a->out_cap ? a->out_cap : 65536;
        while (cap < a->out_len + n)
            cap *= 2;
        uint8_t *p = realloc(a->out, cap);
        if (!p)
            return NULL;
        a->out = p;
        a->out_cap = cap;
    }
    return a->out + a->out_len;
}

static void put(struct culeak_agg *a, const void *p, size_t n)
{
    uint8_t *r = room(a, n);
    if (!r) {
        a->broken = 1;
        return;
    }
    memcpy(r, p, n);
    a->out_len += n;
}

static void emit(struct culeak_agg *a)
{
    if (a->out_len)
        a->write(a->ctx, a->out, a->out_len);
    a->st.bytes_out += a->out_len;
    a->out_len = 0;
}

/* An event written again: its own seq (the encoder steps from the last one written). */
static void write_event(struct culeak_agg *a, const struct culeak_event *e, uint8_t type)
{
    uint8_t rec[CULEAK_ENC_EVENT_MAX];
    struct culeak_ev ev = {e->op, e->api, e->kind, e->device, e->ctx, e->size, e->addr, e->aux, e->result};
    a->enc.seq = e->seq > a->enc.seq_put ? e->seq - 1 : a->enc.seq_put;
    size_t n;
    if (type == CULEAK_REC_FREE || type == CULEAK_REC_FREE_AGAIN)
        n = culeak_enc_free(&a->enc, rec, &ev, e->t_ns, e->tid);
    else if (e->op == CULEAK_OP_ALLOC && (type != CULEAK_REC_EVENT || (e->flags & CULEAK_EVENT_HELD)))
        n = culeak_enc_alloc(&a->enc, rec, &ev, e->t_ns, e->tid, (uint32_t)e->stack, (e->flags & CULEAK_EVENT_HELD) != 0);
    else
        n = culeak_enc_event(&a->enc, rec, &ev, e->t_ns, e->tid, (uint32_t)e->stack);
    put(a, rec, n);
}

/* The pending list written, in its order, but for the allocations freed meanwhile. */
static void flush_pending(struct culeak_agg *a)
{
    for (size_t i = 0; i < a->npend; i++)
        if (!a->pend[i].dead)
            write_event(a, &a->pend[i].e, a->pend[i].type);
    a->npend = 0;
    a->gen++; /* no live allocation is pending now */
}

static int cmp_unit(const void *x, const void *y, void *units)
{
    const struct unit *a = (const struct unit *)units + *(const uint32_t *)x;
    const struct unit *b = (const struct unit *)units + *(const uint32_t *)y;
    if (a->stack != b->stack)
        return a->stack < b->stack ? -1 : 1;
    return a->kind < b->kind ? -1 : a->kind > b->kind;
}

/* Units by stack (each written as a step from the one before); qsort_r is glibc's, so a
 * shell sort keeps this portable. */
static void sort_list(struct culeak_agg *a, uint32_t *v, size_t n)
{
    for (size_t gap = n / 2; gap > 0; gap /= 2)
        for (size_t i = gap; i < n; i++)
            for (size_t j = i; j >= gap && cmp_unit(&v[j - gap], &v[j], a->units) > 0; j -= gap) {
                uint32_t t = v[j];
                v[j] = v[j - gap];
                v[j - gap] = t;
            }
}

/* The CHURN record: the units that folded allocations, rose or met a new thread, and the
 * counters that rose, since the last one. Written even when empty at the stream's start
 * (it says the recording is aggregated, and at which interval). */
static void write_churn(struct culeak_agg *a, int always)
{
    size_t npeaks = 0;
    for (int d = 0; d <= a->ndev; d++)
        for (int s = 0; s < SLOTS; s++)
            npeaks += a->counters[d][s].risen;
    if (!always && !a->ndirty && !npeaks)
        return;
    sort_list(a, a->dirty, a->ndirty);
    size_t nentries = 0;
    for (size_t i = 0; i < a->ndirty; i++) {
        const struct unit *u = &a->units[a->dirty[i]];
        size_t n = 0;
        for (uint32_t f = 0; f < u->nfolds; f++)
            n += u->folds[f].n > 0;
        nentries += n ? n : 1;
    }
    size_t cap = CULEAK_REC_HEADROOM + 6 * CULEAK_UVARINT_MAX + nentries * 7 * CULEAK_UVARINT_MAX +
                 npeaks * 5 * CULEAK_UVARINT_MAX + (a->peak_moved ? a->ntouched * 4 * CULEAK_UVARINT_MAX : 0);
    if (a->peak_moved)
        sort_list(a, a->touched, a->ntouched);
    uint8_t *rec = room(a, cap);
    if (!rec) {
        a->broken = 1;
        return;
    }
    uint8_t *p = rec + CULEAK_REC_HEADROOM;
    size_t k = culeak_put_u(p, a->interval_ns);
    k += culeak_put_u(p + k, a->t_first);
    k += culeak_put_u(p + k, a->t_last);
    k += culeak_put_u(p + k, nentries);
    uint64_t stack = 0;
    for (size_t i = 0; i < a->ndirty; i++) {
        struct unit *u = &a->units[a->dirty[i]];
        int thread_new = u->threads != u->told_threads || (u->threads && u->tid != u->told_tid);
        uint64_t peak = u->peak > u->told_peak ? u->peak : 0;
        uint64_t thread = thread_new ? (u->tid << 1 | (u->threads > 1)) + 1 : 0;
        /* an entry per device that folded (the unit's peak and thread on the first), or
         * one with no count that tells only those */
        int written = 0;
        for (uint32_t f = 0; f <= u->nfolds; f++) {
            if (f == u->nfolds ? written : !u->folds[f].n)
                continue;
            uint64_t has_peak = !written && peak, has_thread = !written && thread;
            k += culeak_put_u(p + k, u->stack - stack);
            stack = u->stack;
            /* the kind with two bits that say which of peak and thread follow */
            k += culeak_put_u(p + k, (uint64_t)u->kind << 2 | has_peak | has_thread << 1);
            k += culeak_put_z(p + k, f < u->nfolds ? u->folds[f].device : -1);
            k += culeak_put_u(p + k, f < u->nfolds ? u->folds[f].n : 0);
            k += culeak_put_u(p + k, f < u->nfolds ? u->folds[f].bytes : 0);
            if (has_peak)
                k += culeak_put_u(p + k, peak);
            if (has_thread)
                k += culeak_put_u(p + k, thread);
            written = 1;
            if (f < u->nfolds)
                u->folds[f].n = u->folds[f].bytes = 0;
        }
        u->told_peak = u->peak;
        u->told_tid = u->tid;
        u->told_threads = u->threads;
        u->dirty = 0;
    }
    k += culeak_put_u(p + k, npeaks);
    for (int d = 0; d <= a->ndev; d++)
        for (int s = 0; s < SLOTS; s++) {
            struct counter *c = &a->counters[d][s];
            if (!c->risen)
                continue;
            k += culeak_put_u(p + k, d ? culeak_zigzag(a->devices[d - 1]) + 1 : 0);
            k += culeak_put_u(p + k, s == CULEAK_KIND_COUNT ? CULEAK_CHURN_DEVICE_MEMORY : (uint64_t)s);
            k += culeak_put_u(p + k, c->peak);
            k += culeak_put_u(p + k, c->t_ns);
            k += culeak_put_u(p + k, c->seq);
            c->risen = 0;
        }
    /* what each unit changed since the peak held at it: the model takes every other
     * unit's value at the peak from its live bytes now */
    k += culeak_put_u(p + k, a->peak_moved ? a->ntouched + 1 : 0);
    stack = 0;
    for (size_t i = 0; a->peak_moved && i < a->ntouched; i++) {
        struct unit *u = &a->units[a->touched[i]];
        k += culeak_put_u(p + k, u->stack - stack);
        stack = u->stack;
        k += culeak_put_u(p + k, u->kind);
        k += culeak_put_u(p + k, u->at_peak);
        k += culeak_put_u(p + k, u->at_peak_count);
    }
    a->peak_moved = 0;
    a->out_len += culeak_rec_finish(rec, CULEAK_REC_CHURN, k);
    a->ndirty = 0;
    a->t_first = a->t_last = 0;
    a->st.churn_records++;
}

static void flush_all(struct culeak_agg *a)
{
    flush_pending(a);
    write_churn(a, 0);
}

/* ---- what the model would count ---- */

static int device_row(struct culeak_agg *a, int32_t device)
{
    device = device < INT8_MIN ? INT8_MIN : device > INT8_MAX ? INT8_MAX : device; /* as the model keeps it */
    for (int i = 0; i < a->ndev; i++)
        if (a->devices[i] == device)
            return i + 1;
    if (a->ndev == MAX_DEVICES)
        return MAX_DEVICES;
    a->devices[a->ndev++] = device;
    return a->ndev;
}

/* 1 when the counter reached a new high. */
static int counter_move(struct counter *c, uint64_t size, int up, const struct culeak_event *e)
{
    if (!up) {
        c->live -= size;
        return 0;
    }
    c->live += size;
    if (c->live <= c->peak)
        return 0;
    c->peak = c->live;
    c->t_ns = e->t_ns;
    c->seq = e->seq;
    c->risen = 1;
    return 1;
}

static void touched_add(struct culeak_agg *a, uint32_t ui)
{
    if (a->ntouched == a->touched_cap) {
        size_t cap = a->touched_cap ? a->touched_cap * 2 : 256;
        uint32_t *p = realloc(a->touched, cap * sizeof *p);
        if (!p) {
            a->broken = 1;
            return;
        }
        a->touched = p;
        a->touched_cap = cap;
    }
    a->touched[a->ntouched++] = ui;
}

/* Before a unit changes: its value at the latest peak is the one it has now, when this
 * is its first change since. */
static void touch(struct culeak_agg *a, struct unit *u)
{
    if (u->at_peak_epoch == a->peak_epoch)
        return;
    u->at_peak = u->live;
    u->at_peak_count = u->live_count;
    u->at_peak_epoch = a->peak_epoch;
    touched_add(a, (uint32_t)(u - a->units));
}

static void count(struct culeak_agg *a, struct unit *u, int32_t device, uint64_t size, int up,
                  const struct culeak_event *e)
{
    int row = device_row(a, device);
    unsigned kind = u->kind < CULEAK_KIND_COUNT ? u->kind : CULEAK_KIND_NONE;
    touch(a, u);
    if (up) {
        u->live += size;
        u->live_count++;
        if (u->live > u->peak)
            u->peak = u->live;
    } else {
        u->live -= size;
        u->live_count--;
    }
    counter_move(&a->counters[0][kind], size, up, e);
    counter_move(&a->counters[row][kind], size, up, e);
    if (culeak_agg_kind_is_device_memory(kind)) {
        counter_move(&a->counters[row][CULEAK_KIND_COUNT], size, up, e);
        if (counter_move(&a->counters[0][CULEAK_KIND_COUNT], size, up, e)) { /* a new peak of the process */
            a->peak_epoch++;
            a->peak_moved = 1;
            a->ntouched = 0;
        }
    }
}

static void mark_dirty(struct culeak_agg *a, uint32_t ui)
{
    if (a->units[ui].dirty)
        return;
    if (a->ndirty == a->dirty_cap) {
        size_t cap = a->dirty_cap ? a->dirty_cap * 2 : 256;
        uint32_t *p = realloc(a->dirty, cap * sizeof *p);
        if (!p) {
            a->broken = 1;
            return;
        }
        a->dirty = p;
        a->dirty_cap = cap;
    }
    a->dirty[a->ndirty++] = ui;
    a->units[ui].dirty = 1;
}

static long unit_of(struct culeak_agg *a, uint64_t stack, uint32_t kind)
{
    uint64_t key = stack << 8 ^ kind;
    uint32_t i = u64map_get(&a->unit_index, key);
    if (i != UINT32_MAX && a->units[i].stack == stack && a->units[i].kind == kind)
        return i;
    if (i != UINT32_MAX) /* a key shared by two units (a stack past 2^56): counted apart, not indexed */
        for (size_t k = 0; k < a->nunits; k++)
            if (a->units[k].stack == stack && a->units[k].kind == kind)
                return (long)k;
    if (a->nunits == a->units_cap) {
        size_t cap = a->units_cap ? a->units_cap * 2 : 1024;
        struct unit *p = realloc(a->units, cap * sizeof *p);
        if (!p)
            return -1;
        a->units = p;
        a->units_cap = cap;
    }
    /* it held nothing at the latest peak: the model is told so (it meets the unit later) */
    a->units[a->nunits] = (struct unit){.stack = stack, .kind = kind, .at_peak_epoch = a->peak_epoch};
    if (i == UINT32_MAX && u64map_put(&a->unit_index, key, (uint32_t)a->nunits) != 0)
        return -1;
    a->nunits++;
    touched_add(a, (uint32_t)(a->nunits - 1));
    return (long)(a->nunits - 1);
}

/* ---- the live table ---- */

static uint64_t live_hash(unsigned space, uint64_t addr)
{
    uint64_t h = (addr ^ (uint64_t)space << 59) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

static struct live *live_find(struct culeak_agg *a, unsigned space, uint64_t addr)
{
    if (!a->live_slots)
        return NULL;
    size_t mask = a->live_slots - 1;
    for (size_t i = live_hash(space, addr) & mask;; i = (i + 1) & mask) {
        struct live *l = &a->live[i];
        if (!l->used)
            return NULL;
        if (l->addr == addr && l->space == space)
            return l;
    }
}

static int live_grow(struct culeak_agg *a)
{
    size_t slots = a->live_slots ? a->live_slots * 2 : 4096;
    struct live *nl = calloc(slots, sizeof *nl);
    if (!nl)
        return -1;
    for (size_t k = 0; k < a->live_slots; k++) {
        struct live *l = &a->live[k];
        if (!l->used)
            continue;
        size_t i = live_hash(l->space, l->addr) & (slots - 1);
        while (nl[i].used)
            i = (i + 1) & (slots - 1);
        nl[i] = *l;
    }
    free(a->live);
    a->live = nl;
    a->live_slots = slots;
    return 0;
}

static struct live *live_insert(struct culeak_agg *a, unsigned space, uint64_t addr)
{
    if ((a->nlive + 1) * 4 > a->live_slots * 3 && live_grow(a) != 0)
        return NULL;
    size_t mask = a->live_slots - 1, i = live_hash(space, addr) & mask;
    while (a->live[i].used)
        i = (i + 1) & mask;
    a->nlive++;
    a->live[i] = (struct live){.addr = addr, .space = (uint8_t)space, .used = 1};
    return &a->live[i];
}

/* Removal by shifting back the entries after it that probed past its slot. */
static void live_remove(struct culeak_agg *a, struct live *l)
{
    size_t mask = a->live_slots - 1, hole = (size_t)(l - a->live);
    a->live[hole].used = 0;
    a->nlive--;
    for (size_t i = (hole + 1) & mask; a->live[i].used; i = (i + 1) & mask) {
        size_t home = live_hash(a->live[i].space, a->live[i].addr) & mask;
        /* it may move into the hole when its home is not between the hole and it */
        if (((i - home) & mask) >= ((i - hole) & mask)) {
            a->live[hole] = a->live[i];
            a->live[i].used = 0;
            hole = i;
        }
    }
}

static int is_pending(const struct culeak_agg *a, const struct live *l) { return l->gen == a->gen && l->pend < a->npend; }

static void end_live(struct culeak_agg *a, struct live *l, const struct culeak_event *e)
{
    count(a, &a->units[l->unit], l->device, l->size, 0, e);
    live_remove(a, l);
}

/* ---- records ---- */

static void pend_push(struct culeak_agg *a, const struct culeak_event *e)
{
    if (a->npend == a->pend_cap) {
        size_t cap = a->pend_cap ? a->pend_cap * 2 : 1024;
        struct pend *p = realloc(a->pend, cap * sizeof *p);
        if (!p) { /* no room to hold it back: written now, in order */
            flush_pending(a);
            write_event(a, e, a->rtype);
            return;
        }
        a->pend = p;
        a->pend_cap = cap;
    }
    a->pend[a->npend++] = (struct pend){*e, a->rtype, 0};
}

static void tick(struct culeak_agg *a, uint64_t t)
{
    if (!a->next_tick) {
        a->next_tick = t + a->interval_ns;
    } else if (t >= a->next_tick) {
        flush_all(a);
        a->next_tick = t + a->interval_ns;
    }
}

static void on_alloc(struct culeak_agg *a, const struct culeak_event *e)
{
    unsigned space = space_of(e->kind);
    struct live *old = live_find(a, space, e->addr);
    if (old) { /* its free was missed: the model ends it here, as the full recording says */
        flush_pending(a);
        end_live(a, old, e);
    }
    size_t had = a->nunits;
    long ui = unit_of(a, e->stack, e->kind);
    struct live *l = ui < 0 ? NULL : live_insert(a, space, e->addr);
    if (!l) { /* out of memory: no folding for it */
        a->broken = 1;
        return;
    }
    l->ctx = e->ctx;
    l->size = e->size;
    l->unit = (uint32_t)ui;
    l->device = e->device;
    struct unit *u = &a->units[ui];
    if (!u->threads) {
        u->tid = e->tid;
        u->threads = 1;
    } else if (u->tid != e->tid) {
        u->threads = 2;
    }
    if (u->threads != u->told_threads || u->tid != u->told_tid)
        mark_dirty(a, (uint32_t)ui);
    count(a, u, e->device, e->size, 1, e);
    if (a->npend >= a->max_pending)
        flush_pending(a);
    l->gen = a->gen;
    l->pend = (uint32_t)a->npend;
    /* a unit's first allocation is written, in its place: the model meets the units (and
       numbers the sites) in their order, from their first thread and time */
    l->first = a->nunits > had;
    pend_push(a, e);
}

static struct fold *fold_of(struct culeak_agg *a, struct unit *u, int32_t device)
{
    for (uint32_t i = 0; i < u->nfolds; i++)
        if (u->folds[i].device == device)
            return &u->folds[i];
    struct fold *f = realloc(u->folds, (u->nfolds + 1) * sizeof *f);
    if (!f)
        return NULL;
    u->folds = f;
    f[u->nfolds] = (struct fold){device, 0, 0};
    (void)a;
    return &f[u->nfolds++];
}

static void on_free(struct culeak_agg *a, const struct culeak_event *e)
{
    struct live *l = e->addr ? live_find(a, space_of(e->kind), e->addr) : NULL;
    if (l && l->refs) { /* an extra reference goes, the memory stays */
        l->refs--;
    } else if (l && is_pending(a, l) && !l->first) { /* made and freed since the last flush point: folded */
        struct fold *f = fold_of(a, &a->units[l->unit], l->device);
        if (!f) { /* out of memory: it stays in the pending list, written */
            end_live(a, l, e);
            pend_push(a, e);
            return;
        }
        a->pend[l->pend].dead = 1;
        f->n++;
        f->bytes += l->size;
        if (!a->t_first)
            a->t_first = a->pend[l->pend].e.t_ns;
        a->t_last = e->t_ns;
        mark_dirty(a, l->unit);
        a->st.folded++;
        end_live(a, l, e);
        return;
    } else if (l) {
        end_live(a, l, e);
    }
    if (a->npend >= a->max_pending)
        flush_pending(a);
    pend_push(a, e);
}

/* A context's or device's allocations ended at once (FREE_ALL): as the model does. */
static void on_free_all(struct culeak_agg *a, const struct culeak_event *e)
{
    for (size_t i = 0; i < a->live_slots; i++) {
        struct live *l = &a->live[i];
        if (l->used && l->device == e->device && (!e->ctx || l->ctx == e->ctx)) {
            end_live(a, l, e);
            i--; /* an entry shifted back into this slot is looked at again */
        }
    }
}

static int on_event(void *ctx, const struct culeak_event *e)
{
    struct culeak_agg *a = ctx;
    tick(a, e->t_ns);
    int plain = e->result == 0 && e->api != CULEAK_API_BEFORE_ATTACH && !(e->flags & CULEAK_EVENT_HELD);
    if (plain && e->op == CULEAK_OP_ALLOC) {
        on_alloc(a, e);
        return 0;
    }
    if (plain && e->op == CULEAK_OP_FREE) {
        on_free(a, e);
        return 0;
    }
    flush_pending(a); /* anything else is a flush point: written as it came */
    if (e->result == 0 && e->op == CULEAK_OP_ALLOC) { /* before-attach or held: counted, never folded */
        long ui = unit_of(a, e->stack, e->kind);
        struct live *l = ui < 0 ? NULL : live_insert(a, space_of(e->kind), e->addr);
        if (l) {
            *l = (struct live){.addr = e->addr, .ctx = e->ctx, .size = e->size, .unit = (uint32_t)ui,
                               .gen = a->gen - 1, .device = e->device, .space = l->space, .used = 1};
            count(a, &a->units[ui], e->device, e->size, 1, e);
        }
    } else if (e->result == 0 && e->op == CULEAK_OP_RETAIN) {
        struct live *l = live_find(a, CULEAK_KIND_VMM_PHYSICAL, e->addr);
        if (l)
            l->refs++;
    } else if (e->result == 0 && e->op == CULEAK_OP_FREE_ALL) {
        on_free_all(a, e);
    }
    write_event(a, e, a->rtype);
    return 0;
}

static int on_mark(void *ctx, const struct culeak_mark *m)
{
    struct culeak_agg *a = ctx;
    tick(a, m->t_ns);
    flush_pending(a);
    uint8_t *rec = room(a, CULEAK_ENC_EVENT_MAX + CULEAK_UVARINT_MAX + m->label.n);
    if (!rec) {
        a->broken = 1;
        return 0;
    }
    struct culeak_enc_mem mem = {m->mem_device, m->mem_free, m->mem_total};
    a->enc.seq = m->seq > a->enc.seq_put ? m->seq - 1 : a->enc.seq_put;
    a->out_len += culeak_enc_mark(&a->enc, rec, m->t_ns, m->tid, m->label.p, m->label.n, (unsigned)m->flags,
                                  m->mem_total ? &mem : NULL);
    return 0;
}

static int on_exit_rec(void *ctx, const struct culeak_exit *x)
{
    struct culeak_agg *a = ctx;
    flush_all(a);
    uint8_t rec[CULEAK_ENC_EVENT_MAX];
    a->enc.seq = x->seq > a->enc.seq_put ? x->seq - 1 : a->enc.seq_put;
    put(a, rec, culeak_enc_exit(&a->enc, rec, x->t_ns, (unsigned)x->reason));
    return 0;
}

static int on_hello(void *ctx, const struct culeak_hello *h)
{
    struct culeak_agg *a = ctx;
    put(a, a->raw, a->raw_len);
    a->enc.t_last = h->monotonic_ns;
    write_churn(a, 1); /* says, from the start, that this recording is aggregated */
    return 0;
}

/* Records whose bytes step from nothing the filter changes: as they came. NODEs step
 * from the node before, and every node is written, in its order. */
static int as_is(void *ctx)
{
    struct culeak_agg *a = ctx;
    put(a, a->raw, a->raw_len);
    return 0;
}
static int on_modules(void *ctx, const struct culeak_modules *m) { (void)m; return as_is(ctx); }
static int on_frame(void *ctx, uint64_t id, uint64_t parent, uint64_t ip)
{
    (void)id, (void)parent, (void)ip;
    return as_is(ctx);
}
static int on_note(void *ctx, struct culeak_str t) { (void)t; return as_is(ctx); }
static int on_pyframe(void *ctx, const struct culeak_pyframe *f) { (void)f; return as_is(ctx); }

/* Records about the live allocations or the stream's gaps: a flush point first. */
static int after_flush(void *ctx)
{
    flush_pending(ctx);
    return as_is(ctx);
}
static int on_lost(void *ctx, uint64_t n, uint64_t first, uint64_t last)
{
    (void)n, (void)first, (void)last;
    return after_flush(ctx);
}
static int on_holder(void *ctx, uint64_t addr, struct culeak_str w)
{
    (void)addr, (void)w;
    return after_flush(ctx);
}
static int on_churn(void *ctx, const struct culeak_churn *c)
{
    (void)c;
    return after_flush(ctx); /* a stream aggregated already (never from a shim) */
}

struct culeak_agg *culeak_agg_new(uint64_t interval_ns, size_t max_pending, culeak_agg_write w, void *ctx)
{
    struct culeak_agg *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->interval_ns = interval_ns ? interval_ns : 1;
    a->max_pending = max_pending ? max_pending : PENDING_DEFAULT;
    a->write = w;
    a->ctx = ctx;
    a->gen = 1;
    u64map_init(&a->unit_index);
    struct culeak_sink sink = {
        .ctx = a, .hello = on_hello, .modules = on_modules, .frame = on_frame, .event = on_event,
        .mark = on_mark, .exit = on_exit_rec, .note = on_note, .pyframe = on_pyframe, .lost = on_lost,
        .holder = on_holder, .churn = on_churn,
    };
    culeak_decoder_init(&a->dec, &sink, 1);
    if (culeak_decoder_feed(&a->dec, CULEAK_MAGIC, CULEAK_MAGIC_LEN) != 0) {
        culeak_agg_free(a);
        return NULL;
    }
    return a;
}

static void give_up(struct culeak_agg *a, const char *why)
{
    flush_all(a);
    char text[400];
    int n = snprintf(text, sizeof text, "aggregated recording cut here: %s", why);
    uint8_t rec[CULEAK_ENC_NOTE_MAX(400)];
    put(a, rec, culeak_enc_note(rec, text, n < 0 ? 0 : (size_t)n < sizeof text ? (size_t)n : sizeof text - 1));
    a->broken = 2;
}

int culeak_agg_feed(struct culeak_agg *a, const void *p, size_t n)
{
    if (a->broken == 2)
        return -1;
    a->st.bytes_in += n;
    if (a->in_len + n > a->in_cap) {
        size_t cap = a->in_cap ? a->in_cap : 65536;
        while (cap < a->in_len + n)
            cap *= 2;
        uint8_t *b = realloc(a->in, cap);
        if (!b) {
            give_up(a, "out of memory");
            emit(a);
            return -1;
        }
        a->in = b;
        a->in_cap = cap;
    }
    memcpy(a->in + a->in_len, p, n);
    a->in_len += n;
    size_t used = 0;
    while (used < a->in_len && !a->broken) {
        const uint8_t *payload;
        size_t plen;
        long got = culeak_next_record(a->in + used, a->in_len - used, &a->rtype, &payload, &plen);
        if (got == 0)
            break;
        if (got < 0) {
            give_up(a, "a record's length is out of range");
            break;
        }
        a->raw = a->in + used;
        a->raw_len = (size_t)got;
        if (culeak_decoder_feed(&a->dec, a->raw, a->raw_len) != 0) {
            give_up(a, a->dec.error);
            break;
        }
        if (a->rtype >= CULEAK_CMD_WATCH || (a->rtype > CULEAK_REC_CHURN && a->rtype != 9))
            after_flush(a); /* a record this culeak does not know: kept, in its order */
        used += (size_t)got;
    }
    if (a->broken == 1)
        give_up(a, "out of memory");
    memmove(a->in, a->in + used, a->in_len - used);
    a->in_len -= used;
    emit(a);
    return a->broken ? -1 : 0;
}

void culeak_agg_finish(struct culeak_agg *a)
{
    if (a->broken == 2)
        return;
    flush_all(a);
    emit(a);
}

void culeak_agg_stats(const struct culeak_agg *a, struct culeak_agg_stats *st)
{
    *st = a->st;
    st->live = a->nlive;
    st->units = a->nunits;
    st->pending_cap = a->pend_cap;
}

void *culeak_agg_ctx(const struct culeak_agg *a) { return a->ctx; }

void culeak_agg_free(struct culeak_agg *a)
{
    if (!a)
        return;
    culeak_decoder_free(&a->dec);
    u64map_free(&a->unit_index);
    free(a->in);
    free(a->out);
    for (size_t i = 0; i < a->nunits; i++)
        free(a->units[i].folds);
    free(a->units);
    free(a->dirty);
    free(a->touched);
    free(a->live);
    free(a->pend);
    free(a);
}
