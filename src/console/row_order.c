/* The table's order (row_order.h): the comparator, and the same order by radix passes. */
#include "row_order.h"
#include "common/apis.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }

static int cmp_str(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : ""); }

static int is_blocks(const struct row *r) { return r->kinds == 1u << CULEAK_KIND_BLOCK; }

int row_order_cmp(const struct row *a, const struct row *b, enum sort_field f, int reverse)
{
    int c = 0; /* > 0: a comes first when not reversed */
    char ka[128], kb[128];
    switch (f) {
    case SORT_ID: c = -cmp_u64(a->id, b->id); break;
    case SORT_LIVE: c = cmp_u64(a->live, b->live); break;
    case SORT_COUNT: c = cmp_u64(a->count, b->count); break;
    case SORT_CHANGE: c = a->change < b->change ? -1 : a->change > b->change; break;
    case SORT_PEAK: c = cmp_u64(a->peak, b->peak); break;
    case SORT_ALLOCS: c = cmp_u64(a->allocs, b->allocs); break;
    case SORT_KIND: c = -strcmp(ui_kinds(a->kinds, ka, sizeof ka), ui_kinds(b->kinds, kb, sizeof kb)); break;
    case SORT_SITE: c = -cmp_str(a->text, b->text); break;
    case SORT_MODULE: c = -cmp_str(a->module, b->module); break;
    }
    if (c == 0) /* stable order: larger live first, then lower id, a site's blocks row last */
        c = cmp_u64(a->live, b->live);
    if (c == 0)
        c = -cmp_u64(a->id, b->id);
    if (c == 0)
        c = is_blocks(b) - is_blocks(a);
    return reverse ? c : -c;
}

static int qsort_cmp(const void *a, const void *b, void *arg)
{
    const int *fr = arg;
    return row_order_cmp(a, b, (enum sort_field)fr[0], fr[1]);
}

/* Keys are unsigned images of row_order_cmp's c: larger c, larger key. */
static uint64_t key_of(const struct row *r, enum sort_field f)
{
    switch (f) {
    case SORT_ID: return ~(uint64_t)r->id;
    case SORT_COUNT: return r->count;
    case SORT_CHANGE: return (uint64_t)r->change ^ (1ull << 63);
    case SORT_PEAK: return r->peak;
    case SORT_ALLOCS: return r->allocs;
    default: return r->live;
    }
}

static uint64_t tie_key(const struct row *r) { return ~((uint64_t)r->id << 1 | (uint64_t)is_blocks(r)); }

static unsigned bits(uint64_t v)
{
    return v ? 64 - (unsigned)__builtin_clzll(v) : 0;
}

static uint64_t low_mask(unsigned w) { return w >= 64 ? UINT64_MAX : (1ull << w) - 1; }

#define DIGIT 11

/* Stable LSD radix sort of (*a)[0..n) by bits [lo, hi) of each item, DIGIT bits a pass;
 * a pass whose digit is the same in every item is skipped. The result ends in *a. */
