/* Growth suspects (suspects.h): at each mark, every site's live bytes go into a small
 * ring per site and series of marks; the verdict is computed on demand from the rings.
 * Memory: per process and series, (window + 1) numbers per site that has held bytes at
 * one of the series' marks, never a copy of the table per mark. */
#include "model_internal.h"
#include "suspects.h"
#include "wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING (MODEL_SUSPECT_WINDOW + 1)
#define KEY_MAX 128

struct sample {
    uint64_t seq, t_ns;
    const char *label;
};

struct site_ring {
    uint32_t site;
    uint8_t slot;               /* MODEL_KIND_DEVICE_MEMORY or a kind */
    uint64_t stack;             /* member stack with the most bytes at the latest mark */
    uint64_t cur, cur_rep;      /* being summed at this mark */
    uint64_t v[RING];           /* live bytes at mark n: v[n % RING] */
    uint64_t low_bytes, low_n;  /* running minimum and the last mark at it: */
    uint64_t low_seq;
    const char *low_label;
};

/* the marks of one label pattern */
struct mseries {
    char key[KEY_MAX];
    uint64_t n;                 /* marks so far */
    struct sample s[RING];
    struct site_ring *sites;
    size_t nsites, cap;
    struct u64map index;        /* site << 5 | slot -> sites[] */
};

struct growth {
    struct mseries series[MODEL_SUSPECT_SERIES];
    int nseries;
};

void growth_free(struct growth *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->nseries; i++) {
        free(g->series[i].sites);
        u64map_free(&g->series[i].index);
    }
    free(g);
}

/* The label with each run of digits as one '#'. */
static void series_key(const char *label, char *key)
{
    size_t n = 0;
    for (const char *c = label; *c && n + 1 < KEY_MAX; c++) {
        int digit = *c >= '0' && *c <= '9';
        if (!digit)
            key[n++] = *c;
        else if (c == label || !(c[-1] >= '0' && c[-1] <= '9'))
            key[n++] = '#';
    }
    key[n] = 0;
}

static struct mseries *series_for(struct process *p, const char *label)
{
    char key[KEY_MAX];
    series_key(label, key);
    struct growth *g = p->growth;
    if (!g && !(g = p->growth = calloc(1, sizeof *g)))
        return NULL;
    for (int i = 0; i < g->nseries; i++)
        if (!strcmp(g->series[i].key, key))
            return &g->series[i];
    if (g->nseries == MODEL_SUSPECT_SERIES)
        return NULL; /* the first patterns seen are followed; later ones are not */
    struct mseries *s = &g->series[g->nseries++];
    memset(s, 0, sizeof *s);
    memcpy(s->key, key, sizeof key);
    u64map_init(&s->index);
    return s;
}

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

static struct site_ring *ring_for(struct mseries *s, uint32_t site, int slot)
{
    uint64_t key = (uint64_t)site << 5 | (uint64_t)slot;
    uint32_t i = u64map_get(&s->index, key);
    if (i != UINT32_MAX)
        return &s->sites[i];
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
        r->low_n = s->n - 1;
        r->low_seq = prev->seq;
        r->low_label = prev->label;
    }
    return r;
}

