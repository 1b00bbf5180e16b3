/* Growth suspects (suspects.h): at each mark, every site's live bytes go into a small
 * ring per site and series of marks; the verdict is computed on demand from the rings.
 * Memory: per process and series, (window + 1) numbers per site that has held bytes at
 * one of the series' marks, never a copy of the table per mark.
 *
 * Cost: a mark costs what changed since the series' last mark, not the whole table. The
 * units of a site (one counting slot) form an aggregate; a unit whose live bytes change
 * puts its aggregate on the dirty list of every series (apply.c calls growth_on_change).
 * At a mark only the dirty aggregates are summed again; a ring not written at a mark held
 * the same bytes as at its last write, which the ring and its lowest mark say lazily
 * (ring_write, ring_at, ring_low). A series' first mark walks every unit once. */
#include "model_internal.h"
#include "suspects.h"
#include "common/wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING (MODEL_SUSPECT_WINDOW + 1)
#define KEY_MAX 128
#define NUMS_MAX 4              /* numbers of a label compared from one mark to the next */
#define CANDIDATES_MAX 4096     /* patterns not followed whose numbers are kept */

struct sample {
    uint64_t seq, t_ns;
    const char *label;
};

struct site_ring {
    uint32_t site;
    uint8_t slot;               /* MODEL_KIND_DEVICE_MEMORY or a kind */
    uint64_t stack;             /* member stack with the most bytes at the latest mark */
    uint64_t v[RING];           /* live bytes at mark n: v[n % RING], up to the last write */
    uint64_t val, next;         /* the last write (at mark next - 1): held since; next 0: none */
    uint64_t low_bytes, low_n;  /* running minimum and the last mark at it (as of the */
    uint64_t low_seq;           /* last write: see ring_low) */
    const char *low_label;
    /* step-wise growth: the mark since which it has never fallen, its bytes then, and the
     * marks since at which it rose */
    uint64_t run_n, run_bytes;
    uint32_t steps;
    /* cycles: the most and the least it has held since it first held bytes, and the most
     * it held before it last fell back to that least (0: it never did) */
    uint64_t top, floor, cycle_top;
    int held;
};

/* A label pattern and how its numbers went from one mark to the next. */
struct pattern {
    char key[KEY_MAX];
    uint64_t nums[NUMS_MAX];
    unsigned nnums;
    uint64_t seen;              /* its marks so far */
    int rose, counted;          /* at every recurrence its count rose / rose by exactly one */
};

/* the marks of one label pattern */
struct mseries {
    struct pattern pt;
    uint64_t n;                 /* marks followed so far */
    struct sample s[RING];
    struct site_ring *sites;
    size_t nsites, cap;
    struct u64map index;        /* site << 5 | slot -> sites[] */
    uint32_t *dirty;            /* aggregates changed since the last mark */
    size_t ndirty, dirty_cap;
    int rescan;                 /* a change went unrecorded (out of memory): walk them all */
};

/* A site's units of one counting slot in one process. */
struct agg {
    uint32_t site;
    uint8_t slot;
    uint8_t dirty;              /* bit k: on series k's dirty list */
    uint32_t units;             /* first unit + 1 (unit.growth_next links the rest); 0: none */
};

_Static_assert(MODEL_SUSPECT_SERIES <= 8, "agg.dirty has a bit per series");

struct growth {
    struct mseries series[MODEL_SUSPECT_SERIES];
    int nseries;
    struct agg *aggs;
    size_t naggs, aggs_cap;
    struct u64map agg_index;    /* site << 5 | slot -> aggs[] */
    struct pattern *cands;      /* patterns seen but not followed */
    size_t ncands, cands_cap;
    struct u64map cand_index;   /* hash of the key -> cands[] */
};

static void series_clear(struct mseries *s)
{
    free(s->sites);
    u64map_free(&s->index);
    free(s->dirty);
}

void growth_free(struct growth *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->nseries; i++)
        series_clear(&g->series[i]);
    free(g->aggs);
    u64map_free(&g->agg_index);
    free(g->cands);
    u64map_free(&g->cand_index);
    free(g);
}

/* ---------------------------------------------------------------- label patterns */

/* The label with each run of digits as one '#', and the values of its first runs
 * (saturating: absurd numbers compare as the largest). */
