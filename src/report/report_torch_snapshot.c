/* report --format torch-snapshot (torch_snapshot.h): the dict torch.cuda.memory._snapshot()
 * returns, pickled as PyTorch 2.x writes it (torch/csrc/cuda/memory_snapshot.cpp): the
 * segments live at the end with their blocks, and per device the trace of the window
 * (alloc, free_requested, free_completed, segment_alloc, segment_free, segment_map,
 * segment_unmap, oom), every entry with its frames (innermost first) and time in
 * microseconds. Memory PyTorch's allocator does not see (raw cudaMalloc, cuBLAS, NCCL,
 * CuPy) is a segment of one block each, its first frame naming its allocator. */
#include "torch_snapshot.h"
#include "common/pickle_write.h"
#include "common/u64map.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FRAMES 128

/* Keys and constant values: written once, then taken from the pickle's memo. */
static const char K_ACTION[] = "action", K_ADDR[] = "addr", K_SIZE[] = "size", K_STREAM[] = "stream",
                  K_TIME[] = "time_us", K_FRAMES[] = "frames", K_NAME[] = "name", K_FILENAME[] = "filename",
                  K_LINE[] = "line", K_ADDRESS[] = "address", K_REQUESTED[] = "requested_size",
                  K_STATE[] = "state", K_DEVICE[] = "device", K_DEVICE_FREE[] = "device_free",
                  K_COMPILE[] = "compile_context", K_USER_META[] = "user_metadata";
static const char V_ALLOC[] = "alloc", V_FREE_REQ[] = "free_requested", V_FREE_DONE[] = "free_completed",
                  V_SEG_ALLOC[] = "segment_alloc", V_SEG_FREE[] = "segment_free", V_SEG_MAP[] = "segment_map",
                  V_SEG_UNMAP[] = "segment_unmap", V_OOM[] = "oom", V_ACTIVE[] = "active_allocated",
                  V_INACTIVE[] = "inactive", V_NA[] = "N/A", V_EMPTY[] = "";

struct writer {
    struct pkw w;
    struct model *m;
    struct torch_trace *t;
    int proc;
    const struct model_process *p;
    struct u64map frames; /* (stack, label) -> memo index of its frames list */
    struct model_frame *fr;
};

static uint64_t time_us(const struct writer *wr, uint64_t t_ns)
{
    const struct model_process *p = wr->p;
    if (!p->start_realtime_ns || t_ns < p->start_monotonic_ns)
        return t_ns / 1000;
    return (p->start_realtime_ns + (t_ns - p->start_monotonic_ns)) / 1000;
}

/* The allocator of memory PyTorch does not see, in words: the library in its stack, or
 * the CUDA API that made it. */
static const char *allocator_words(struct writer *wr, uint64_t stack, unsigned kind, unsigned api)
{
    static const struct {
        const char *glob, *words;
    } libs[] = {{"libcublasLt*", "cuBLASLt"}, {"libcublas*", "cuBLAS"}, {"libnccl*", "NCCL"},
                {"libcudnn*", "cuDNN"},       {"libcufft*", "cuFFT"},   {"libcusparse*", "cuSPARSE"},
                {"libcusolver*", "cuSOLVER"}, {"libcurand*", "cuRAND"}, {"*cupy*", "CuPy"},
                {"*xla*", "XLA"}};
    enum model_cache c = model_stack_allocator(wr->m, wr->proc, stack, kind);
    if (c != MODEL_CACHE_NONE)
        return model_pool_name(c);
    size_t n = model_stack_frames(wr->m, wr->proc, stack, wr->fr, MAX_FRAMES);
    for (size_t i = 0; i < n && i < MAX_FRAMES; i++) {
        const char *mod = wr->fr[i].module, *base = mod ? strrchr(mod, '/') : NULL;
        base = base ? base + 1 : mod;
        for (size_t k = 0; base && k < sizeof libs / sizeof *libs; k++)
            if (fnmatch(libs[k].glob, base, 0) == 0)
                return libs[k].words;
    }
    const char *name = culeak_api_name(api);
    return !strncmp(name, "cuda", 4) ? "CUDA runtime" : "CUDA driver";
}

static void frame(struct writer *wr, const char *name, const char *file, unsigned line)
{
    pkw_dict(&wr->w);
    pkw_key(&wr->w, K_NAME);
    pkw_str(&wr->w, name ? name : "??");
    pkw_key(&wr->w, K_FILENAME);
    pkw_str(&wr->w, file ? file : "??");
    pkw_key(&wr->w, K_LINE);
    pkw_uint(&wr->w, line);
    pkw_dict_end(&wr->w);
}

/* The frames of a stack, innermost first, each list written once. Other memory than
 * PyTorch's (other: its API) gets a first frame naming its allocator. */