static void radix(uint64_t **a, uint64_t **b, size_t n, unsigned lo, unsigned hi)
{
    size_t count[1u << DIGIT];
    for (unsigned sh = lo; sh < hi; sh += DIGIT) {
        uint64_t mask = low_mask(hi - sh < DIGIT ? hi - sh : DIGIT), *x = *a, *y = *b;
        memset(count, 0, (mask + 1) * sizeof *count);
        for (size_t i = 0; i < n; i++)
            count[x[i] >> sh & mask]++;
        if (count[x[0] >> sh & mask] == n)
            continue;
        size_t sum = 0;
        for (uint64_t d = 0; d <= mask; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            y[count[x[i] >> sh & mask]++] = x[i];
        *a = y;
        *b = x;
    }
}

static int grow(struct row_sort_scratch *s, size_t n)
{
    if (n <= s->cap)
        return 0;
    uint64_t *v = realloc(s->keys, 5 * n * sizeof *v);
    if (!v)
        return -1;
    s->keys = v;
    s->cap = n;
    return 0;
}

/* ---- text columns: each text's place among the distinct texts, kept from frame to frame ---- */

static size_t hash_slot(const struct row_sort_scratch *s, const char *p)
{
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull; /* Fibonacci hashing: the high bits */
    return (size_t)(h >> (64 - __builtin_ctzll(s->hash_cap)));
}

/* The slot of p, or the empty one where it would go. */
static size_t hash_find(const struct row_sort_scratch *s, const char *p)
{
    size_t h = hash_slot(s, p);
    while (s->hash_rank[h] != UINT32_MAX && s->hash_ptr[h] != p)
        h = (h + 1) & (s->hash_cap - 1);
    return h;
}

/* An empty hash of at least twice n slots. */
static int hash_clear(struct row_sort_scratch *s, size_t n)
{
    size_t cap = 1024;
    while (cap < 2 * n)
        cap *= 2;
    if (cap > s->hash_cap) {
        const char **p = malloc(cap * sizeof *p);
        uint32_t *r = p ? malloc(cap * sizeof *r) : NULL;
        if (!r) {
            free(p);
            return -1;
        }
        free(s->hash_ptr);
        free(s->hash_rank);
        s->hash_ptr = p;
        s->hash_rank = r;
        s->hash_cap = cap;
    }
    if (s->hash_cap)
        memset(s->hash_rank, 0xff, s->hash_cap * sizeof *s->hash_rank);
    return 0;
}

static int cmp_text_ptr(const void *a, const void *b)
{
    return cmp_str(*(const char *const *)a, *(const char *const *)b);
}

/* texts[0..n) is in text order: each pointer's rank (equal texts, equal ranks) into the
 * hash, emptied first. */
static int rank_texts(struct row_sort_scratch *s)
{
    if (hash_clear(s, s->ntexts) != 0)
        return -1;
    uint32_t rank = 0;
    for (size_t i = 0; i < s->ntexts; i++) {
        if (i && cmp_str(s->texts[i - 1], s->texts[i]) != 0)
            rank++;
        size_t h = hash_find(s, s->texts[i]);
        s->hash_ptr[h] = s->texts[i];
        s->hash_rank[h] = rank;
    }
    return 0;
}

static int texts_reserve(struct row_sort_scratch *s, size_t n)
{
    if (n <= s->texts_cap)
        return 0;
    const char **t = realloc(s->texts, n * sizeof *t);
    if (!t)
        return -1;
    s->texts = t;
    s->texts_cap = n;
    return 0;
}

static const char *text_of(const struct row *r, enum sort_field f) { return f == SORT_SITE ? r->text : r->module; }

/* Texts not seen before go into the order: sorted among themselves, then merged into
 * the kept ones (O(kept + new log new) comparisons, not a sort of all of them). When
 * most of the kept texts are no longer any row's (names replaced them), the order is
 * made from the rows' texts alone. */
static int texts_add(struct row_sort_scratch *s, const struct row *rows, size_t n, enum sort_field f)
{
    size_t fresh = 0;
    const char **add = NULL;
    for (int pass = 0; pass < 2; pass++) { /* count, then collect: each new pointer once */
        for (size_t i = 0; i < n; i++) {
            const char *p = text_of(&rows[i], f);
            size_t h = hash_find(s, p);
            if (s->hash_rank[h] != UINT32_MAX)
                continue;
            if (pass) {
                add[fresh++] = p;
                s->hash_ptr[h] = p; /* seen: a rank to come */
                s->hash_rank[h] = 0;
            } else
                fresh++;
        }
        if (!pass) {
            if (!fresh)
                return 0;
            if (!(add = malloc(fresh * sizeof *add)))
                return -1;
            if (s->ntexts + fresh > s->hash_cap / 2) { /* room in the hash for them all */
                if (hash_clear(s, s->ntexts + fresh) != 0 || rank_texts(s) != 0) {
                    free(add);
                    return -1;
                }
            }
            fresh = 0;
        }
    }
    if (s->ntexts > 2 * n) { /* mostly stale: the rows' texts only */
        s->ntexts = 0;
        free(add);
        if (hash_clear(s, n) != 0)
            return -1;
        return texts_add(s, rows, n, f);
    }
    s->text_merges++;
    qsort(add, fresh, sizeof *add, cmp_text_ptr);
    if (texts_reserve(s, s->ntexts + fresh) != 0) {
        free(add);
        return -1;
    }
    /* merged from the back: the kept texts move up as the new ones go in */
    size_t i = s->ntexts, j = fresh, k = s->ntexts + fresh;
    while (j > 0) {
        if (i > 0 && cmp_str(s->texts[i - 1], add[j - 1]) > 0)
            s->texts[--k] = s->texts[--i];
        else
            s->texts[--k] = add[--j];
    }
    s->ntexts += fresh;
    free(add);
    return rank_texts(s);
}

/* By row (id and blocks row) a text pointer and its rank, read in the rows' order (near
 * the ids' order) where the hash is a random read per row; emptied when ranks change. */
static void slots_fresh(struct row_sort_scratch *s, size_t n)
{
    size_t most = 4 * n + 1024;
    if (s->slots_merges == s->text_merges && s->slot_rank && s->slots_cap >= most)
        return;
    if (s->slots_cap < most) {
        const char **p = realloc(s->slot_ptr, most * sizeof *p);
        uint32_t *r = p ? realloc(s->slot_rank, most * sizeof *r) : NULL;
        if (p)
            s->slot_ptr = p;
        if (r) {
            s->slot_rank = r;
            s->slots_cap = most;
        }
    }
    if (s->slot_rank)
        memset(s->slot_rank, 0xff, s->slots_cap * sizeof *s->slot_rank);
    s->slots_merges = s->text_merges;
}

/* The rows' text ranks (larger text, larger rank); 1: a text not ranked yet. */
static int ranks_kept(struct row_sort_scratch *s, const struct row *rows, size_t n, enum sort_field f,
                      uint64_t *rank)
{
    slots_fresh(s, n);
    for (size_t i = 0; i < n; i++) {
        const char *p = text_of(&rows[i], f);
        size_t slot = (size_t)rows[i].id << 1 | (size_t)is_blocks(&rows[i]);
        if (slot < s->slots_cap && s->slot_rank[slot] != UINT32_MAX && s->slot_ptr[slot] == p) {
            rank[i] = s->slot_rank[slot];
            continue;
        }
        uint32_t r = s->hash_rank[hash_find(s, p)];
        if (r == UINT32_MAX)
            return 1;
        rank[i] = r;
        if (slot < s->slots_cap) {
            s->slot_ptr[slot] = p;
            s->slot_rank[slot] = r;
        }
    }
    return 0;
}

static int text_ranks(struct row_sort_scratch *s, const struct row *rows, size_t n, enum sort_field f, uint64_t *rank)
{
    if (!s->hash_cap && hash_clear(s, n) != 0)
        return -1;
    if (ranks_kept(s, rows, n, f, rank) == 0)
        return 0;
    if (texts_add(s, rows, n, f) != 0) {
        s->ntexts = 0; /* the kept texts may be half merged: all of them again next time */
        s->text_merges++;
        hash_clear(s, 0);
        return -1;
    }
    return ranks_kept(s, rows, n, f, rank) == 0 ? 0 : -1;
}

/* Three keys, most significant first: the column, live bytes (the column itself when it
 * is live), the tie; each kept as its distance from where its order starts (smaller
 * first), in s->keys (arrays of n), its span in w[j] bits. -1: a text column (the
 * comparator's), or out of memory. */
int rows_keys(const struct row *rows, size_t n, enum sort_field f, int reverse, struct row_sort_scratch *s)
{
    if (grow(s, n) != 0)
        return -1;
    s->f = f;
    s->reverse = reverse;
    s->rows = rows;
    if (f == SORT_KIND) {
        s->nk = 0; /* rows compare by the comparator */
        return 0;
    }
    int nk = s->nk = f == SORT_LIVE ? 2 : 3;
    unsigned *w = s->w;
    uint64_t *d[3] = {s->keys, s->keys + n, s->keys + 2 * n};
    uint64_t lo[3] = {UINT64_MAX, UINT64_MAX, UINT64_MAX}, hi[3] = {0, 0, 0};
    int text = f == SORT_SITE || f == SORT_MODULE; /* the text's rank, made into d[0] first */
    if (text && text_ranks(s, rows, n, f, d[0]) != 0) {
        s->nk = 0;
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t k[3] = {text ? ~d[0][i] : key_of(&rows[i], f), rows[i].live, tie_key(&rows[i])};
        if (nk == 2)
            k[1] = k[2];
        for (int j = 0; j < nk; j++) {
            d[j][i] = k[j];
            lo[j] = k[j] < lo[j] ? k[j] : lo[j];
            hi[j] = k[j] > hi[j] ? k[j] : hi[j];
        }
    }
    for (int j = 0; j < nk; j++) {
        w[j] = bits(hi[j] - lo[j]);
        for (size_t i = 0; i < n; i++) /* forward: larger first */
            d[j][i] = reverse ? d[j][i] - lo[j] : hi[j] - d[j][i];
    }
    return 0;
}

static int key_less(const struct row_sort_scratch *s, size_t n, size_t a, size_t b)
{
    if (!s->nk)
        return row_order_cmp(&s->rows[a], &s->rows[b], (enum sort_field)s->f, s->reverse) < 0;
    for (int j = 0; j < s->nk; j++) {
        uint64_t x = s->keys[(size_t)j * n + a], y = s->keys[(size_t)j * n + b];
        if (x != y)
            return x < y;
    }
    return 0;
}

size_t rows_rank(const struct row_sort_scratch *s, size_t n, size_t i)
{
    size_t rank = 0;
    for (size_t x = 0; x < n; x++)
        rank += key_less(s, n, x, i);
    return rank;
}

/* Bounded heaps of row indices. A max-heap (max 1) keeps the k smallest keys seen, the
 * largest of them at the root; a min-heap (max 0) the k largest. */
struct heap {
    const struct row_sort_scratch *s;
    size_t n;       /* rows: the keys' stride */
    uint64_t *v;
    size_t len, cap;
    int max;
};

/* a sits below b in the heap */
static int below(const struct heap *h, uint64_t a, uint64_t b)
{
    return h->max ? key_less(h->s, h->n, a, b) : key_less(h->s, h->n, b, a);
}

static void heap_down(struct heap *h, size_t len, size_t at)
{
    for (;;) {
        size_t c = 2 * at + 1;
        if (c >= len)
            return;
        if (c + 1 < len && below(h, h->v[c], h->v[c + 1]))
            c++;
        if (!below(h, h->v[at], h->v[c]))
            return;
        uint64_t t = h->v[at];
        h->v[at] = h->v[c];
        h->v[c] = t;
        at = c;
    }
}

static void heap_offer(struct heap *h, uint64_t i)
{
    if (!h->cap)
        return;
    if (h->len < h->cap) {
        size_t at = h->len++;
        h->v[at] = i;
        for (; at && below(h, h->v[(at - 1) / 2], h->v[at]); at = (at - 1) / 2) {
            uint64_t t = h->v[at];
            h->v[at] = h->v[(at - 1) / 2];
            h->v[(at - 1) / 2] = t;
        }
    } else if (below(h, i, h->v[0])) {
        h->v[0] = i;
        heap_down(h, h->len, 0);
    }
}

/* Sorts the heap's rows in place: smallest key first. */
static void heap_sort(struct heap *h)
{
    for (size_t e = h->len; e > 1; e--) { /* the root to the end */
        uint64_t t = h->v[0];
        h->v[0] = h->v[e - 1];
        h->v[e - 1] = t;
        heap_down(h, e - 1, 0);
    }
    if (!h->max) /* a min-heap leaves the largest first */
        for (size_t i = 0, j = h->len; i + 1 < j; i++, j--) {
            uint64_t t = h->v[i];
            h->v[i] = h->v[j - 1];
            h->v[j - 1] = t;
        }
}

size_t rows_window(struct row *rows, size_t n, size_t at, size_t lo, size_t hi, struct row_sort_scratch *s)
{
    if (hi > n)
        hi = n;
    if (lo >= hi)
        return lo;
    uint64_t *win = s->keys + 3 * n; /* the window's rows, in order */
    uint8_t *in = (uint8_t *)(s->keys + 4 * n); /* 1: one of the window's rows */
    size_t rank = at < n ? rows_rank(s, n, at) : 0;
    if (at >= n || rank < lo || rank >= hi) { /* no row to start from: the first hi rows */
        at = n;
        rank = 0;
    }
    /* before the row at: the rows nearest under it; after it, the ones nearest over it */
    struct heap before = {.s = s, .n = n, .v = win, .cap = at < n ? rank - lo : 0, .max = 0};
    struct heap after = {.s = s, .n = n, .v = win + before.cap + (at < n), .cap = at < n ? hi - 1 - rank : hi,
                         .max = 1};
    for (size_t i = 0; i < n; i++) {
        if (at >= n || key_less(s, n, at, i))
            heap_offer(&after, i);
        else if (i != at)
            heap_offer(&before, i);
    }
    heap_sort(&before);
    heap_sort(&after);
    if (at < n)
        win[before.len] = at;
    size_t k = before.len + (at < n) + after.len, first = at < n ? lo : 0;
    if (after.v != win + before.len + (at < n)) /* before came up short: close the gap */
        memmove(win + before.len + (at < n), after.v, after.len * sizeof *win);
    /* Rows go to their places; the rows they displace fill the places they left. */
    struct row *best = malloc((k ? k : 1) * sizeof *best);
    if (!best) { /* all of them in order, then */
        int arg[2] = {s->f, s->reverse};
        qsort_r(rows, n, sizeof *rows, qsort_cmp, arg);
        return first;
    }
    memset(in, 0, n);
    for (size_t j = 0; j < k; j++) {
        in[win[j]] = 1;
        best[j] = rows[win[j]];
    }
    size_t hole = 0; /* places outside [first, first + k) that a window row left */
    for (size_t j = first; j < first + k; j++) {
        if (in[j])
            continue;
        while (!in[hole] || (hole >= first && hole < first + k))
            hole++;
        rows[hole++] = rows[j];
    }
    memcpy(rows + first, best, k * sizeof *best);
    free(best);
    return first;
}

void rows_sort(struct row **rowsp, size_t *capp, size_t n, enum sort_field f, int reverse,
               struct row_sort_scratch *s)
{
    struct row *rows = *rowsp;
    if (n < 2)
        return;
    if (rows_keys(rows, n, f, reverse, s) != 0 || !s->nk) { /* text columns: the comparator */
        int arg[2] = {(int)f, reverse};
        qsort_r(rows, n, sizeof *rows, qsort_cmp, arg);
        return;
    }
    /* items are key bits over the row's index (wi bits) */
    int nk = s->nk;
    const unsigned *w = s->w;
    uint64_t *d[3] = {s->keys, s->keys + n, s->keys + 2 * n}, *v = s->keys + 3 * n, *tmp = s->keys + 4 * n;
    unsigned total = 0, wi = bits(n - 1);
    for (int j = 0; j < nk; j++)
        total += w[j];
    uint64_t imask = low_mask(wi);
    if (!s->multi_pass && total + wi <= 64) { /* one key of all three */
        for (size_t i = 0; i < n; i++) {
            uint64_t key = 0;
            for (int j = 0; j < nk; j++)
                key = key << w[j] | d[j][i];
            v[i] = key << wi | i;
        }
        radix(&v, &tmp, n, wi, wi + total);
    } else { /* least significant key first, in parts of 64 - wi bits: stable passes */
        for (size_t i = 0; i < n; i++)
            v[i] = i;
        for (int j = nk - 1; j >= 0; j--) {
            for (unsigned off = 0; off < w[j]; off += 64 - wi) {
                unsigned part = w[j] - off < 64 - wi ? w[j] - off : 64 - wi;
                for (size_t i = 0; i < n; i++) {
                    uint64_t row = v[i] & imask;
                    v[i] = (d[j][row] >> off & low_mask(part)) << wi | row;
                }
                radix(&v, &tmp, n, wi, wi + part);
            }
        }
    }
    if (s->spare_cap < n) {
        struct row *sp = realloc(s->spare, n * sizeof *sp);
        if (!sp) { /* sorted again, in place */
            int arg[2] = {(int)f, reverse};
            qsort_r(rows, n, sizeof *rows, qsort_cmp, arg);
            return;
        }
        s->spare = sp;
        s->spare_cap = n;
    }
    /* gathered into the spare buffer (independent loads, many in flight), which then
     * takes the rows' place */
    for (size_t i = 0; i < n; i++)
        s->spare[i] = rows[v[i] & imask];
    *rowsp = s->spare;
    s->spare = rows;
    size_t cap = *capp;
    *capp = s->spare_cap;
    s->spare_cap = cap;
}

void row_sort_scratch_free(struct row_sort_scratch *s)
{
    free(s->keys);
    free(s->spare);
    free(s->texts);
    free(s->hash_ptr);
    free(s->hash_rank);
    free(s->slot_ptr);
    free(s->slot_rank);
    memset(s, 0, sizeof *s);
}