static void series_key(const char *label, char *key, uint64_t *nums, unsigned *nnums)
{
    size_t n = 0;
    unsigned runs = 0;
    for (const char *c = label; *c; c++) {
        int digit = *c >= '0' && *c <= '9';
        int start = digit && (c == label || !(c[-1] >= '0' && c[-1] <= '9'));
        runs += start;
        if (digit && runs <= NUMS_MAX) {
            uint64_t *v = &nums[runs - 1];
            if (start)
                *v = 0;
            *v = *v > (UINT64_MAX - 9) / 10 ? UINT64_MAX : *v * 10 + (uint64_t)(*c - '0');
        }
        if (n + 1 >= KEY_MAX)
            continue;
        if (!digit)
            key[n++] = *c;
        else if (start)
            key[n++] = '#';
    }
    key[n] = 0;
    *nnums = runs < NUMS_MAX ? runs : NUMS_MAX;
}

/* Another mark of the pattern: did its count go up (the first number that differs), and
 * by one? */
static void pattern_seen(struct pattern *pt, const uint64_t *nums, unsigned nnums)
{
    if (pt->seen == 0) {
        pt->rose = pt->counted = 1;
    } else {
        unsigned i = 0, n = nnums < pt->nnums ? nnums : pt->nnums;
        while (i < n && nums[i] == pt->nums[i])
            i++;
        int rose = i < n && nums[i] > pt->nums[i];
        pt->rose = pt->rose && rose;
        pt->counted = pt->counted && rose && nums[i] - pt->nums[i] == 1;
    }
    memcpy(pt->nums, nums, nnums * sizeof *nums);
    pt->nnums = nnums;
    pt->seen++;
}

/* How much a pattern looks like the job's iterations: 3 it counts up by one at every
 * mark ("iteration 5", "iteration 6"), 2 its numbers rise, 1 it recurs (operator
 * names), 0 it was seen once. */
static int pattern_rank(const struct pattern *pt)
{
    if (pt->seen < 2)
        return 0;
    return pt->nnums && pt->counted ? 3 : pt->nnums && pt->rose ? 2 : 1;
}

static uint64_t key_hash(const char *key)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const char *c = key; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    return h;
}

/* The candidate for key (added when new), or NULL (a hash shared with another key, the
 * cap reached, out of memory: that pattern is not kept). */
static struct pattern *candidate_for(struct growth *g, const char *key)
{
    uint64_t h = key_hash(key);
    uint32_t i = u64map_get(&g->cand_index, h);
    if (i != UINT32_MAX)
        return strcmp(g->cands[i].key, key) ? NULL : &g->cands[i];
    if (g->ncands == CANDIDATES_MAX)
        return NULL;
    if (g->ncands == g->cands_cap) {
        size_t cap = g->cands_cap ? g->cands_cap * 2 : 16;
        struct pattern *nc = realloc(g->cands, cap * sizeof *nc);
        if (!nc)
            return NULL;
        g->cands = nc;
        g->cands_cap = cap;
    }
    if (u64map_put(&g->cand_index, h, (uint32_t)g->ncands) != 0)
        return NULL;
    struct pattern *c = &g->cands[g->ncands++];
    memset(c, 0, sizeof *c);
    snprintf(c->key, sizeof c->key, "%s", key);
    return c;
}

static void series_init(struct growth *g, int k, const struct pattern *pt)
{
    struct mseries *s = &g->series[k];
    memset(s, 0, sizeof *s);
    s->pt = *pt;
    u64map_init(&s->index);
}

/* The followed series of this mark's pattern, or NULL. While there is room every new
 * pattern is followed from its first mark; then a pattern that ranks higher than the
 * lowest followed one (rank 2 at least: its numbers rise) takes its place from its
 * current mark on, so that operator ranges seen first do not keep the iterations out. */
