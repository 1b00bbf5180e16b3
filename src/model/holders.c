/* Who holds a block: the HOLDER records culeak's Python side sends (the chain of Python
 * references from a root to the tensor whose data lies in a live block), kept by the
 * block's stack, and grouped per report row: "29 of 30 blocks held by `grads`". */
#include "model_internal.h"

#include <stdlib.h>
#include <string.h>

struct holding {
    int proc;
    uint64_t stack, bytes;
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

void holders_add(struct model *m, struct process *p, uint64_t addr, const char *words, size_t n)
{
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
    m->holdings[m->nholdings++] = (struct holding){p->pub.index, p->units[e->unit].stack, e->size, w};
}

static int by_bytes(const void *a, const void *b)
{
    const struct model_holders *x = a, *y = b;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->words, y->words);
}

size_t model_row_holders(struct model *m, enum model_group g, uint32_t id, struct model_holders *out,
                         size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nholdings; i++) {
        const struct holding *h = &m->holdings[i];
        if (g != MODEL_GROUP_COUNT && model_stack_row(m, h->proc, h->stack, g) != id)
            continue;
        size_t j = 0;
        while (j < n && out[j].words != h->words) /* interned: one pointer per text */
            j++;
        if (j == n) {
            if (n == max)
                continue;
            out[n++] = (struct model_holders){h->words, 0, 0};
        }
        out[j].blocks++;
        out[j].bytes += h->bytes;
    }
    qsort(out, n, sizeof *out, by_bytes);
    return n;
}
