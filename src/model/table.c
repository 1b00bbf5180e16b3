/* The site table: units (process, stack, kind) summed into rows of a grouping, from a
 * source (now, leaks, peak, snapshot, failure), filtered and sorted. */
#include "model_internal.h"
#include "pyframes.h"
#include "common/wire.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>
#include <strings.h>

void unit_value(const struct process *p, const struct unit *u, size_t ui, enum model_source src,
                const struct state_item *dense, uint64_t *bytes, uint64_t *count)
{
    switch (src) {
    case MODEL_SOURCE_LEAKS:
        *bytes = u->live_bytes + u->reset_bytes;
        *count = u->live_count + u->reset_count;
        break;
    case MODEL_SOURCE_PEAK:
        *bytes = u->at_peak_epoch == p->peak_epoch ? u->at_peak_bytes : u->live_bytes;
        *count = u->at_peak_epoch == p->peak_epoch ? u->at_peak_count : u->live_count;
        break;
    case MODEL_SOURCE_SNAPSHOT:
    case MODEL_SOURCE_FAILURE:
        *bytes = dense ? dense[ui].bytes : 0;
        *count = dense ? dense[ui].count : 0;
        break;
    default:
        *bytes = u->live_bytes;
        *count = u->live_count;
        break;
    }
}

/* The state a snapshot or failure holds for a process, or NULL. */
static const struct state *source_state(const struct model *m, const struct model_query *q, int proc)
{
    if (q->source == MODEL_SOURCE_SNAPSHOT) {
        int i = model_snapshot_find(m, q->snapshot ? q->snapshot : "");
        if (i < 0 || proc >= m->snaps[i].nparts || !m->snaps[i].parts[proc].present)
            return NULL;
        return &m->snaps[i].parts[proc];
    }
    if (q->failure < 0 || (size_t)q->failure >= m->nfailures)
        return NULL;
    const struct failure_rec *f = &m->failures[q->failure];
    return f->pub.proc == proc && f->pub.has_state ? &f->state : NULL;
}

struct state_item *state_dense(const struct state *st, size_t nunits)
{
    struct state_item *d = calloc(nunits ? nunits : 1, sizeof *d);
    if (!d)
        return NULL;
    for (size_t i = 0; i < st->n; i++)
        if (st->items[i].unit < nunits)
            d[st->items[i].unit] = st->items[i];
    return d;
}

int unit_in_query(const struct unit *u, const struct model_query *q)
{
    return q->kinds ? (q->kinds >> u->kind & 1) != 0 : culeak_kind_is_memory(u->kind);
}

/* The innermost installed-library line of rep's stack below its Python site. */
static const char *via_line(const struct model *m, int proc, const struct unit *rep)
{
    const struct process *p = model_proc(m, proc);
    if (!p || !rep || rep->stack >= p->nframes)
        return NULL;
    const char *via = NULL;
    uint64_t id = rep->stack;
    for (int n = 0; id != 0 && n < MODEL_MAX_STACK_WALK; n++, id = p->parent[id]) {
        uint64_t ip = p->ip[id];
        if (!(ip & CULEAK_PYFRAME_TAG))
            continue;
        if (!pyframes_skipped(m, ip))
            return via; /* the site */
        if (!via)
            via = pyframes_lib_line(m, ip);
    }
    return NULL;
}

/* A Python site's text, with the library line it was reached through; for memory made
 * for a backward() call at the site, marked so, via the operation where it is known. */
static const char *with_via(struct model *m, const struct site *s, int proc, const struct unit *rep,
                            const char **via, int *backward)
{
    *backward = 0;
    if (!s->symbolized || !s->text || !m->py)
        return s->text;
    const char *op = NULL;
    int b = rep ? model_stack_backward(m, proc, rep->stack, &op) : 0;
    if (s->module != pyframes_module(m)) { /* a native site: the operation, when no line is known */
        if (b != 2)
            return s->text;
        op = NULL;
    }
    *backward = b != 0;
    *via = op ? op : via_line(m, proc, rep);
    if (!*via && !*backward)
        return s->text;
    char buf[2048];
    int n = snprintf(buf, sizeof buf, "%s%s%s%s", s->text, *backward ? " (autograd backward)" : "",
                     *via ? ", via " : "", *via ? *via : "");
    const char *t = strpool_intern(&m->strings, buf, (size_t)(n < (int)sizeof buf ? n : (int)sizeof buf - 1));
    return t ? t : s->text;
}

