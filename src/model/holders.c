/* Who holds a block: the HOLDER records culeak's Python side sends (the chain of Python
 * references from a root to the tensor whose data lies in a live block), kept by the
 * block's unit (stack and kind), and grouped per report row: "29 of 30 blocks held by
 * `grads`". A record of address 0 ends one walk (at exit, at a mark, or the console's
 * question): a row's holders are its process's latest walk's, and the walks at marks are
 * kept, each folded to one entry per unit and chain, so that the reports can say how the
 * holders changed from mark to mark. */
#include "model_internal.h"

#include <stdlib.h>
#include <string.h>

struct holding {
    int proc;
    uint32_t walk; /* the process's walk it came in (an address-0 record ends one) */
    uint32_t unit; /* the block's unit: its stack and kind */
    uint64_t blocks, bytes;
    const char *words;
};

/* The live block of p that contains addr: a tensor's data pointer may lie inside its
 * block (a view, a storage offset), so the exact address is tried first, then a scan. */
static const struct live_entry *block_at(struct model *m, struct process *p, uint64_t addr)
{
    int proc = p->pub.index;
    const struct live_entry *best = NULL;
    for (size_t i = 0; i < m->live.n; i++) {
        const struct live_entry *e = &m->live.entries[i];
        if (live_entry_proc(e) != proc || addr < e->addr || addr - e->addr >= (e->size ? e->size : 1))
            continue;
        if (!best || e->size < best->size) /* a block inside a segment: the block */
            best = e;
    }
    return best;
}

static int by_unit_words(const void *a, const void *b)
{
    const struct holding *x = a, *y = b;
    if (x->unit != y->unit)
        return x->unit < y->unit ? -1 : 1;
    return x->words < y->words ? -1 : x->words > y->words;
}

/* The walk that ended: its entries (from its first one on, those of p and this walk)
 * folded to one per unit and chain. */
static void fold_walk(struct model *m, struct process *p)
{
    size_t from = p->holder_walk_from, k = from;
    for (size_t i = from; i < m->nholdings; i++) { /* this walk's first, in place */
        const struct holding *h = &m->holdings[i];
        if (h->proc == p->pub.index && h->walk == p->holder_walk) {
            struct holding t = m->holdings[k];
            m->holdings[k++] = *h;
            m->holdings[i] = t;
        }
    }
    qsort(m->holdings + from, k - from, sizeof *m->holdings, by_unit_words);
    size_t out = from;
    for (size_t i = from; i < k; i++) {
        struct holding *last = out > from ? &m->holdings[out - 1] : NULL;
        if (last && last->unit == m->holdings[i].unit && last->words == m->holdings[i].words) {
            last->blocks += m->holdings[i].blocks;
            last->bytes += m->holdings[i].bytes;
        } else {
            m->holdings[out++] = m->holdings[i];
        }
    }
    memmove(m->holdings + out, m->holdings + k, (m->nholdings - k) * sizeof *m->holdings);
    m->nholdings -= k - out;
    for (int r = 0; r < m->nprocs; r++) /* the others' entries from `from` on were moved about */
        if (m->procs[r]->holder_walk_from > from)
            m->procs[r]->holder_walk_from = from;
}

/* An address-0 record: the walk ends; words say its kind ("mark", "ask", "exit") and,
 * after ": ", why it brought nothing. */
static void walk_end(struct model *m, struct process *p, const char *words, size_t n)
{
    fold_walk(m, p);
    if (m->nwalks == m->walks_cap) {
        size_t cap = m->walks_cap ? 2 * m->walks_cap : 8;
        struct model_holder_walk *w = realloc(m->walks, cap * sizeof *w);
        if (!w)
            return;
        m->walks = w;
        m->walks_cap = cap;
    }
    const char *colon = memchr(words, ':', n);
    size_t kn = colon ? (size_t)(colon - words) : n;
    const char *why = colon ? colon + 1 : "";
    while (*why == ' ')
        why++;
    struct model_holder_walk *w = &m->walks[m->nwalks];
    *w = (struct model_holder_walk){p->pub.index, p->holder_walk, strpool_intern(&m->strings, words, kn),
                                    strpool_intern(&m->strings, why, n - (size_t)(why - words)), NULL, 0};
    if (!w->kind || !w->why)
        return;
    if (p->nmarks) {
        w->mark = p->marks[p->nmarks - 1].label;
        w->mark_seq = p->marks[p->nmarks - 1].seq;
    }
    m->nwalks++;
    p->holder_walk++;
    p->holder_walk_from = m->nholdings;
    if (m->obs.holders)
        m->obs.holders(m->obs.ctx, p->pub.index, w);
}