void growth_on_mark(struct model *m, struct process *p, const struct model_mark *mk)
{
    if (mk->flags & CULEAK_MARK_POP)
        return;
    struct mseries *s = series_for(p, mk->label);
    if (!s)
        return;
    for (size_t i = 0; i < s->nsites; i++)
        s->sites[i].cur = s->sites[i].cur_rep = 0;
    for (size_t i = 0; i < p->nunits; i++) {
        const struct unit *u = &p->units[i];
        int slot = slot_of(u->kind);
        if (u->live_bytes == 0 || slot < 0)
            continue;
        struct site_ring *r = ring_for(s, u->site, slot);
        if (!r)
            continue; /* out of memory: that site is not followed */
        r->cur += u->live_bytes;
        if (u->live_bytes > r->cur_rep) {
            r->cur_rep = u->live_bytes;
            r->stack = u->stack;
        }
    }
    uint64_t n = s->n;
    for (size_t i = 0; i < s->nsites; i++) {
        struct site_ring *r = &s->sites[i];
        r->v[n % RING] = r->cur;
        if (n == 0 || r->cur <= r->low_bytes) {
            r->low_bytes = r->cur;
            r->low_n = n;
            r->low_seq = mk->seq;
            r->low_label = mk->label;
        }
    }
    s->s[n % RING] = (struct sample){mk->seq, mk->t_ns, mk->label};
    s->n++;
    (void)m;
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
    const struct model_mark *mem = memory_mark(p);
    for (size_t k = 0; k < s->nsites; k++) {
        const struct site_ring *r = &s->sites[k];
        unsigned rises = 0;
        for (unsigned i = 0; i < w; i++) {
            uint64_t a = r->v[(first + i) % RING], b = r->v[(first + i + 1) % RING];
            rises += b > a;
            dv[i] = (int64_t)(b - a);
        }
        uint64_t now = r->v[last % RING], then = r->v[first % RING];
        if (rises < need || now <= then)
            continue;
        double per = median_i64(dv, w);
        if (per <= 0)
            continue;
        if (per > 9e18) /* absurd input: keep the conversion below defined */
            per = 9e18;
        struct model_suspect x = {
            .proc = p->pub.index, .site = r->site, .kind = r->slot, .stack = r->stack, .series = s->key,
            .intervals = w, .rises = rises, .marks = s->n, .last_label = s->s[last % RING].label,
            .live_bytes = now, .window_bytes = then, .per_mark = (int64_t)per, .since_label = r->low_label,
            .since_seq = r->low_seq, .since_bytes = r->low_bytes, .since_marks = last - r->low_n,
            .interval_s = interval_s, .device = -1,
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
        /* a site suspect in several series: keep the series with the most marks */
        size_t j = first_of_proc;
        while (j < out->n && !(out->v[j].site == x.site && out->v[j].kind == x.kind))
            j++;
        if (j < out->n) {
            if (out->v[j].marks < x.marks)
                out->v[j] = x;
        } else if (push(out, cap, &x) != 0) {
            *oom = 1;
            return;
        }
    }
}

static int suspect_cmp(const void *pa, const void *pb)
{
    const struct model_suspect *a = pa, *b = pb;
    if (a->per_mark != b->per_mark)
        return a->per_mark > b->per_mark ? -1 : 1;
    if (a->proc != b->proc)
        return a->proc - b->proc;
    return (a->site > b->site) - (a->site < b->site);
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
    }
    if (oom) {
        model_suspects_free(out);
        return -1;
    }
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, suspect_cmp);
    for (size_t i = 0; names && i < out->n; i++) {
        struct model_row r = {0};
        row_describe(m, MODEL_GROUP_SITE, out->v[i].site, out->v[i].proc, NULL, &r, 0);
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

/* ---------------------------------------------------------------- words */

void model_format_size(char *buf, size_t len, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    unsigned u = 0;
    double v = bytes < 0 ? -bytes : bytes;
    while (v >= 1024 && u + 1 < sizeof units / sizeof *units) {
        v /= 1024;
        u++;
    }
    const char *sign = bytes < 0 ? "-" : "";
    if (u == 0)
        snprintf(buf, len, "%s%.0f B", sign, v);
    else
        snprintf(buf, len, v < 10 ? "%s%.2f %s" : v < 100 ? "%s%.1f %s" : "%s%.0f %s", sign, v, units[u]);
}

void model_format_count(char *buf, size_t len, double n)
{
    if (n >= 1e9) {
        snprintf(buf, len, "~%.2g billion", n / 1e9);
        return;
    }
    if (n >= 1e6) {
        snprintf(buf, len, "~%.2g million", n / 1e6);
        return;
    }
    /* two significant digits, with thousands separators: ~41,000 */
    uint64_t v = (uint64_t)(n + 0.5); /* no libm: the fuzz target links none */
    uint64_t scale = 1;
    while (v / scale >= 100)
        scale *= 10;
    v = (v + scale / 2) / scale * scale;
    if (v < 1000)
        snprintf(buf, len, "~%" PRIu64, v);
    else if (v < 1000000)
        snprintf(buf, len, "~%" PRIu64 ",%03" PRIu64, v / 1000, v % 1000);
    else
        snprintf(buf, len, "~%" PRIu64 ",%03" PRIu64 ",%03" PRIu64, v / 1000000, v / 1000 % 1000, v % 1000);
}

void model_format_duration(char *buf, size_t len, double s)
{
    if (s < 60)
        snprintf(buf, len, "~%.0f s", s);
    else if (s < 3600)
        snprintf(buf, len, "~%.0f min", s / 60);
    else if (s < 2 * 86400)
        snprintf(buf, len, "~%.1f h", s / 3600);
    else
        snprintf(buf, len, "~%.1f days", s / 86400);
}

void model_suspect_forecast(const struct model_suspect *s, char *buf, size_t len)
{
    char per[32], each[32], when[48], dur[32];
    model_format_size(per, sizeof per, (double)s->per_mark);
    if (s->interval_s < 0.1)
        snprintf(each, sizeof each, "%.1f ms", s->interval_s * 1e3);
    else
        snprintf(each, sizeof each, s->interval_s < 10 ? "%.2f s" : "%.0f s", s->interval_s);
    if (!s->forecast) {
        snprintf(buf, len, "at +%s per iteration (%s each); the device's free memory is unknown", per, each);
        return;
    }
    if (s->free_bytes == 0) {
        snprintf(buf, len, "at +%s per iteration (%s each); device %d has no free memory left", per, each,
                 s->device);
        return;
    }
    model_format_count(when, sizeof when, s->fill_marks);
    model_format_duration(dur, sizeof dur, s->fill_s);
    snprintf(buf, len, "at +%s per iteration (%s each), this site fills device %d in %s iteration%s (%s)", per,
             each, s->device, when, s->fill_marks == 1 ? "" : "s", dur);
}