/* A site or stack row's texts from the site's copy of them (site_names), where its text
 * is made and has no via line: 0, else 1 (row_describe's way). */
static int row_texts_kept(const struct model *m, enum model_group g, uint32_t id, int rep_proc,
                          const struct unit *rep, struct model_row *r)
{
    const struct site_name *sn = &m->site_names[g == MODEL_GROUP_SITE ? id : rep ? rep->site : 0];
    if (!sn->text || (m->py && sn->symbolized && sn->module == pyframes_module(m))) /* see with_via */
        return 1;
    r->named = sn->symbolized;
    r->module = m->modules[sn->module].path;
    r->text = sn->text;
    r->function = r->file = r->via = NULL;
    r->autograd_backward = 0;
    r->line = 0;
    r->proc = g == MODEL_GROUP_STACK ? rep_proc : -1;
    if (g == MODEL_GROUP_STACK)
        r->stack = rep ? rep->stack : 0;
    return 0;
}

void row_describe(struct model *m, enum model_group g, uint32_t id, int rep_proc, const struct unit *rep,
                  struct model_row *r, int lazy)
{
    if (lazy == ROW_TEXTS_ONLY && (g == MODEL_GROUP_SITE || g == MODEL_GROUP_STACK) &&
        row_texts_kept(m, g, id, rep_proc, rep, r) == 0)
        return;
    struct site *s = &m->sites[g == MODEL_GROUP_SITE ? id : rep ? rep->site : 0];
    if (lazy)
        site_plain_text(m, s);
    else
        site_symbolize(m, s);
    r->named = s->symbolized;
    r->module = m->modules[s->module].path;
    const struct sym_frame *f = lazy == ROW_TEXTS_ONLY ? NULL : site_frame(s);
    r->function = f ? f->function : NULL;
    r->file = f ? f->file : NULL;
    r->line = f ? f->line : 0;
    r->proc = -1;
    r->via = NULL;
    r->autograd_backward = 0;
    switch (g) {
    case MODEL_GROUP_SITE:
        r->text = with_via(m, s, rep_proc, rep, &r->via, &r->autograd_backward);
        break;
    case MODEL_GROUP_STACK:
        r->text = with_via(m, s, rep_proc, rep, &r->via, &r->autograd_backward);
        r->proc = rep_proc;
        r->stack = rep ? rep->stack : 0;
        break;
    default:
        r->text = id < m->group_keys[g].count ? strpool_get(&m->group_keys[g], id) : "?";
        break;
    }
}

static size_t dense_slot(uint64_t key) { return (size_t)(key >> 4 << 1 | (key & 1)); }

int row_index_init(struct row_index *x, struct model *m, int cached, size_t n)
{
    x->m = m;
    x->dense = !cached;
    x->used = 0;
    u64map_init(&x->map);
    return x->dense ? 0 : u64map_reserve(&x->map, n);
}

uint32_t row_index_get(const struct row_index *x, uint64_t key)
{
    if (!x->dense)
        return u64map_get(&x->map, key);
    size_t s = dense_slot(key);
    return s < x->m->nrow_slots ? x->m->row_slots[s] : UINT32_MAX;
}

int row_index_put(struct row_index *x, uint64_t key, uint32_t row)
{
    if (!x->dense)
        return u64map_put(&x->map, key, row);
    struct model *m = x->m;
    size_t s = dense_slot(key);
    if (s >= m->nrow_slots) {
        size_t n = m->nrow_slots ? m->nrow_slots : 1024;
        while (n <= s)
            n *= 2;
        uint32_t *v = realloc(m->row_slots, n * sizeof *v);
        if (!v)
            return -1;
        memset(v + m->nrow_slots, 0xff, (n - m->nrow_slots) * sizeof *v);
        m->row_slots = v;
        m->nrow_slots = n;
    }
    m->row_slots[s] = row;
    if (s >= x->used)
        x->used = s + 1;
    return 0;
}

void row_index_done(struct row_index *x, const struct model_row *rows, size_t n)
{
    if (!x->dense) {
        u64map_free(&x->map);
        return;
    }
    if (!x->used)
        return;
    if (n >= x->used / 8) { /* many rows: one sweep of the slots is cheaper than a visit a row */
        memset(x->m->row_slots, 0xff, x->used * sizeof *x->m->row_slots);
        return;
    }
    for (size_t i = 0; i < n; i++) { /* both parts: every slot of the row's id is free again */
        size_t s = (size_t)rows[i].id << 1;
        if (s + 1 < x->m->nrow_slots)
            x->m->row_slots[s] = x->m->row_slots[s + 1] = UINT32_MAX;
    }
}