const struct model_holder_walk *model_holder_walks(const struct model *m, size_t *n)
{
    *n = m->nwalks;
    return m->walks;
}

void holders_add(struct model *m, struct process *p, uint64_t addr, const char *words, size_t n)
{
    if (addr == 0) {
        walk_end(m, p, words, n);
        return;
    }
    const struct live_entry *e = block_at(m, p, addr);
    if (!e || e->unit >= p->nunits)
        return; /* freed meanwhile, or never seen: nothing to say it of */
    if (m->nholdings == m->holdings_cap) {
        size_t cap = m->holdings_cap ? 2 * m->holdings_cap : 16;
        struct holding *h = realloc(m->holdings, cap * sizeof *h);
        if (!h)
            return;
        m->holdings = h;
        m->holdings_cap = cap;
    }
    const char *w = strpool_intern(&m->strings, words, n);
    if (!w)
        return;
    m->holdings[m->nholdings++] = (struct holding){p->pub.index, p->holder_walk, e->unit, 1, e->size, w};
}

static int by_bytes(const void *a, const void *b)
{
    const struct model_holders *x = a, *y = b;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->words, y->words);
}

/* Adds h to the answers in out (n of them, at most max). */
static size_t count_in(struct model_holders *out, size_t n, size_t max, const struct holding *h)
{
    size_t j = 0;
    while (j < n && out[j].words != h->words) /* interned: one pointer per text */
        j++;
    if (j == n) {
        if (n == max)
            return n;
        out[n++] = (struct model_holders){h->words, 0, 0};
    }
    out[j].blocks += h->blocks;
    out[j].bytes += h->bytes;
    return n;
}

/* The row of a unit as the table makes it: a tracked pool's segments are the pool's row. */
static uint32_t unit_row(struct model *m, int proc, uint32_t unit, enum model_group g)
{
    struct process *p = model_proc(m, proc);
    if (!p || unit >= p->nunits)
        return MODEL_NO_ROW;
    struct unit *u = &p->units[unit];
    enum model_cache pool = p->pools_tracked ? unit_pool(m, proc, u) : MODEL_CACHE_NONE;
    return pool ? pool_row_id(m, pool, g) : unit_row_id(m, proc, u, g);
}

static int row_has(struct model *m, const struct holding *h, enum model_group g, uint32_t id)
{
    return g == MODEL_GROUP_COUNT || unit_row(m, h->proc, h->unit, g) == id;
}

size_t model_row_holders_walk(struct model *m, enum model_group g, uint32_t id, int proc, uint32_t walk,
                              struct model_holders *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nholdings; i++) {
        const struct holding *h = &m->holdings[i];
        if (h->proc == proc && h->walk == walk && row_has(m, h, g, id))
            n = count_in(out, n, max, h);
    }
    qsort(out, n, sizeof *out, by_bytes);
    return n;
}

size_t model_row_holders(struct model *m, enum model_group g, uint32_t id, struct model_holders *out,
                         size_t max)
{
    /* each process's latest walk of every tensor (at a mark, at exit), or answer about
     * the row: a row whose blocks were freed since is said of by no one */
    uint32_t *latest = calloc((size_t)m->nprocs + 1, sizeof *latest);
    if (!latest)
        return 0;
    for (size_t i = 0; i < m->nwalks; i++) {
        const struct model_holder_walk *w = &m->walks[i];
        if (strcmp(w->kind, "ask") != 0 && !w->why[0] && w->proc >= 0 && w->proc < m->nprocs &&
            w->walk + 1 > latest[w->proc])
            latest[w->proc] = w->walk + 1;
    }
    for (size_t i = 0; i < m->nholdings; i++) {
        const struct holding *h = &m->holdings[i];
        if (h->proc >= 0 && h->proc < m->nprocs && h->walk + 1 > latest[h->proc] && row_has(m, h, g, id))
            latest[h->proc] = h->walk + 1;
    }
    size_t n = 0;
    for (size_t i = 0; i < m->nholdings; i++) {
        const struct holding *h = &m->holdings[i];
        if (h->proc >= 0 && h->proc < m->nprocs && h->walk + 1 == latest[h->proc] && row_has(m, h, g, id))
            n = count_in(out, n, max, h);
    }
    free(latest);
    qsort(out, n, sizeof *out, by_bytes);
    return n;
}

struct seen_at {
    const struct model_holder_walk *w;
    const char *words;
    uint64_t blocks;
};