static struct mseries *series_for(struct process *p, const char *label)
{
    char key[KEY_MAX];
    uint64_t nums[NUMS_MAX];
    unsigned nnums;
    series_key(label, key, nums, &nnums);
    struct growth *g = p->growth;
    if (!g && !(g = p->growth = calloc(1, sizeof *g)))
        return NULL;
    for (int i = 0; i < g->nseries; i++)
        if (!strcmp(g->series[i].pt.key, key)) {
            pattern_seen(&g->series[i].pt, nums, nnums);
            return &g->series[i];
        }
    if (g->nseries < MODEL_SUSPECT_SERIES) {
        struct pattern pt = {0};
        memcpy(pt.key, key, sizeof key);
        pattern_seen(&pt, nums, nnums);
        series_init(g, g->nseries, &pt);
        return &g->series[g->nseries++];
    }
    struct pattern *c = candidate_for(g, key);
    if (!c)
        return NULL;
    pattern_seen(c, nums, nnums);
    int rank = pattern_rank(c), victim = -1, victim_rank = rank;
    for (int i = 0; i < g->nseries; i++) { /* the lowest rank, then the fewest marks */
        int r = pattern_rank(&g->series[i].pt);
        if (r < victim_rank || (victim >= 0 && r == victim_rank && g->series[i].n < g->series[victim].n)) {
            victim = i;
            victim_rank = r;
        }
    }
    if (rank < 2 || victim < 0)
        return NULL;
    struct pattern taken = *c; /* (its candidate entry stays, unused while it is followed) */
    struct mseries *s = &g->series[victim];
    struct pattern *back = candidate_for(g, s->pt.key); /* the pattern left is a candidate again */
    if (back)
        *back = s->pt;
    for (size_t i = 0; i < s->ndirty; i++) /* its dirty bits go with it */
        g->aggs[s->dirty[i]].dirty &= (uint8_t)~(1u << victim);
    series_clear(s);
    series_init(g, victim, &taken);
    return s;
}

/* ---------------------------------------------------------------- aggregates */

/* Where a kind's bytes are counted: device-resident kinds together; kinds that are no
 * memory of their own (mappings, reservations, pools, IPC views) not at all. */
static int slot_of(unsigned kind)
{
    if (model_kind_is_device_memory(kind))
        return MODEL_KIND_DEVICE_MEMORY;
    switch (kind) {
    case CULEAK_KIND_NONE: case CULEAK_KIND_VMM_MAPPED: case CULEAK_KIND_ADDRESS_RESERVE:
    case CULEAK_KIND_IPC: case CULEAK_KIND_POOL:
        return -1;
    default:
        return (int)kind;
    }
}

/* The aggregate of a unit (joined on first sight), or NULL: not counted, out of memory. */
static struct agg *agg_of(struct growth *g, struct process *p, struct unit *u)
{
    if (u->growth_agg)
        return &g->aggs[u->growth_agg - 1];
    int slot = slot_of(u->kind);
    if (slot < 0)
        return NULL;
    uint64_t key = (uint64_t)u->site << 5 | (uint64_t)slot;
    uint32_t i = u64map_get(&g->agg_index, key);
    if (i == UINT32_MAX) {
        if (g->naggs == g->aggs_cap) {
            size_t cap = g->aggs_cap ? g->aggs_cap * 2 : 64;
            struct agg *na = realloc(g->aggs, cap * sizeof *na);
            if (!na)
                return NULL;
            g->aggs = na;
            g->aggs_cap = cap;
        }
        if (u64map_put(&g->agg_index, key, (uint32_t)g->naggs) != 0)
            return NULL;
        i = (uint32_t)g->naggs++;
        g->aggs[i] = (struct agg){.site = u->site, .slot = (uint8_t)slot};
    }
    struct agg *a = &g->aggs[i];
    u->growth_next = a->units;
    a->units = (uint32_t)(u - p->units) + 1;
    u->growth_agg = i + 1;
    return a;
}

void growth_on_change(struct process *p, struct unit *u)
{
    struct growth *g = p->growth;
    struct agg *a = agg_of(g, p, u);
    if (!a) {
        if (slot_of(u->kind) >= 0) /* out of memory: the next marks walk every unit */
            for (int k = 0; k < g->nseries; k++)
                g->series[k].rescan = 1;
        return;
    }
    unsigned all = (1u << g->nseries) - 1, add = all & ~(unsigned)a->dirty;
    for (int k = 0; add && k < g->nseries; k++) {
        if (!(add >> k & 1))
            continue;
        struct mseries *s = &g->series[k];
        if (s->ndirty == s->dirty_cap) {
            size_t cap = s->dirty_cap ? s->dirty_cap * 2 : 64;
            uint32_t *nd = realloc(s->dirty, cap * sizeof *nd);
            if (!nd) {
                s->rescan = 1;
                continue;
            }
            s->dirty = nd;
            s->dirty_cap = cap;
        }
        s->dirty[s->ndirty++] = (uint32_t)(a - g->aggs);
        a->dirty |= (uint8_t)(1u << k);
    }
}