static void frames(struct writer *wr, uint64_t stack, unsigned kind, unsigned api, int other)
{
    uint64_t key = stack << 9 | (other ? (api & 0xff) + 1 : 0);
    uint32_t memo = u64map_get(&wr->frames, key);
    pkw_key(&wr->w, K_FRAMES);
    if (memo != UINT32_MAX) {
        pkw_get(&wr->w, memo);
        return;
    }
    pkw_list(&wr->w);
    if (other) {
        char name[160];
        snprintf(name, sizeof name, "%s: %s", allocator_words(wr, stack, kind, api), culeak_api_name(api));
        frame(wr, name, "<memory PyTorch's caching allocator does not see>", 0);
    }
    size_t n = stack ? model_stack_frames(wr->m, wr->proc, stack, wr->fr, MAX_FRAMES) : 0;
    for (size_t i = 0; i < n && i < MAX_FRAMES; i++) {
        const struct model_frame *f = &wr->fr[i];
        char name[512];
        const char *base = f->module ? strrchr(f->module, '/') : NULL;
        if (!f->function)
            snprintf(name, sizeof name, "%s+0x%llx", base ? base + 1 : f->module ? f->module : "?",
                     (unsigned long long)f->offset);
        frame(wr, f->function ? f->function : name, f->file ? f->file : f->module, f->line);
    }
    pkw_list_end(&wr->w);
    u64map_put(&wr->frames, key, pkw_put(&wr->w));
}

/* Is this device memory PyTorch's own segment? */
static int torch_segment(struct writer *wr, uint64_t stack, unsigned kind)
{
    return model_stack_allocator(wr->m, wr->proc, stack, kind) == MODEL_CACHE_PYTORCH;
}

static void entry(struct writer *wr, const char *action, const struct torch_trace_event *e, int other)
{
    pkw_dict(&wr->w);
    pkw_key(&wr->w, K_ACTION);
    pkw_key(&wr->w, action);
    pkw_key(&wr->w, action == V_OOM ? K_DEVICE_FREE : K_ADDR);
    pkw_uint(&wr->w, action == V_OOM ? 0 : e->addr);
    pkw_key(&wr->w, K_SIZE);
    pkw_uint(&wr->w, e->size);
    pkw_key(&wr->w, K_STREAM);
    pkw_uint(&wr->w, 0);
    pkw_key(&wr->w, K_TIME);
    pkw_uint(&wr->w, time_us(wr, e->t_ns));
    pkw_key(&wr->w, K_COMPILE);
    pkw_key(&wr->w, V_NA);
    pkw_key(&wr->w, K_USER_META);
    pkw_key(&wr->w, V_EMPTY);
    frames(wr, e->stack, e->kind, e->api, other);
    pkw_dict_end(&wr->w);
    wr->t->entries++;
}

/* One event as PyTorch's trace entries. */
static void event(struct writer *wr, const struct torch_trace_event *e)
{
    int alloc = e->op == CULEAK_OP_ALLOC;
    if (e->failed) {
        entry(wr, V_OOM, e, 0);
    } else if (e->kind == CULEAK_KIND_BLOCK) {
        if (alloc)
            entry(wr, V_ALLOC, e, 0);
        else {
            entry(wr, V_FREE_REQ, e, 0);
            entry(wr, V_FREE_DONE, e, 0);
        }
    } else if (torch_segment(wr, e->stack, e->kind)) {
        int map = e->kind == CULEAK_KIND_VMM_MAPPED;
        entry(wr, alloc ? (map ? V_SEG_MAP : V_SEG_ALLOC) : (map ? V_SEG_UNMAP : V_SEG_FREE), e, 0);
    } else if (alloc) { /* a segment of its own, all one block */
        entry(wr, V_SEG_ALLOC, e, 1);
        entry(wr, V_ALLOC, e, 1);
    } else {
        entry(wr, V_FREE_REQ, e, 1);
        entry(wr, V_FREE_DONE, e, 1);
        entry(wr, V_SEG_FREE, e, 1);
    }
}

/* The end of the window: --to's mark (the model stopped there), or, when the process
 * exited, its last allocation: the frees of its exit (a Python interpreter's teardown
 * frees every tensor) would leave nothing to see. */
static size_t window_end(struct torch_trace *t, const struct model_process *p)
{
    t->exit_left_out = 0;
    if (t->to || !p->exited)
        return t->n;
    size_t end = t->n;
    while (end > 0 && t->ev[end - 1].op == CULEAK_OP_FREE)
        end--;
    t->exit_left_out = t->n - end;
    return end;
}