static struct model_row *row_for(struct row_index *index, struct model_table *t, size_t *cap, uint64_t **rep_bytes,
                                 uint64_t key, uint32_t id)
{
    uint32_t r = row_index_get(index, key);
    if (r != UINT32_MAX)
        return &t->rows[r];
    if (t->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        struct model_row *nr = realloc(t->rows, nc * sizeof *nr);
        if (!nr)
            return NULL;
        t->rows = nr;
        uint64_t *rb = realloc(*rep_bytes, nc * sizeof *rb);
        if (!rb)
            return NULL;
        *rep_bytes = rb;
        *cap = nc;
    }
    if (row_index_put(index, key, (uint32_t)t->n) != 0)
        return NULL;
    struct model_row *row = &t->rows[t->n];
    memset(row, 0, sizeof *row);
    row->id = id;
    row->stack_proc = -1;
    (*rep_bytes)[t->n] = 0;
    t->n++;
    return row;
}

static int matches_filter(const struct model_row *r, const char *filter)
{
    return !filter || !*filter || (r->text && strcasestr(r->text, filter)) ||
           (r->module && strcasestr(r->module, filter)) || (r->function && strcasestr(r->function, filter));
}

/* A query may leave names unresolved when nothing in it compares names: function and
 * file groups take their ids from names, and the filter and text sort read them. */
int query_lazy(const struct model_query *q)
{
    return q->lazy_names && q->group != MODEL_GROUP_FUNCTION && q->group != MODEL_GROUP_FILE &&
           !(q->filter && *q->filter) && q->sort != MODEL_FIELD_TEXT;
}

/* The threads of a row's members: one (the main thread of each process counts as one), or
 * several. */
static void row_thread(struct model_row *r, const struct unit *u, const struct process *p)
{
    if (!u->threads)
        return;
    int main = u->threads == 1 && u->tid == p->pub.pid;
    if (!r->threads) {
        r->threads = u->threads;
        r->tid = u->tid;
        r->main_thread = main;
    } else if ((u->threads > 1 || r->threads > 1 || u->tid != r->tid) && !(main && r->main_thread)) {
        r->threads = 2;
        r->main_thread = 0;
    }
}

