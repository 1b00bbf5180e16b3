/* The events a torch-snapshot writes (torch_snapshot.h), collected as the model reads
 * them: one process's allocations and frees of device memory and of PyTorch's blocks,
 * its marks, the memory it holds, its peak and its first failed allocation. */
#include "torch_snapshot.h"
#include "common/wire.h"

/* The events kept before the ones outside the window are dropped (48 bytes each) */
#define TORCH_TRACE_COMPACT (1u << 20)

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Kinds written: PyTorch's blocks, and device memory at an address (segments). */
static int kept_kind(unsigned kind, unsigned api)
{
    if (kind == CULEAK_KIND_BLOCK)
        return api == CULEAK_API_TORCH_BLOCK_ALLOC || api == CULEAK_API_TORCH_BLOCK_FREE;
    return kind == CULEAK_KIND_DEVICE || kind == CULEAK_KIND_MANAGED || kind == CULEAK_KIND_VMM_MAPPED;
}

size_t torch_trace_window_start(struct torch_trace *t)
{
    if (t->from)
        return t->from_at;
    const struct torch_trace_pattern *best = NULL;
    for (size_t i = 0; i < t->npat; i++)
        if (!best || t->pat[i].count > best->count)
            best = &t->pat[i];
    size_t start = 0;
    t->window_from = NULL;
    if (best && best->count >= TORCH_TRACE_RING) { /* the oldest in the ring */
        start = best->at[best->count % TORCH_TRACE_RING];
        t->window_from = best->label[best->count % TORCH_TRACE_RING];
    }
    size_t back = t->peak_at < t->oom_at ? t->peak_at : t->oom_at;
    if (back < start) {
        start = back;
        t->window_from = NULL;
    }
    return start;
}

/* Drops the events before the window as it stands: the indices kept shift down. Only
 * when that is a quarter of them at least (else the array grows): each move of the
 * window is paid for by the events added since the last. */
static void compact(struct torch_trace *t)
{
    size_t keep = torch_trace_window_start(t);
    if (keep == 0 || keep > t->n || keep < t->n / 4)
        return;
    memmove(t->ev, t->ev + keep, (t->n - keep) * sizeof *t->ev);
    t->n -= keep;
    t->dropped += keep;
    t->peak_at = t->peak_at >= keep ? t->peak_at - keep : 0;
    if (t->oom_at != SIZE_MAX)
        t->oom_at = t->oom_at >= keep ? t->oom_at - keep : 0;
    if (t->from_at != SIZE_MAX)
        t->from_at = t->from_at >= keep ? t->from_at - keep : 0;
    for (size_t i = 0; i < t->npat; i++)
        for (size_t k = 0; k < TORCH_TRACE_RING; k++)
            t->pat[i].at[k] = t->pat[i].at[k] >= keep ? t->pat[i].at[k] - keep : 0;
}

static int add_event(struct torch_trace *t, const struct torch_trace_event *e)
{
    if (t->n >= t->compact_at)
        compact(t);
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 4096;
        struct torch_trace_event *ev = realloc(t->ev, cap * sizeof *ev);
        if (!ev) {
            t->oom = 1;
            return -1;
        }
        t->ev = ev;
        t->cap = cap;
    }
    t->ev[t->n++] = *e;
    return 0;
}

/* The memory live now, kept as the model keeps it (live_table): the stack in unit, the
 * API in ctx, the kind as the address space. */
static void track(struct torch_trace *t, const struct culeak_event *e, struct torch_trace_event *te)
{
    struct live_entry *le = live_table_find(&t->live, 0, e->kind, e->addr);
    int block = e->kind == CULEAK_KIND_BLOCK;
    if (e->op == CULEAK_OP_ALLOC) {
        if (le) /* an address given twice: the old one ended unseen */
            live_table_remove(&t->live, le);
        struct live_entry ne = {.addr = e->addr, .size = e->size, .seq_proc = e->seq << 16,
                                .unit = e->stack <= UINT32_MAX ? (uint32_t)e->stack : 0,
                                .device = (int8_t)(e->device < 0 ? 0 : e->device > 127 ? 127 : e->device),
                                .space = (uint8_t)e->kind, .ctx = (uint16_t)e->api};
        live_table_insert(&t->live, &ne);
        if (!block)
            t->live_bytes += e->size;
    } else if (le) { /* a free gets its allocation's size, stack and device */
        te->size = le->size;
        te->stack = le->unit;
        te->device = le->device;
        if (!block)
            t->live_bytes -= le->size < t->live_bytes ? le->size : t->live_bytes;
        live_table_remove(&t->live, le);
    } else {
        te->failed = 2; /* a free of memory not seen allocated: not written */
    }
    if (t->live_bytes >= t->peak_bytes) { /* the last time at the peak: a plateau's end */
        t->peak_bytes = t->live_bytes;
        t->peak_at = t->n;
    }
}