static int by_addr(const void *a, const void *b)
{
    const struct live_entry *x = *(struct live_entry *const *)a, *y = *(struct live_entry *const *)b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void block(struct writer *wr, uint64_t addr, uint64_t size, const struct live_entry *b, int other)
{
    pkw_dict(&wr->w);
    pkw_key(&wr->w, K_ADDRESS);
    pkw_uint(&wr->w, addr);
    pkw_key(&wr->w, K_SIZE);
    pkw_uint(&wr->w, size);
    pkw_key(&wr->w, K_REQUESTED);
    pkw_uint(&wr->w, b ? size : 0);
    pkw_key(&wr->w, K_STATE);
    pkw_key(&wr->w, b ? V_ACTIVE : V_INACTIVE);
    if (b)
        frames(wr, b->unit, b->space, b->ctx, other);
    else {
        pkw_key(&wr->w, K_FRAMES);
        pkw_list(&wr->w);
        pkw_list_end(&wr->w);
    }
    pkw_dict_end(&wr->w);
    if (b)
        wr->t->blocks++;
}

/* A segment and the blocks inside it (blocks[0..n), by address), the gaps between them
 * inactive blocks, so that the blocks tile the segment as PyTorch's do. seg NULL: a
 * block whose segment was not seen, alone in a segment of its own size. */
static void segment(struct writer *wr, const struct live_entry *seg, struct live_entry **blocks, size_t n)
{
    const struct live_entry *s = seg ? seg : blocks[0];
    uint64_t active = 0;
    for (size_t i = 0; i < n; i++)
        active += blocks[i]->size;
    int other = seg && !n && !torch_segment(wr, seg->unit, seg->space);
    if (other)
        active = seg->size;
    pkw_dict(&wr->w);
    pkw_key(&wr->w, K_DEVICE);
    pkw_uint(&wr->w, (uint64_t)(s->device < 0 ? 0 : s->device));
    pkw_key(&wr->w, K_ADDRESS);
    pkw_uint(&wr->w, s->addr);
    pkw_str(&wr->w, "total_size");
    pkw_uint(&wr->w, s->size);
    pkw_str(&wr->w, "allocated_size");
    pkw_uint(&wr->w, active);
    pkw_str(&wr->w, "active_size");
    pkw_uint(&wr->w, active);
    pkw_key(&wr->w, K_REQUESTED);
    pkw_uint(&wr->w, active);
    pkw_key(&wr->w, K_STREAM);
    pkw_uint(&wr->w, 0);
    pkw_str(&wr->w, "segment_type");
    pkw_str(&wr->w, s->size > (2u << 20) ? "large" : "small"); /* PyTorch's small pool: 2 MiB segments */
    pkw_str(&wr->w, "segment_pool_id");
    pkw_tuple(&wr->w);
    pkw_uint(&wr->w, 0);
    pkw_uint(&wr->w, 0);
    pkw_tuple_end(&wr->w);
    pkw_str(&wr->w, "is_expandable");
    pkw_bool(&wr->w, s->space == CULEAK_KIND_VMM_MAPPED);
    frames(wr, s->unit, s->space, s->ctx, other);
    pkw_str(&wr->w, "blocks");
    pkw_list(&wr->w);
    if (!seg || other) {
        block(wr, s->addr, s->size, s, other);
    } else {
        uint64_t at = seg->addr, end = seg->addr + seg->size;
        for (size_t i = 0; i < n; i++) {
            if (blocks[i]->addr > at)
                block(wr, at, blocks[i]->addr - at, NULL, 0);
            block(wr, blocks[i]->addr, blocks[i]->size, blocks[i], 0);
            at = blocks[i]->addr + blocks[i]->size;
        }
        if (at < end)
            block(wr, at, end - at, NULL, 0);
    }
    pkw_list_end(&wr->w);
    pkw_dict_end(&wr->w);
    wr->t->segments++;
}

/* The segments live at the end (event index end): those live now and those the events
 * past the end freed, each with the blocks inside it. */
static int segments(struct writer *wr, size_t end)
{
    struct torch_trace *t = wr->t;
    struct live_table *lt = &t->live;
    size_t n = lt->n + (t->n - end);
    struct live_entry *all = malloc((n + 1) * sizeof *all);
    struct live_entry **segs = malloc((n + 1) * sizeof *segs), **blocks = malloc((n + 1) * sizeof *blocks);
    if (!all || !segs || !blocks) {
        free(all);
        free(segs);
        free(blocks);
        return -1;
    }
    memcpy(all, lt->entries, lt->n * sizeof *all);
    n = lt->n;
    for (size_t i = end; i < t->n; i++) {
        const struct torch_trace_event *e = &t->ev[i];
        if (e->op == CULEAK_OP_FREE && !e->failed)
            all[n++] = (struct live_entry){.addr = e->addr, .size = e->size, .unit = (uint32_t)e->stack,
                                           .device = e->device, .space = e->kind, .ctx = e->api};
    }
    size_t ns = 0, nb = 0;
    for (size_t i = 0; i < n; i++) {
        if (all[i].space == CULEAK_KIND_BLOCK)
            blocks[nb++] = &all[i];
        else
            segs[ns++] = &all[i];
    }
    qsort(segs, ns, sizeof *segs, by_addr);
    qsort(blocks, nb, sizeof *blocks, by_addr);
    pkw_str(&wr->w, "segments");
    pkw_list(&wr->w);
    size_t b = 0;
    for (size_t s = 0; s < ns; s++) {
        uint64_t lo = segs[s]->addr, hi = segs[s]->addr + segs[s]->size;
        for (; b < nb && blocks[b]->addr < lo; b++) /* blocks below it, in no segment seen */
            segment(wr, NULL, &blocks[b], 1);
        size_t first = b;
        /* a block that overruns its segment ends it: the rest are in no segment seen */
        while (b < nb && blocks[b]->addr >= lo && blocks[b]->addr + blocks[b]->size <= hi &&
               (b == first || blocks[b]->addr >= blocks[b - 1]->addr + blocks[b - 1]->size))
            b++;
        segment(wr, segs[s], blocks + first, b - first);
    }
    for (; b < nb; b++)
        segment(wr, NULL, &blocks[b], 1);
    pkw_list_end(&wr->w);
    free(all);
    free(segs);
    free(blocks);
    return 0;
}

static void traces(struct writer *wr, size_t start, size_t end)
{
    struct torch_trace *t = wr->t;
    int ndev = 1;
    for (size_t i = start; i < end; i++)
        if (t->ev[i].device + 1 > ndev)
            ndev = t->ev[i].device + 1;
    pkw_str(&wr->w, "device_traces");
    pkw_list(&wr->w);
    for (int d = 0; d < ndev; d++) {
        pkw_list(&wr->w);
        for (size_t i = start; i < end; i++)
            if (t->ev[i].device == d)
                event(wr, &t->ev[i]);
        pkw_list_end(&wr->w);
    }
    pkw_list_end(&wr->w);
}

/* The marks in the window as PyTorch's annotations (record_function ranges). */
static void annotations(struct writer *wr, uint64_t from_ns)
{
    struct torch_trace *t = wr->t;
    pkw_str(&wr->w, "external_annotations");
    pkw_list(&wr->w);
    for (size_t i = 0; i < t->nmarks; i++) {
        if (t->marks[i].t_ns < from_ns)
            continue;
        pkw_dict(&wr->w);
        pkw_str(&wr->w, "stage");
        pkw_str(&wr->w, "START");
        pkw_key(&wr->w, K_NAME);
        pkw_str(&wr->w, t->marks[i].label);
        pkw_key(&wr->w, K_DEVICE);
        pkw_uint(&wr->w, (uint64_t)(t->marks[i].device < 0 ? 0 : t->marks[i].device));
        pkw_key(&wr->w, K_TIME);
        pkw_uint(&wr->w, time_us(wr, t->marks[i].t_ns));
        pkw_dict_end(&wr->w);
    }
    pkw_list_end(&wr->w);
}

int report_torch_snapshot(FILE *f, struct model *m, const struct report_options *o)
{
    struct torch_trace *t = o->torch_trace;
    if (!t || t->proc < 0 || t->oom || (t->from && t->from_at == SIZE_MAX))
        return -1;
    struct writer wr = {.m = m, .t = t, .proc = t->proc, .p = model_process(m, t->proc)};
    if (!wr.p || !(wr.fr = malloc(MAX_FRAMES * sizeof *wr.fr)))
        return -1;
    u64map_init(&wr.frames);
    t->entries = t->segments = t->blocks = 0;
    size_t end = window_end(t, wr.p), start = torch_trace_window_start(t);
    if (start > end)
        start = end;
    pkw_begin(&wr.w, f);
    pkw_dict(&wr.w);
    int rc = segments(&wr, end);
    traces(&wr, start, end);
    pkw_str(&wr.w, "allocator_settings");
    pkw_dict(&wr.w);
    pkw_str(&wr.w, "PYTORCH_CUDA_ALLOC_CONF");
    pkw_str(&wr.w, "");
    pkw_str(&wr.w, "expandable_segments");
    pkw_bool(&wr.w, 0);
    pkw_dict_end(&wr.w);
    annotations(&wr, start < t->n ? t->ev[start].t_ns : UINT64_MAX);
    pkw_dict_end(&wr.w);
    pkw_end(&wr.w);
    t->bytes = wr.w.bytes;
    u64map_free(&wr.frames);
    free(wr.fr);
    return rc != 0 || wr.w.overflow ? -1 : 0;
}
