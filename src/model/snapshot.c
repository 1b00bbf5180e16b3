/* Snapshots: per-process copies of the per-unit live state, taken by hand, at a mark or
 * after an event seq; and the diff of two of them (or of one and now). */
#include "model_internal.h"

#include <stdlib.h>
#include <string.h>

int state_capture(const struct model *m, const struct process *p, struct state *st)
{
    (void)m;
    size_t n = 0;
    for (size_t i = 0; i < p->nunits; i++)
        n += p->units[i].live_count > 0;
    memset(st, 0, sizeof *st);
    st->items = malloc((n ? n : 1) * sizeof *st->items);
    if (!st->items)
        return -1;
    for (size_t i = 0; i < p->nunits; i++) {
        const struct unit *u = &p->units[i];
        if (u->live_count == 0)
            continue;
        st->items[st->n++] = (struct state_item){
            (uint32_t)i, u->live_count > UINT32_MAX ? UINT32_MAX : (uint32_t)u->live_count, u->live_bytes};
    }
    st->present = 1;
    st->seq = p->pub.last_seq;
    st->t_ns = p->pub.last_t_ns;
    return 0;
}

void state_free(struct state *st)
{
    free(st->items);
    memset(st, 0, sizeof *st);
}

static void snapshot_clear(struct snapshot *s)
{
    for (int i = 0; i < s->nparts; i++)
        state_free(&s->parts[i]);
    free(s->parts);
    free((char *)s->name);
    free((char *)s->trigger);
    memset(s, 0, sizeof *s);
}

void snapshots_free(struct model *m)
{
    for (int i = 0; i < m->nsnaps; i++)
        snapshot_clear(&m->snaps[i]);
    free(m->snaps);
    m->snaps = NULL;
    m->nsnaps = 0;
}

int model_snapshot_find(const struct model *m, const char *name)
{
    for (int i = 0; i < m->nsnaps; i++)
        if (strcmp(m->snaps[i].name, name) == 0)
            return i;
    return -1;
}

int model_snapshot_count(const struct model *m) { return m->nsnaps; }

int model_snapshot_named_count(const struct model *m)
{
    int n = 0;
    for (int i = 0; i < m->nsnaps; i++) {
        const struct snapshot *s = &m->snaps[i];
        n += s->name[0] != '@' && !(s->trigger && !strcmp(s->trigger, s->name));
    }
    return n;
}

uint64_t model_snapshot_stamp(const struct model *m, const char *name)
{
    int i = model_snapshot_find(m, name);
    return i < 0 ? 0 : m->snaps[i].stamp;
}

const char *model_snapshot_name(const struct model *m, int i) { return i >= 0 && i < m->nsnaps ? m->snaps[i].name : NULL; }

void model_snapshot_drop(struct model *m, const char *name)
{
    int i = model_snapshot_find(m, name);
    if (i < 0)
        return;
    if (m->snaps[i].trigger_is_seq && m->seq_triggers > 0)
        m->seq_triggers--;
    snapshot_clear(&m->snaps[i]);
    m->snaps[i] = m->snaps[--m->nsnaps];
    model_changed(m);
}

/* A fresh (or emptied, if the name exists) snapshot slot. */
static struct snapshot *snapshot_new(struct model *m, const char *name)
{
    model_snapshot_drop(m, name);
    model_changed(m); /* filled by the caller before any view looks */
    struct snapshot *ns = realloc(m->snaps, (size_t)(m->nsnaps + 1) * sizeof *ns);
    if (!ns)
        return NULL;
    m->snaps = ns;
    struct snapshot *s = &ns[m->nsnaps];
    memset(s, 0, sizeof *s);
    s->stamp = m->generation;
    if (!(s->name = strdup(name)))
        return NULL;
    m->nsnaps++;
    return s;
}

static int part_capture(struct model *m, struct snapshot *s, struct process *p)
{
    int idx = p->pub.index;
    if (idx >= s->nparts) {
        struct state *np = realloc(s->parts, (size_t)(idx + 1) * sizeof *np);
        if (!np)
            return -1;
        memset(np + s->nparts, 0, (size_t)(idx + 1 - s->nparts) * sizeof *np);
        s->parts = np;
        s->nparts = idx + 1;
    }
    if (s->parts[idx].present)
        return 0;
    model_changed(m);
    s->stamp = m->generation;
    return state_capture(m, p, &s->parts[idx]);
}