/* FREE_ALL (a context destroyed, a device reset): every allocation of its device ends. */
static void free_all(struct torch_trace *t, const struct culeak_event *e)
{
    for (size_t i = t->live.n; i-- > 0;) {
        struct live_entry *le = &t->live.entries[i];
        if (le->device != (e->device < 0 ? 0 : e->device))
            continue;
        struct culeak_event f = *e;
        f.op = CULEAK_OP_FREE;
        f.kind = le->space;
        f.api = le->ctx;
        f.addr = le->addr;
        struct torch_trace_event te = {.seq = e->seq, .t_ns = e->t_ns, .addr = le->addr, .api = le->ctx,
                                       .op = CULEAK_OP_FREE, .kind = le->space};
        track(t, &f, &te);
        add_event(t, &te);
    }
}

static void on_event(void *ctx, int proc, const struct culeak_event *e)
{
    struct torch_trace *t = ctx;
    if (t->to_seen || t->oom || (t->proc >= 0 && proc != t->proc))
        return;
    if (e->op == CULEAK_OP_FREE_ALL && t->proc >= 0 && e->result == 0) {
        free_all(t, e);
        return;
    }
    if ((e->op != CULEAK_OP_ALLOC && e->op != CULEAK_OP_FREE) || !kept_kind(e->kind, e->api))
        return;
    if (t->proc < 0) {
        if (e->op != CULEAK_OP_ALLOC)
            return;
        t->proc = proc;
    }
    struct torch_trace_event te = {.seq = e->seq, .t_ns = e->t_ns, .addr = e->addr, .size = e->size,
                                   .stack = e->stack, .api = (uint16_t)e->api, .op = (uint8_t)e->op,
                                   .kind = (uint8_t)e->kind, .device = (int8_t)(e->device < 0 ? 0 : e->device)};
    if (e->result != 0) { /* a failed allocation: PyTorch's "oom" */
        if (e->op != CULEAK_OP_ALLOC)
            return;
        te.failed = 1;
        if (t->oom_at == SIZE_MAX)
            t->oom_at = t->n;
    } else {
        track(t, e, &te);
    }
    /* before --from's mark only the memory live is kept */
    if (te.failed != 2 && !(t->from && t->from_at == SIZE_MAX))
        add_event(t, &te);
}

/* "iteration 12" -> "iteration #" */
static void words_of(const char *label, size_t n, char *out, size_t len)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < len; i++) {
        if (isdigit((unsigned char)label[i])) {
            while (i + 1 < n && isdigit((unsigned char)label[i + 1]))
                i++;
            out[k++] = '#';
        } else {
            out[k++] = label[i];
        }
    }
    out[k] = 0;
}

static void on_mark(void *ctx, int proc, const struct culeak_mark *mk)
{
    struct torch_trace *t = ctx;
    if (t->to_seen || (t->proc >= 0 && proc != t->proc) || (mk->flags & CULEAK_MARK_POP))
        return;
    char *copy = strndup(mk->label.p ? mk->label.p : "", mk->label.n);
    if (!copy)
        return;
    if (t->nmarks == t->capmarks) {
        size_t cap = t->capmarks ? t->capmarks * 2 : 64;
        void *l = realloc(t->marks, cap * sizeof *t->marks);
        if (!l) {
            free(copy);
            return;
        }
        t->marks = l;
        t->capmarks = cap;
    }
    t->marks[t->nmarks].label = copy;
    t->marks[t->nmarks].t_ns = mk->t_ns;
    t->marks[t->nmarks].flags = mk->flags;
    t->marks[t->nmarks++].device = mk->mem_device;
    if (t->from && t->from_at == SIZE_MAX && !strcmp(copy, t->from))
        t->from_at = t->n;
    if (t->to && !strcmp(copy, t->to))
        t->to_seen = 1;
    char words[96];
    words_of(copy, strlen(copy), words, sizeof words);
    size_t i = 0;
    while (i < t->npat && strcmp(t->pat[i].words, words))
        i++;
    if (i == t->npat) {
        if (t->npat == sizeof t->pat / sizeof *t->pat)
            return;
        memset(&t->pat[i], 0, sizeof t->pat[i]);
        memcpy(t->pat[i].words, words, sizeof words);
        t->npat++;
    }
    struct torch_trace_pattern *p = &t->pat[i];
    p->at[p->count % TORCH_TRACE_RING] = t->n;
    p->label[p->count % TORCH_TRACE_RING] = copy;
    p->count++;
}

struct torch_trace *torch_trace_attach(struct model *m, const char *from, const char *to)
{
    struct torch_trace *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->m = m;
    t->from = from;
    t->to = to;
    t->proc = -1;
    t->from_at = t->oom_at = SIZE_MAX;
    t->compact_at = TORCH_TRACE_COMPACT;
    live_table_init(&t->live);
    struct model_observer obs = {.ctx = t, .event = on_event, .mark = on_mark};
    model_set_observer(m, &obs);
    return t;
}

void torch_trace_free(struct torch_trace *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nmarks; i++)
        free((char *)t->marks[i].label);
    free(t->marks);
    free(t->ev);
    live_table_free(&t->live);
    free(t);
}