int model_table_build(struct model *m, const struct model_query *q, struct model_table *t)
{
    memset(t, 0, sizeof *t);
    t->group = q->group;
    if ((unsigned)q->group >= MODEL_GROUP_COUNT)
        return -1;
    struct row_index index;
    size_t cap = 0;
    uint64_t *rep_bytes = NULL;
    struct unit **rep = NULL; /* representative unit per row, filled as rows appear */
    int *rep_proc = NULL;
    size_t rep_cap = 0;
    int rc = 0;
    /* sized for every unit at once: no regrowth of big arrays in the frame's table */
    size_t units = 0;
    for (int i = 0; i < m->nprocs; i++)
        if (q->proc == MODEL_ALL || q->proc == i)
            units += m->procs[i]->nunits;
    if (units) {
        t->rows = malloc(units * sizeof *t->rows);
        rep_bytes = malloc(units * sizeof *rep_bytes);
        rep = malloc(units * sizeof *rep);
        rep_proc = malloc(units * sizeof *rep_proc);
        if (!t->rows || !rep_bytes || !rep || !rep_proc)
            rc = -1;
        cap = rep_cap = units;
    }
    if (row_index_init(&index, m, q->source == MODEL_SOURCE_LEAKS, units) != 0)
        rc = -1;
    for (int i = 0; i < m->nprocs; i++)
        if (q->proc == MODEL_ALL || q->proc == i)
            t->memory.pools |= m->procs[i]->pools_tracked;
    for (int i = 0; i < m->nprocs && rc == 0; i++) {
        if (q->proc != MODEL_ALL && q->proc != i)
            continue;
        struct process *p = m->procs[i];
        struct state_item *dense = NULL;
        if (q->source == MODEL_SOURCE_SNAPSHOT || q->source == MODEL_SOURCE_FAILURE) {
            const struct state *st = source_state(m, q, i);
            if (!st)
                continue;
            if (!(dense = state_dense(st, p->nunits))) {
                rc = -1;
                break;
            }
        }
        for (size_t ui = 0; ui < p->nunits; ui++) {
            struct unit *u = &p->units[ui];
            if (!unit_in_query(u, q) || (q->source == MODEL_SOURCE_LEAKS && u->kind == CULEAK_KIND_BLOCK))
                continue; /* a pool's live blocks are not leaks (its segments are reported) */
            uint64_t bytes, count;
            unit_value(p, u, ui, q->source, dense, &bytes, &count);
            if (q->supp && (bytes || count) && !unit_suppression_kept(m, p, u, q->supp, q->suppressed))
                continue;
            if (q->keep && (bytes || count) && !q->keep(q->keep_ctx, m, i, u->stack, u->kind))
                continue;
            enum model_cache cache = q->source == MODEL_SOURCE_LEAKS && count ? unit_cache(m, i, u) : MODEL_CACHE_NONE;
            enum model_cache pool = p->pools_tracked ? unit_pool(m, i, u) : MODEL_CACHE_NONE;
            uint32_t id = pool ? pool_row_id(m, pool, q->group) : unit_row_id(m, i, u, q->group);
            int before = q->source == MODEL_SOURCE_LEAKS && !cache && !pool && unit_before_attach_unjudged(m, u);
            /* a LEAKS key of its own (the index is a map there): never summed with leaks */
            int unended = q->source == MODEL_SOURCE_LEAKS && !cache && !pool && !before && model_process_unended(&p->pub);
            uint64_t key = row_key(id, cache, unit_part(u)) | (uint64_t)unended << 40;
            struct model_row *r = row_for(&index, t, &cap, &rep_bytes, key, id);
            if (!r) {
                rc = -1;
                break;
            }
            size_t ri = (size_t)(r - t->rows);
            if (ri >= rep_cap) {
                size_t nc = cap;
                struct unit **nr = realloc(rep, nc * sizeof *nr);
                int *np = nr ? realloc(rep_proc, nc * sizeof *np) : NULL;
                if (nr)
                    rep = nr;
                if (!nr || !np) {
                    rc = -1;
                    break;
                }
                rep_proc = np;
                rep_cap = nc;
            }
            if (r->nstacks == 0 || bytes > rep_bytes[ri]) {
                rep[ri] = u;
                rep_proc[ri] = i;
                rep_bytes[ri] = bytes;
            }
            r->cache = cache;
            r->pool = pool;
            r->before_attach = before;
            r->unended = unended;
            r->live_bytes += bytes;
            r->live_count += count;
            r->peak_bytes += u->peak_bytes;
            r->allocs += u->allocs;
            r->alloc_bytes += u->alloc_bytes;
            r->frees += u->frees;
            r->failed += u->failed;
            r->failed_bytes += u->failed_bytes;
            r->reset_bytes += u->reset_bytes;
            r->reset_count += u->reset_count;
            if (u->first_t && (!r->first_t_ns || u->first_t < r->first_t_ns))
                r->first_t_ns = u->first_t;
            if (u->last_t > r->last_t_ns)
                r->last_t_ns = u->last_t;
            r->kinds |= 1u << u->kind;
            r->nstacks++;
            row_thread(r, u, p);
        }
        free(dense);
    }
    row_index_done(&index, t->rows, t->n);
    size_t k = 0;
    int lazy = query_lazy(q), unnamed = lazy && q->unnamed && (q->group == MODEL_GROUP_SITE || q->group == MODEL_GROUP_STACK);
    int site_peaks = q->group == MODEL_GROUP_SITE && q->proc == MODEL_ALL;
    /* every unit of every site is in the table, of every memory kind: the sums kept per site */
    int summed = site_peaks && !q->kinds && !q->supp && !q->keep &&
                 (q->source == MODEL_SOURCE_NOW || q->source == MODEL_SOURCE_PEAK);
    for (size_t i = 0; rc == 0 && i < t->n; i++) {
        struct model_row *r = &t->rows[i];
        if (r->pool)
            pool_describe(m, r->pool, r);
        else if (!unnamed)
            row_describe(m, q->group, r->id, rep_proc[i], rep[i], r, lazy && q->texts_only ? ROW_TEXTS_ONLY : lazy);
        else
            r->proc = q->group == MODEL_GROUP_STACK ? rep_proc[i] : -1;
        r->stack = rep[i]->stack;
        r->stack_proc = rep_proc[i];
        /* a pool's row keeps the sum of its members' peaks (its site holds no unit) */
        if (summed && !r->pool) {
            r->peak_bytes = m->site_peaks[2 * (size_t)r->id + (r->kinds == 1u << CULEAK_KIND_BLOCK)];
        } else if (site_peaks && !r->pool) { /* sites keep exact peaks per kind across processes */
            uint64_t peak = 0;
            for (uint32_t kinds = r->kinds; kinds; kinds &= kinds - 1)
                peak += m->sites[r->id].peak[__builtin_ctz(kinds)];
            r->peak_bytes = peak;
        }
        if (q->only_live && r->live_count == 0 && r->live_bytes == 0)
            continue;
        if (!matches_filter(r, q->filter))
            continue;
        if (r->kinds != 1u << CULEAK_KIND_BLOCK) { /* pool blocks lie inside memory other rows count */
            t->total_bytes += r->live_bytes;
            t->total_count += r->live_count;
        }
        if (t->memory.pools && r->kinds == 1u << CULEAK_KIND_BLOCK) {
            t->memory.allocated_bytes += r->live_bytes;
            t->memory.allocated_blocks += r->live_count;
        } else if (t->memory.pools && r->pool) {
            t->memory.reserved_bytes += r->live_bytes;
            t->memory.reserved_segments += r->live_count;
        } else if (t->memory.pools) {
            t->memory.other_bytes += r->live_bytes;
            t->memory.other_count += r->live_count;
        }
        if (k != i)
            t->rows[k] = *r;
        k++;
    }
    t->n = rc == 0 ? k : 0;
    if (rc != 0) {
        free(t->rows);
        t->rows = NULL;
    }
    free(rep_bytes);
    free(rep);
    free(rep_proc);
    if (rc == 0 && !q->unsorted)
        model_table_sort(t, q->sort, q->ascending);
    return rc;
}