int model_snapshot_take(struct model *m, const char *name)
{
    struct snapshot *s = snapshot_new(m, name);
    if (!s)
        return -1;
    for (int i = 0; i < m->nprocs; i++)
        if (part_capture(m, s, m->procs[i]) != 0)
            return -1;
    return 0;
}

static int state_copy(const struct state *from, struct state *to)
{
    *to = *from;
    to->items = malloc((from->n ? from->n : 1) * sizeof *to->items);
    if (!to->items) {
        memset(to, 0, sizeof *to);
        return -1;
    }
    memcpy(to->items, from->items, from->n * sizeof *to->items);
    return 0;
}

/* A snapshot's parts for nparts processes, none present yet. */
static int parts_alloc(struct snapshot *s, int nparts)
{
    s->parts = calloc(nparts ? (size_t)nparts : 1, sizeof *s->parts);
    if (!s->parts)
        return -1;
    s->nparts = nparts;
    return 0;
}

int model_snapshot_copy(struct model *m, const char *from, const char *to)
{
    int i = model_snapshot_find(m, from);
    if (i < 0 || strcmp(from, to) == 0)
        return i < 0 ? -1 : 0;
    struct snapshot *d = snapshot_new(m, to);
    if (!d)
        return -1;
    const struct snapshot *f = &m->snaps[model_snapshot_find(m, from)]; /* snapshot_new may move it */
    if (parts_alloc(d, f->nparts) != 0)
        return -1;
    for (int k = 0; k < f->nparts; k++)
        if (f->parts[k].present && state_copy(&f->parts[k], &d->parts[k]) != 0)
            return -1;
    return 0;
}

int model_snapshot_import(struct model *m, const char *name, const struct model *src)
{
    if (src->nprocs > m->nprocs)
        return -1;
    for (int i = 0; i < src->nprocs; i++)
        if (src->procs[i]->pub.pid != m->procs[i]->pub.pid || src->procs[i]->nunits > m->procs[i]->nunits)
            return -1;
    struct snapshot *s = snapshot_new(m, name);
    if (!s || parts_alloc(s, src->nprocs) != 0)
        return -1;
    for (int i = 0; i < src->nprocs; i++)
        if (state_capture(src, src->procs[i], &s->parts[i]) != 0)
            return -1;
    return 0;
}

int model_snapshot_adopt(struct model *m, const char *name, const struct model *src, const char *from)
{
    int k = model_snapshot_find(src, from);
    if (k < 0 || src->nprocs > m->nprocs)
        return -1;
    for (int i = 0; i < src->nprocs; i++)
        if (src->procs[i]->pub.pid != m->procs[i]->pub.pid || src->procs[i]->nunits > m->procs[i]->nunits)
            return -1;
    const struct snapshot *f = &src->snaps[k];
    struct snapshot *s = snapshot_new(m, name);
    if (!s || parts_alloc(s, f->nparts) != 0)
        return -1;
    for (int i = 0; i < f->nparts; i++)
        if (f->parts[i].present && state_copy(&f->parts[i], &s->parts[i]) != 0)
            return -1;
    return 0;
}

int model_label_is_seq(const char *label)
{
    if (!*label)
        return 0;
    for (const char *c = label; *c; c++)
        if (*c < '0' || *c > '9')
            return 0;
    return 1;
}

int model_snapshot_at_mark(struct model *m, const char *label, const char *name)
{
    struct snapshot *s = snapshot_new(m, name);
    if (!s || !(s->trigger = strdup(label)))
        return -1;
    if (model_label_is_seq(label)) {
        s->trigger_is_seq = 1;
        s->trigger_seq = strtoull(label, NULL, 10);
        m->seq_triggers++;
    }
    return 0;
}

void snapshots_on_mark(struct model *m, struct process *p, const char *label)
{
    for (int i = 0; i < m->nsnaps; i++) {
        struct snapshot *s = &m->snaps[i];
        if (s->trigger && !s->trigger_is_seq && strcmp(s->trigger, label) == 0)
            part_capture(m, s, p); /* the first mark of that label counts */
    }
}