/* ---------------------------------------------------------------- rings */

/* The live bytes of a ring at mark j (j past its creation, within the window). */
static uint64_t ring_at(const struct site_ring *r, uint64_t j)
{
    return j + 1 >= r->next ? r->val : r->v[j % RING];
}

/* Its lowest so far as of the series' latest mark: bytes, mark, seq and label. Marks
 * after the last write held the same bytes; if those were the lowest, the latest of them
 * is the last mark at the lowest. */
static void ring_low(const struct mseries *s, const struct site_ring *r, uint64_t upto, uint64_t *n,
                     uint64_t *seq, const char **label)
{
    *n = r->low_n;
    *seq = r->low_seq;
    *label = r->low_label;
    if (r->next && r->low_n == r->next - 1 && upto > r->low_n) {
        *n = upto;
        *seq = s->s[upto % RING].seq;
        *label = s->s[upto % RING].label;
    }
}

/* A site that falls back to its least and climbs again (a batch's tensor, sized by the
 * batch) only repeats a cycle until it passes the most it held before: a leak keeps
 * making new highs. */
static void ring_cycle(struct site_ring *r, uint64_t cur)
{
    if (!r->held) {
        r->held = 1;
        r->top = r->floor = cur;
        return;
    }
    if (cur <= r->floor) {
        if (r->top > cur)
            r->cycle_top = r->top;
        r->floor = cur;
    }
    if (cur > r->top)
        r->top = cur;
}

/* The ring's bytes at mark n (of mk): the marks it was not written at are filled in. */
static void ring_write(const struct mseries *s, struct site_ring *r, uint64_t n, uint64_t cur,
                       const struct model_mark *mk)
{
    if (n == 0) {
        r->run_bytes = cur; /* held from before the series: no step */
    } else if (cur < r->val) {
        r->run_n = n;
        r->run_bytes = cur;
        r->steps = 0;
    } else if (cur > r->val) {
        r->steps++;
    }
    ring_cycle(r, cur);
    if (r->next) {
        ring_low(s, r, n - 1, &r->low_n, &r->low_seq, &r->low_label);
        uint64_t from = r->next;
        if (n >= RING && from < n - RING + 1)
            from = n - RING + 1;
        for (uint64_t k = from; k < n; k++)
            r->v[k % RING] = r->val;
    }
    r->v[n % RING] = r->val = cur;
    r->next = n + 1;
    if (n == 0 || cur <= r->low_bytes) {
        r->low_bytes = cur;
        r->low_n = n;
        r->low_seq = mk->seq;
        r->low_label = mk->label;
    }
}

static struct site_ring *ring_new(struct mseries *s, uint32_t site, int slot)
{
    uint64_t key = (uint64_t)site << 5 | (uint64_t)slot;
    if (s->nsites == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        struct site_ring *nr = realloc(s->sites, cap * sizeof *nr);
        if (!nr)
            return NULL;
        s->sites = nr;
        s->cap = cap;
    }
    if (u64map_put(&s->index, key, (uint32_t)s->nsites) != 0)
        return NULL;
    struct site_ring *r = &s->sites[s->nsites++];
    memset(r, 0, sizeof *r); /* it held nothing at the earlier marks */
    r->site = site;
    r->slot = (uint8_t)slot;
    if (s->n > 0) { /* so its lowest so far: 0 bytes at the previous mark */
        const struct sample *prev = &s->s[(s->n - 1) % RING];
        r->next = s->n;
        r->low_n = s->n - 1;
        r->low_seq = prev->seq;
        r->low_label = prev->label;
    }
    return r;
}

/* An aggregate summed at a mark: bytes, the unit with the most (the first of them in
 * unit order), and its first unit holding any. */
struct agg_sum {
    uint32_t agg;
    uint64_t bytes, rep_bytes;
    size_t rep, first;
};