int model_row_name(struct model *m, enum model_group g, struct model_row *r)
{
    if (r->named)
        return 0;
    const struct process *p = model_proc(m, r->stack_proc);
    const struct unit *rep = NULL;
    for (unsigned k = 0; p && !rep && k < CULEAK_KIND_COUNT; k++) {
        uint32_t ui = u64map_get(&p->unit_index, r->stack << 5 | k);
        if (ui != UINT32_MAX)
            rep = &p->units[ui];
    }
    if (!rep && g != MODEL_GROUP_SITE)
        return -1;
    struct model_row d = *r;
    row_describe(m, g, r->id, r->stack_proc, rep, &d, 0);
    r->text = d.text;
    r->module = d.module;
    r->function = d.function;
    r->file = d.file;
    r->line = d.line;
    r->named = d.named;
    return 1;
}

static int cmp_u64(uint64_t a, uint64_t b) { return (a > b) - (a < b); }

static int cmp_str(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : ""); }

static int row_cmp(const void *pa, const void *pb, void *arg)
{
    const struct model_row *a = pa, *b = pb;
    int f = *(const int *)arg, asc = ((const int *)arg)[1], c;
    switch (f) {
    case MODEL_FIELD_LIVE_COUNT: c = cmp_u64(a->live_count, b->live_count); break;
    case MODEL_FIELD_PEAK_BYTES: c = cmp_u64(a->peak_bytes, b->peak_bytes); break;
    case MODEL_FIELD_ALLOCS: c = cmp_u64(a->allocs, b->allocs); break;
    case MODEL_FIELD_FREES: c = cmp_u64(a->frees, b->frees); break;
    case MODEL_FIELD_FAILED: c = cmp_u64(a->failed, b->failed); break;
    case MODEL_FIELD_FIRST_SEEN: c = cmp_u64(a->first_t_ns, b->first_t_ns); break;
    case MODEL_FIELD_LAST_SEEN: c = cmp_u64(a->last_t_ns, b->last_t_ns); break;
    case MODEL_FIELD_TEXT: c = cmp_str(a->text, b->text); break;
    case MODEL_FIELD_MODULE: c = cmp_str(a->module, b->module); break;
    case MODEL_FIELD_ID: c = cmp_u64(a->id, b->id); break;
    default: c = cmp_u64(a->live_bytes, b->live_bytes); break;
    }
    if (!asc)
        c = -c;
    if (c == 0) /* stable order for equal keys: by id, then cache class */
        c = a->id != b->id ? cmp_u64(a->id, b->id) : (int)a->cache - (int)b->cache;
    return c;
}

void model_table_sort(struct model_table *t, enum model_field f, int ascending)
{
    int arg[2] = {(int)f, ascending};
    if (t->n > 1)
        qsort_r(t->rows, t->n, sizeof *t->rows, row_cmp, arg);
}

void model_table_free(struct model_table *t)
{
    free(t->rows);
    memset(t, 0, sizeof *t);
}