/* Called before applying the event `seq`: a snapshot after seq N is the state now. */
void snapshots_on_seq(struct model *m, struct process *p, uint64_t seq)
{
    for (int i = 0; i < m->nsnaps; i++) {
        struct snapshot *s = &m->snaps[i];
        if (s->trigger_is_seq && seq > s->trigger_seq)
            part_capture(m, s, p);
    }
}

/* ---------------------------------------------------------------- diffs */

struct diff_acc {
    struct model_diff_row row;
    uint64_t rep_bytes;
};

static int diff_row_cmp(const void *pa, const void *pb)
{
    const struct model_diff_row *a = pa, *b = pb;
    if (a->delta_bytes != b->delta_bytes)
        return a->delta_bytes > b->delta_bytes ? -1 : 1;
    if (a->delta_count != b->delta_count)
        return a->delta_count > b->delta_count ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static int new_cmp(const void *pa, const void *pb)
{
    const struct model_diff_new *a = pa, *b = pb;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    if (a->proc != b->proc)
        return a->proc - b->proc;
    return (a->stack > b->stack) - (a->stack < b->stack);
}

/* Allocations of process i made after seq `after` (and up to `upto`) still live now. */
static int collect_new(struct model *m, const struct model_query *q, int i, uint64_t after, uint64_t upto,
                       struct model_diff *d, struct u64map *idx, size_t *cap)
{
    struct process *p = m->procs[i];
    for (size_t e = 0; e < m->live.n; e++) {
        const struct live_entry *le = &m->live.entries[e];
        uint64_t seq = live_entry_seq(le);
        if (live_entry_proc(le) != i || seq <= after || seq > upto)
            continue;
        struct unit *u = &p->units[le->unit];
        if (!unit_in_query(u, q))
            continue;
        if (p->pools_tracked && unit_pool(m, i, u)) { /* the pool's row says it */
            d->new_reserved_bytes += le->size;
            d->new_reserved_count++;
            continue;
        }
        uint64_t key = ((uint64_t)(unsigned)i << 32 | u->stack) << 1 | unit_part(u);
        uint32_t k = u64map_get(idx, key);
        if (k == UINT32_MAX) {
            if (d->nnew == *cap) {
                size_t nc = *cap ? *cap * 2 : 64;
                struct model_diff_new *nn = realloc(d->news, nc * sizeof *nn);
                if (!nn)
                    return -1;
                d->news = nn;
                *cap = nc;
            }
            k = (uint32_t)d->nnew++;
            if (u64map_put(idx, key, k) != 0)
                return -1;
            d->news[k] = (struct model_diff_new){.proc = i, .stack = u->stack, .first_seq = seq,
                                                 .blocks = (int)unit_part(u)};
        }
        struct model_diff_new *n = &d->news[k];
        n->count++;
        n->bytes += le->size;
        if (seq < n->first_seq)
            n->first_seq = seq;
        if (unit_part(u)) {
            d->new_block_bytes += le->size;
            d->new_block_count++;
        } else {
            d->new_bytes += le->size;
            d->new_count++;
        }
    }
    return 0;
}

int model_diff(struct model *m, const char *a, const char *b, const struct model_query *q, struct model_diff *d)
{
    memset(d, 0, sizeof *d);
    int ia = model_snapshot_find(m, a), ib = b ? model_snapshot_find(m, b) : -1;
    if (ia < 0 || (b && ib < 0))
        return -1;
    struct u64map rows, news;
    u64map_init(&rows);
    u64map_init(&news);
    struct diff_acc *acc = NULL;
    size_t nacc = 0, acc_cap = 0, news_cap = 0;
    int rc = 0;
    for (int i = 0; i < m->nprocs; i++)
        if (q->proc == MODEL_ALL || q->proc == i)
            d->a.pools = d->b.pools |= m->procs[i]->pools_tracked;
    for (int i = 0; i < m->nprocs && rc == 0; i++) {
        if (q->proc != MODEL_ALL && q->proc != i)
            continue;
        const struct snapshot *sa = &m->snaps[ia], *sb = b ? &m->snaps[ib] : NULL;
        if (i >= sa->nparts || !sa->parts[i].present)
            continue;
        if (sb && (i >= sb->nparts || !sb->parts[i].present))
            continue;
        struct process *p = m->procs[i];
        struct state_item *da = state_dense(&sa->parts[i], p->nunits);
        struct state_item *db = sb ? state_dense(&sb->parts[i], p->nunits) : NULL;
        if (!da || (sb && !db)) {
            free(da);
            free(db);
            rc = -1;
            break;
        }
        for (size_t ui = 0; ui < p->nunits; ui++) {
            struct unit *u = &p->units[ui];
            if (!unit_in_query(u, q))
                continue;
            uint64_t bb = db ? db[ui].bytes : u->live_bytes, cb = db ? db[ui].count : u->live_count;
            if (d->a.pools) { /* a process without tracking is memory outside the pools */
                model_memory_add(m, i, u, da[ui].bytes, da[ui].count, &d->a);
                model_memory_add(m, i, u, bb, cb, &d->b);
            }
            if (da[ui].bytes == bb && da[ui].count == cb)
                continue;
            enum model_cache pool = p->pools_tracked ? unit_pool(m, i, u) : MODEL_CACHE_NONE;
            uint32_t id = pool ? pool_row_id(m, pool, q->group) : unit_row_id(m, i, u, q->group);
            uint64_t key = (uint64_t)id << 1 | unit_part(u);
            uint32_t k = u64map_get(&rows, key);
            if (k == UINT32_MAX) {
                if (nacc == acc_cap) {
                    size_t nc = acc_cap ? acc_cap * 2 : 64;
                    struct diff_acc *na = realloc(acc, nc * sizeof *na);
                    if (!na) {
                        rc = -1;
                        break;
                    }
                    acc = na;
                    acc_cap = nc;
                }
                k = (uint32_t)nacc++;
                u64map_put(&rows, key, k);
                memset(&acc[k], 0, sizeof acc[k]);
                acc[k].row.id = id;
                acc[k].row.blocks = (int)unit_part(u);
                struct model_row r = {0};
                if (pool)
                    pool_describe(m, pool, &r);
                else
                    row_describe(m, q->group, id, i, u, &r, query_lazy(q));
                acc[k].row.pool = pool;
                acc[k].row.named = r.named;
                acc[k].row.text = r.text;
                acc[k].row.via = r.via;
                acc[k].row.autograd_backward = r.autograd_backward;
                acc[k].row.module = r.module;
                acc[k].row.stack = u->stack;
                acc[k].row.stack_proc = i;
            }
            struct diff_acc *x = &acc[k];
            x->row.bytes_a += da[ui].bytes;
            x->row.count_a += da[ui].count;
            x->row.bytes_b += bb;
            x->row.count_b += cb;
            uint64_t grow = bb > da[ui].bytes ? bb - da[ui].bytes : 0;
            if (grow > x->rep_bytes) {
                x->rep_bytes = grow;
                x->row.stack = u->stack;
                x->row.stack_proc = i;
            }
        }
        uint64_t upto = sb ? sb->parts[i].seq : UINT64_MAX;
        if (rc == 0)
            rc = collect_new(m, q, i, sa->parts[i].seq, upto, d, &news, &news_cap);
        free(da);
        free(db);
    }
    if (rc == 0 && nacc) {
        d->rows = malloc(nacc * sizeof *d->rows);
        if (!d->rows)
            rc = -1;
        for (size_t k = 0; rc == 0 && k < nacc; k++) {
            struct model_diff_row *r = &acc[k].row;
            r->delta_bytes = (int64_t)r->bytes_b - (int64_t)r->bytes_a;
            r->delta_count = (int64_t)r->count_b - (int64_t)r->count_a;
            if (r->delta_bytes == 0 && r->delta_count == 0)
                continue; /* changes of member stacks cancelled out */
            if (r->blocks)
                d->delta_block_bytes += r->delta_bytes;
            else
                d->delta_bytes += r->delta_bytes;
            d->rows[d->n++] = *r;
        }
        if (d->n > 1)
            qsort(d->rows, d->n, sizeof *d->rows, diff_row_cmp);
    }
    if (d->nnew > 1)
        qsort(d->news, d->nnew, sizeof *d->news, new_cmp);
    free(acc);
    u64map_free(&rows);
    u64map_free(&news);
    if (rc != 0)
        model_diff_free(d);
    return rc;
}

void model_diff_free(struct model_diff *d)
{
    free(d->rows);
    free(d->news);
    memset(d, 0, sizeof *d);
}