static void agg_sum(const struct process *p, const struct agg *a, struct agg_sum *out)
{
    out->bytes = out->rep_bytes = 0;
    out->rep = out->first = SIZE_MAX;
    for (uint32_t ui = a->units; ui; ui = p->units[ui - 1].growth_next) {
        const struct unit *u = &p->units[ui - 1];
        size_t i = ui - 1;
        if (u->live_bytes == 0)
            continue;
        out->bytes += u->live_bytes;
        if (i < out->first)
            out->first = i;
        if (u->live_bytes > out->rep_bytes || (u->live_bytes == out->rep_bytes && i < out->rep)) {
            out->rep_bytes = u->live_bytes;
            out->rep = i;
        }
    }
}

static int sum_cmp_first(const void *pa, const void *pb)
{
    const struct agg_sum *a = pa, *b = pb;
    return (a->first > b->first) - (a->first < b->first);
}

/* Writes the bytes of aggregate sums[i] at mark n; the rings of sites that first hold
 * bytes now are made in the order of their first unit (as a walk over the units meets
 * them). */
static void write_sums(const struct process *p, struct growth *g, struct mseries *s, struct agg_sum *sums,
                       size_t nsums, const struct model_mark *mk)
{
    size_t nnew = 0;
    for (size_t i = 0; i < nsums; i++) {
        const struct agg *a = &g->aggs[sums[i].agg];
        uint32_t ri = u64map_get(&s->index, (uint64_t)a->site << 5 | a->slot);
        if (ri == UINT32_MAX) {
            if (sums[i].bytes)
                sums[nnew++] = sums[i];
            continue;
        }
        struct site_ring *r = &s->sites[ri];
        if (sums[i].bytes)
            r->stack = p->units[sums[i].rep].stack;
        ring_write(s, r, s->n, sums[i].bytes, mk);
    }
    if (nnew > 1)
        qsort(sums, nnew, sizeof *sums, sum_cmp_first);
    for (size_t i = 0; i < nnew; i++) {
        const struct agg *a = &g->aggs[sums[i].agg];
        struct site_ring *r = ring_new(s, a->site, a->slot);
        if (!r)
            continue; /* out of memory: that site is not followed */
        r->stack = p->units[sums[i].rep].stack;
        ring_write(s, r, s->n, sums[i].bytes, mk);
    }
}

void growth_on_mark(struct model *m, struct process *p, const struct model_mark *mk)
{
    if (mk->flags & CULEAK_MARK_POP)
        return;
    struct mseries *s = series_for(p, mk->label);
    if (!s)
        return;
    struct growth *g = p->growth;
    int k = (int)(s - g->series);
    struct agg_sum *sums;
    size_t nsums = 0;
    if (s->n == 0 || s->rescan || m->growth_walk_all) { /* every aggregate: the series' first mark */
        for (size_t i = 0; i < p->nunits; i++)
            if (p->units[i].live_bytes)
                agg_of(g, p, &p->units[i]);
        for (size_t i = 0; i < s->ndirty; i++)
            g->aggs[s->dirty[i]].dirty &= (uint8_t)~(1u << k);
        s->ndirty = 0;
        s->rescan = 0;
        if (!(sums = malloc((g->naggs ? g->naggs : 1) * sizeof *sums)))
            return; /* out of memory: no sample at this mark */
        for (size_t i = 0; i < g->naggs; i++)
            sums[nsums++].agg = (uint32_t)i;
    } else {
        if (!(sums = malloc((s->ndirty ? s->ndirty : 1) * sizeof *sums))) {
            s->rescan = 1;
            return;
        }
        for (size_t i = 0; i < s->ndirty; i++) {
            sums[nsums++].agg = s->dirty[i];
            g->aggs[s->dirty[i]].dirty &= (uint8_t)~(1u << k);
        }
        s->ndirty = 0;
    }
    for (size_t i = 0; i < nsums; i++)
        agg_sum(p, &g->aggs[sums[i].agg], &sums[i]);
    write_sums(p, g, s, sums, nsums, mk);
    free(sums);
    s->s[s->n % RING] = (struct sample){mk->seq, mk->t_ns, mk->label};
    s->n++;
}

/* ---------------------------------------------------------------- verdicts */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static double median_i64(int64_t *v, unsigned n)
{
    qsort(v, n, sizeof *v, cmp_i64);
    return n % 2 ? (double)v[n / 2] : ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2;
}