static int by_walk_ptr(const void *a, const void *b)
{
    const struct model_holder_walk *const *x = a, *const *y = b;
    if ((*x)->proc != (*y)->proc)
        return (*x)->proc < (*y)->proc ? -1 : 1;
    return (*x)->walk < (*y)->walk ? -1 : (*x)->walk > (*y)->walk;
}

static int by_walk_words(const void *a, const void *b)
{
    const struct seen_at *x = a, *y = b;
    if (x->w != y->w)
        return by_walk_ptr(&x->w, &y->w);
    return x->words < y->words ? -1 : x->words > y->words;
}

/* The ended walk at a mark of (proc, walk), through marks (sorted by by_walk_ptr). */
static const struct model_holder_walk *mark_walk(const struct model_holder_walk **marks, size_t n, int proc,
                                                 uint32_t walk)
{
    struct model_holder_walk key = {.proc = proc, .walk = walk};
    const struct model_holder_walk *k = &key, **w = bsearch(&k, marks, n, sizeof *marks, by_walk_ptr);
    return w ? *w : NULL;
}

/* Whether the group of entries [a, a+na) says the same as [b, b+nb). */
static int same_group(const struct seen_at *a, size_t na, const struct seen_at *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (a[i].words != b[i].words || a[i].blocks != b[i].blocks)
            return 0;
    return 1;
}

/* Folds the seen entries (sorted) per walk and chain, then keeps each walk whose group
 * differs from the one before it of its process. */
static size_t changes_of(struct seen_at *s, size_t n, const struct model_holder_walk **out, size_t max, size_t *total)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && s[k - 1].w == s[i].w && s[k - 1].words == s[i].words)
            s[k - 1].blocks += s[i].blocks;
        else
            s[k++] = s[i];
    }
    size_t nout = 0, prev = 0, nprev = 0;
    *total = 0;
    for (size_t i = 0; i < k;) {
        size_t j = i;
        while (j < k && s[j].w == s[i].w)
            j++;
        int first = !nprev || s[prev].w->proc != s[i].w->proc;
        if (first || !same_group(s + prev, nprev, s + i, j - i)) {
            if (nout == max) /* the latest max: the older ones go */
                memmove(out, out + 1, --nout * sizeof *out);
            if (max)
                out[nout++] = s[i].w;
            ++*total;
        }
        prev = i;
        nprev = j - i;
        i = j;
    }
    return nout;
}

size_t model_row_holder_changes(struct model *m, enum model_group g, uint32_t id,
                                const struct model_holder_walk **out, size_t max, size_t *total)
{
    *total = 0;
    const struct model_holder_walk **marks = malloc((m->nwalks + 1) * sizeof *marks);
    struct seen_at *seen = malloc((m->nholdings + 1) * sizeof *seen);
    size_t nmarks = 0, nseen = 0, n = 0;
    if (!marks || !seen)
        goto done;
    for (size_t i = 0; i < m->nwalks; i++)
        if (!strcmp(m->walks[i].kind, "mark") && !m->walks[i].why[0])
            marks[nmarks++] = &m->walks[i];
    qsort(marks, nmarks, sizeof *marks, by_walk_ptr);
    for (size_t i = 0; nmarks && i < m->nholdings; i++) {
        const struct holding *h = &m->holdings[i];
        const struct model_holder_walk *w = mark_walk(marks, nmarks, h->proc, h->walk);
        if (w && row_has(m, h, g, id))
            seen[nseen++] = (struct seen_at){w, h->words, h->blocks};
    }
    qsort(seen, nseen, sizeof *seen, by_walk_words);
    n = changes_of(seen, nseen, out, max, total);
done:
    free(marks);
    free(seen);
    return n;
}

size_t model_row_blocks(struct model *m, enum model_group g, uint32_t id, int proc, uint64_t *addr, uint64_t *size,
                        size_t max)
{
    struct process *p = model_proc(m, proc);
    size_t n = 0;
    if (!p || !max)
        return 0;
    for (size_t i = 0; i < m->live.n; i++) {
        const struct live_entry *e = &m->live.entries[i];
        if (live_entry_proc(e) != proc || unit_row(m, proc, e->unit, g) != id)
            continue;
        size_t j = n < max ? n++ : max; /* where it goes, keeping the biggest (max: dropped) */
        while (j > 0 && size[j - 1] < e->size) {
            if (j < max) {
                addr[j] = addr[j - 1];
                size[j] = size[j - 1];
            }
            j--;
        }
        if (j < max) {
            addr[j] = e->addr;
            size[j] = e->size;
        }
    }
    return n;
}