/* The latest mark of the process that carried the device's memory. */
static const struct model_mark *memory_mark(const struct process *p)
{
    for (size_t i = p->nmarks; i-- > 0;)
        if (p->marks[i].mem_total)
            return &p->marks[i];
    return NULL;
}

static int push(struct model_suspects *out, size_t *cap, const struct model_suspect *x)
{
    if (out->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        struct model_suspect *nv = realloc(out->v, nc * sizeof *nv);
        if (!nv)
            return -1;
        out->v = nv;
        *cap = nc;
    }
    out->v[out->n++] = *x;
    return 0;
}

/* The rank of the series whose key this is (a suspect's series). */
static int series_rank(const struct process *p, const char *key)
{
    for (int i = 0; i < p->growth->nseries; i++)
        if (p->growth->series[i].pt.key == key)
            return pattern_rank(&p->growth->series[i].pt);
    return 0;
}

#define SHORT_ITERATION_S 0.010

static void judge_series(const struct process *p, const struct mseries *s, struct model_suspects *out,
                         size_t *cap, size_t first_of_proc, int *oom)
{
    if (s->n < MODEL_SUSPECT_MIN_INTERVALS + 1)
        return;
    unsigned w = s->n - 1 < MODEL_SUSPECT_WINDOW ? (unsigned)(s->n - 1) : MODEL_SUSPECT_WINDOW;
    unsigned need = (8 * w + 9) / 10; /* ceil(0.8 w) */
    uint64_t last = s->n - 1, first = last - w;
    int64_t dt[MODEL_SUSPECT_WINDOW], dv[MODEL_SUSPECT_WINDOW];
    for (unsigned i = 0; i < w; i++)
        dt[i] = (int64_t)(s->s[(first + i + 1) % RING].t_ns - s->s[(first + i) % RING].t_ns);
    double interval_s = median_i64(dt, w) / 1e9;
    /* Events are timed by the kernel's tick (1 to 4 ms, culeak-stream(5)): marks closer
     * than a few ticks come 0 or a tick apart, and their median says little. Below
     * SHORT_ITERATION_S an iteration is the window's mean. */
    if (interval_s < SHORT_ITERATION_S)
        interval_s = (double)(s->s[last % RING].t_ns - s->s[first % RING].t_ns) / w / 1e9;
    const struct model_mark *mem = memory_mark(p);
    for (size_t k = 0; k < s->nsites; k++) {
        const struct site_ring *r = &s->sites[k];
        unsigned rises = 0;
        for (unsigned i = 0; i < w; i++) {
            uint64_t a = ring_at(r, first + i), b = ring_at(r, first + i + 1);
            rises += b > a;
            dv[i] = (int64_t)(b - a);
        }
        uint64_t now = ring_at(r, last), then = ring_at(r, first);
        if (now <= then || now <= r->cycle_top) /* no growth, or a cycle's climb */
            continue;
        double per = median_i64(dv, w);
        int stepwise = 0;
        if (rises < need || per <= 0) {
            /* growth in steps (a leak on a path taken every few iterations): never fell
             * over a whole window, rose at STEP_MIN marks or more since it last fell, the
             * latest within the window; its growth is the mean over that run */
            if (w < MODEL_SUSPECT_WINDOW || r->run_n > first || r->steps < MODEL_SUSPECT_STEP_MIN)
                continue;
            stepwise = 1;
            per = (double)(now - r->run_bytes) / (double)(last - r->run_n);
            if (per < 1)
                continue;
        }
        if (per > 9e18) /* absurd input: keep the conversion below defined */
            per = 9e18;
        uint64_t low_n, low_seq;
        const char *low_label;
        ring_low(s, r, last, &low_n, &low_seq, &low_label);
        struct model_suspect x = {
            .proc = p->pub.index, .site = r->site, .kind = r->slot, .stack = r->stack, .series = s->pt.key,
            .intervals = w, .rises = rises, .marks = s->n, .last_label = s->s[last % RING].label,
            .live_bytes = now, .window_bytes = then, .per_mark = (int64_t)per, .since_label = low_label,
            .since_seq = low_seq, .since_bytes = r->low_bytes, .since_marks = last - low_n,
            .interval_s = interval_s, .device = -1, .running = model_process_running(&p->pub),
            .stepwise = stepwise,
        };
        int host = r->slot == CULEAK_KIND_HOST_PINNED || r->slot == CULEAK_KIND_HOST_REGISTERED;
        if (mem && !host) {
            x.forecast = 1;
            x.device = mem->mem_device;
            x.free_bytes = mem->mem_free;
            x.total_bytes = mem->mem_total;
            x.fill_marks = (double)((mem->mem_free + (uint64_t)x.per_mark - 1) / (uint64_t)x.per_mark);
            x.fill_s = x.fill_marks * interval_s;
        }
        /* a site suspect in several series: keep the series that counts iterations best
         * (pattern_rank), then the one with the most marks */
        size_t j = first_of_proc;
        while (j < out->n && !(out->v[j].site == x.site && out->v[j].kind == x.kind))
            j++;
        if (j < out->n) {
            int had = series_rank(p, out->v[j].series), rank = pattern_rank(&s->pt);
            if (had < rank || (had == rank && out->v[j].marks < x.marks))
                out->v[j] = x;
        } else if (push(out, cap, &x) != 0) {
            *oom = 1;
            return;
        }
    }
}

/* Soonest to fill its device first, then those without a forecast; fastest growing
 * first among equals. */
static int suspect_cmp(const void *pa, const void *pb)
{
    const struct model_suspect *a = pa, *b = pb;
    if (a->forecast != b->forecast)
        return a->forecast ? -1 : 1;
    if (a->forecast && a->fill_s != b->fill_s)
        return a->fill_s < b->fill_s ? -1 : 1;
    if (a->forecast && a->fill_marks != b->fill_marks)
        return a->fill_marks < b->fill_marks ? -1 : 1;
    if (a->per_mark != b->per_mark)
        return a->per_mark > b->per_mark ? -1 : 1;
    if (a->proc != b->proc)
        return a->proc - b->proc;
    return (a->site > b->site) - (a->site < b->site);
}

/* Tensor tracking: a pool's segments grow because its blocks do, and the blocks are the
 * suspect with the user's line; the segments' growth at the same site is no second cause. */
static void drop_pool_segments(struct model *m, int proc, struct model_suspects *out, size_t first)
{
    struct process *p = m->procs[proc];
    size_t k = first;
    for (size_t j = first; j < out->n; j++) {
        int pool = 0;
        for (unsigned kind = 0; out->v[j].kind == MODEL_KIND_DEVICE_MEMORY && !pool && kind < CULEAK_KIND_COUNT; kind++) {
            uint32_t ui = model_kind_is_device_memory(kind) ? u64map_get(&p->unit_index, out->v[j].stack << 5 | kind)
                                                            : UINT32_MAX;
            pool = ui != UINT32_MAX && unit_pool(m, proc, &p->units[ui]) != MODEL_CACHE_NONE;
        }
        if (!pool)
            out->v[k++] = out->v[j];
    }
    out->n = k;
}

int model_suspects(struct model *m, int proc, int names, struct model_suspects *out)
{
    memset(out, 0, sizeof *out);
    size_t cap = 0;
    int oom = 0;
    for (int i = 0; i < m->nprocs && !oom; i++) {
        if (proc != MODEL_ALL && proc != i)
            continue;
        const struct process *p = m->procs[i];
        if (!p->growth)
            continue;
        size_t first = out->n;
        for (int k = 0; k < p->growth->nseries && !oom; k++)
            judge_series(p, &p->growth->series[k], out, &cap, first, &oom);
        if (p->pools_tracked && !oom)
            drop_pool_segments(m, i, out, first);
    }
    if (oom) {
        model_suspects_free(out);
        return -1;
    }
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, suspect_cmp);
    for (size_t i = 0; names && i < out->n; i++) {
        struct model_row r = {0};
        /* the member stack stands for the site: a Python site's text gets its "via" line */
        const struct unit rep = {.stack = out->v[i].stack, .site = out->v[i].site};
        row_describe(m, MODEL_GROUP_SITE, out->v[i].site, out->v[i].proc, &rep, &r, 0);
        out->v[i].text = r.text;
        out->v[i].module = r.module;
    }
    return 0;
}

void model_suspects_free(struct model_suspects *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}
