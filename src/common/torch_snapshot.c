/* A PyTorch memory snapshot as a culeak stream (torch_snapshot.h): the pickle read into
 * values, its state before the trace and its trace turned into records, handed on in
 * pieces of up to a MiB. */
#include "torch_snapshot.h"
#include "common/pickle_read.h"
#include "common/strpool.h"
#include "common/u64map.h"
#include "common/apis.h"
#include "common/wire.h"
#include "common/wire_encode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FLUSH (1u << 20)
#define REC_ROOM (16u << 10)
#define MAX_STR 4000                    /* a frame's file or name, cut there */
#define NATIVE_BASE 0x10000000ull       /* the pseudo module of PyTorch's allocator */
#define NATIVE_IP (NATIVE_BASE + 0x10)
#define NO_FRAME 0xffffffffu

struct conv {
    const char *name;
    culeak_bytes_fn fn;
    void *ctx;
    int stopped, failed;
    uint8_t *out;
    size_t len;
    uint8_t rec[REC_ROOM];
    struct culeak_enc enc;
    struct strpool frames;  /* "file\x1fname\x1fline" -> PYFRAME id - 1 */
    struct u64map nodes;    /* parent << 32 | PYFRAME id (NO_FRAME: the native frame) -> node */
    uint32_t last_node;
    struct u64map lists;    /* a frames list (its address, and whether a segment's) -> leaf */
    uint64_t work, budget;
    char *err;
    size_t errlen;
};

int culeak_is_pickle(const uint8_t *head, size_t n)
{
    return n >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5;
}

static int flush(struct conv *c)
{
    if (c->len && !c->stopped && c->fn(c->ctx, c->out, c->len) != 0)
        c->stopped = 1;
    c->len = 0;
    return c->stopped;
}

static int emit(struct conv *c, const uint8_t *rec, size_t n)
{
    if (c->stopped)
        return 1;
    memcpy(c->out + c->len, rec, n);
    c->len += n;
    return c->len >= FLUSH ? flush(c) : 0;
}

static int fail(struct conv *c, const char *what)
{
    if (!c->failed)
        snprintf(c->err, c->errlen, "%s: %s", c->name, what);
    c->failed = 1;
    return -1;
}

static const char *str_of(const struct pkv *v, size_t *n, const char *def)
{
    if (v && (v->type == PKV_STR || v->type == PKV_BYTES)) {
        *n = v->n < MAX_STR ? v->n : MAX_STR;
        return v->u.s;
    }
    *n = strlen(def);
    return def;
}

static uint64_t u_of(const struct pkv *v)
{
    int64_t i = pkv_int(v, 0);
    return i < 0 ? 0 : (uint64_t)i;
}

static int hello(struct conv *c, uint64_t t0_ns)
{
    uint8_t *p = c->rec + CULEAK_REC_HEADROOM;
    size_t k = 0, nlen = strlen(c->name) < 1024 ? strlen(c->name) : 1024;
    k += culeak_put_u(p + k, CULEAK_FORMAT_VERSION);
    k += culeak_put_u(p + k, 1); /* pid */
    k += culeak_put_u(p + k, 0);
    k += culeak_put_u(p + k, t0_ns);
    k += culeak_put_u(p + k, t0_ns);
    k += culeak_put_s(p + k, TORCH_SNAPSHOT_HOST, strlen(TORCH_SNAPSHOT_HOST));
    k += culeak_put_s(p + k, c->name, nlen);
    k += culeak_put_u(p + k, 1);
    k += culeak_put_s(p + k, c->name, nlen);
    k += culeak_put_u(p + k, 0); /* environment */
    k += culeak_put_u(p + k, 0); /* depth limit */
    k += culeak_put_u(p + k, CULEAK_HELLO_FILE);
    if (emit(c, (const uint8_t *)CULEAK_MAGIC, CULEAK_MAGIC_LEN))
        return 1;
    if (emit(c, c->rec, culeak_rec_finish(c->rec, CULEAK_REC_HELLO, k)))
        return 1;
    /* the pseudo module of the native frame that says "PyTorch's caching allocator" */
    static const char path[] = "[torch snapshot]/libc10_cuda.so";
    k = 0;
    k += culeak_put_u(p + k, 1);
    k += culeak_put_u(p + k, 1);
    k += culeak_put_s(p + k, path, sizeof path - 1);
    k += culeak_put_u(p + k, NATIVE_BASE);
    k += culeak_put_u(p + k, 1);
    k += culeak_put_u(p + k, 0);
    k += culeak_put_u(p + k, 0x1000);
    return emit(c, c->rec, culeak_rec_finish(c->rec, CULEAK_REC_MODULES, k));
}

/* The trace-tree node (parent, frame), made and sent once. */
static uint32_t node(struct conv *c, uint32_t parent, uint32_t frame, uint64_t ip)
{
    uint64_t key = (uint64_t)parent << 32 | frame;
    uint32_t id = u64map_get(&c->nodes, key);
    if (id != UINT32_MAX)
        return id;
    if (c->last_node >= UINT32_MAX - 2 || u64map_put(&c->nodes, key, c->last_node + 1) != 0) {
        fail(c, "out of memory");
        return 0;
    }
    id = ++c->last_node;
    emit(c, c->rec, culeak_enc_node(&c->enc, c->rec, id, parent, ip));
    return id;
}

static int is_py(const struct pkv *f)
{
    size_t n;
    const char *file = str_of(pkv_get(f, "filename"), &n, "");
    return n >= 3 && memcmp(file + n - 3, ".py", 3) == 0;
}

/* A frame of a stack without Python frames worth naming: not the capture's own, the
 * caching allocator's or the interpreter's (the frames PyTorch's _memory_viz.py omits). */
static int worth_naming(const struct pkv *f)
{
    static const char *const names[] = {"unwind::unwind", "CapturedTraceback::gather", "gather_with_cpp",
                                        "CUDACachingAllocator", "_start", "__libc_start_main", "PyEval_",
                                        "PyObject_", "PyFunction_"};
    static const char *const files[] = {"core/boxing", "/Register", "/Redispatch", "pythonrun.c", "Modules/main.c",
                                        "Objects/call.c", "Objects/methodobject.c", "pycore_ceval.h", "ceval.c",
                                        "cpython/abstract.h"};
    size_t nn, fn;
    const char *name = str_of(pkv_get(f, "name"), &nn, ""), *file = str_of(pkv_get(f, "filename"), &fn, "");
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (memmem(name, nn, names[i], strlen(names[i])))
            return 0;
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (memmem(file, fn, files[i], strlen(files[i])))
            return 0;
    return 1;
}

/* The Python frame of a frame dict: its PYFRAME sent the first time. */
static uint32_t pyframe(struct conv *c, const struct pkv *f)
{
    size_t fn, nn;
    const char *file = str_of(pkv_get(f, "filename"), &fn, "??");
    if (!fn) /* PyTorch's frames without a file have "" */
        file = "??", fn = 2;
    const char *name = str_of(pkv_get(f, "name"), &nn, "??");
    uint64_t line = u_of(pkv_get(f, "line"));
    char key[2 * MAX_STR + 32];
    int k = snprintf(key, sizeof key, "%.*s\x1f%.*s\x1f%llu", (int)fn, file, (int)nn, name, (unsigned long long)line);
    uint32_t before = (uint32_t)c->frames.count, id = strpool_id(&c->frames, key, (size_t)k);
    if (id == UINT32_MAX) {
        fail(c, "out of memory");
        return 0;
    }
    if (c->frames.count != before)
        emit(c, c->rec, culeak_enc_pyframe(c->rec, id + 1, file, fn, name, nn, line, 0, 0));
    return id + 1;
}

/* The stack of a frames list (innermost first): its .py frames when it has any, else
 * those worth naming; a segment's gets the allocator's native frame inside them. */
static uint32_t stack_of(struct conv *c, const struct pkv *frames, int segment)
{
    uint64_t key = (uint64_t)(uintptr_t)frames << 1 | (uint64_t)segment;
    uint32_t leaf = u64map_get(&c->lists, key);
    if (leaf != UINT32_MAX)
        return leaf;
    struct pkv *const *it;
    size_t n = pkv_items(frames, &it), py = 0;
    c->work += n + 1;
    if (c->work > c->budget) {
        fail(c, "more frames than the file's size allows: not read");
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        py += is_py(it[i]);
    uint32_t parent = 0;
    for (size_t i = n; i-- > 0 && !c->failed;) {
        if (py ? !is_py(it[i]) : !worth_naming(it[i]))
            continue;
        uint32_t f = pyframe(c, it[i]);
        parent = node(c, parent, f, CULEAK_PYFRAME_TAG | f);
    }
    if (segment)
        parent = node(c, parent, NO_FRAME, NATIVE_IP);
    if (u64map_put(&c->lists, key, parent) != 0)
        fail(c, "out of memory");
    return parent;
}

static void event(struct conv *c, unsigned op, unsigned api, int device, uint64_t addr, uint64_t size,
                  uint64_t result, uint64_t t_ns, uint32_t leaf)
{
    unsigned kind = api == CULEAK_API_TORCH_BLOCK_ALLOC || api == CULEAK_API_TORCH_BLOCK_FREE ? CULEAK_KIND_BLOCK
                    : api == CULEAK_API_CU_MEM_MAP || api == CULEAK_API_CU_MEM_UNMAP ? CULEAK_KIND_VMM_MAPPED
                                                                                   : CULEAK_KIND_DEVICE;
    struct culeak_ev ev = {op, api, kind, device, 0, size, addr, 0, result};
    emit(c, c->rec, culeak_enc_event(&c->enc, c->rec, &ev, t_ns, 1, leaf));
}

/* One trace entry, in time order. */
struct entry {
    uint64_t t_ns;
    size_t order;
    int device;
    const struct pkv *e;
    const char *mark; /* a mark instead of an entry (malloc'd) */
};

static int by_time(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->t_ns != y->t_ns)
        return x->t_ns < y->t_ns ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static uint64_t t_of(const struct pkv *e, size_t order)
{
    int64_t us = pkv_int(pkv_get(e, "time_us"), -1);
    if (us < 0)
        return order * 1000;
    return (uint64_t)us < UINT64_MAX / 1000 ? (uint64_t)us * 1000 : UINT64_MAX;
}

enum act { A_OTHER, A_ALLOC, A_FREE, A_SEG_ALLOC, A_SEG_FREE, A_MAP, A_UNMAP, A_OOM };

static enum act act_of(const struct pkv *e)
{
    const struct pkv *a = pkv_get(e, "action");
    return pkv_is(a, "alloc") ? A_ALLOC : pkv_is(a, "free_completed") ? A_FREE
           : pkv_is(a, "segment_alloc") ? A_SEG_ALLOC : pkv_is(a, "segment_free") ? A_SEG_FREE
           : pkv_is(a, "segment_map") ? A_MAP : pkv_is(a, "segment_unmap") ? A_UNMAP
           : pkv_is(a, "oom") ? A_OOM : A_OTHER;
}

/* The entries of every device and the marks, in time order. */
static struct entry *entries(struct conv *c, const struct pkv *root, size_t *count)
{
    struct pkv *const *devs, *const *it;
    size_t nd = pkv_items(pkv_get(root, "device_traces"), &devs), n = 0, k = 0;
    for (size_t d = 0; d < nd; d++)
        n += pkv_items(devs[d], &it);
    struct pkv *const *ann;
    size_t na = pkv_items(pkv_get(root, "external_annotations"), &ann);
    c->work += n + na;
    if (c->work > c->budget) {
        fail(c, "more trace entries than the file's size allows: not read");
        return NULL;
    }
    struct entry *v = calloc(n + na + TORCH_SNAPSHOT_TIME_MARKS + 1, sizeof *v);
    if (!v) {
        fail(c, "out of memory");
        return NULL;
    }
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t d = 0; d < nd; d++) {
        size_t m = pkv_items(devs[d], &it);
        for (size_t i = 0; i < m; i++, k++) {
            v[k] = (struct entry){t_of(it[i], k), k, (int)(d < 127 ? d : 127), it[i], NULL};
            lo = v[k].t_ns < lo ? v[k].t_ns : lo;
            hi = v[k].t_ns > hi ? v[k].t_ns : hi;
        }
    }
    /* annotations: the START of each range, numbered per name */
    struct strpool names;
    strpool_init(&names);
    uint32_t *seen = calloc(na + 1, sizeof *seen);
    for (size_t i = 0; seen && i < na; i++) {
        size_t ln;
        const char *nm = str_of(pkv_get(ann[i], "name"), &ln, "annotation");
        if (!pkv_is(pkv_get(ann[i], "stage"), "START"))
            continue;
        uint32_t id = strpool_id(&names, nm, ln);
        char *label = id == UINT32_MAX ? NULL : malloc(ln + 16);
        if (!label)
            continue;
        snprintf(label, ln + 16, "%.*s %u", (int)ln, nm, ++seen[id]);
        v[k] = (struct entry){t_of(ann[i], k), k, 0, NULL, label};
        k++;
    }
    free(seen);
    strpool_free(&names);
    for (int i = 1; lo < hi && i <= TORCH_SNAPSHOT_TIME_MARKS; i++) { /* points in time to compare */
        uint64_t t = lo + (hi - lo) / TORCH_SNAPSHOT_TIME_MARKS * (uint64_t)i;
        char *label = malloc(48);
        if (!label)
            continue;
        snprintf(label, 48, "trace +%llu ms", (unsigned long long)((t - lo) / 1000000));
        v[k] = (struct entry){t, k, 0, NULL, label};
        k++;
    }
    qsort(v, k, sizeof *v, by_time);
    *count = k;
    return v;
}

static void mark(struct conv *c, const char *label, uint64_t t_ns)
{
    size_t n = strlen(label) < MAX_STR ? strlen(label) : MAX_STR;
    emit(c, c->rec, culeak_enc_mark(&c->enc, c->rec, t_ns, 1, label, n, 0, NULL));
}

/* What was live before the first entry: blocks and segments whose first entry frees them,
 * and those of the final state no entry names. */
static void before(struct conv *c, const struct pkv *root, const struct entry *v, size_t n, uint64_t t0)
{
    struct u64map first;
    u64map_init(&first); /* addr << 1 | segment -> 1 alloc first, 2 free first */
    for (size_t i = 0; i < n; i++) {
        if (!v[i].e)
            continue;
        enum act a = act_of(v[i].e);
        if (a == A_OTHER || a == A_OOM)
            continue;
        int seg = a != A_ALLOC && a != A_FREE;
        uint64_t key = u_of(pkv_get(v[i].e, "addr")) << 1 | (uint64_t)seg;
        if (u64map_get(&first, key) != UINT32_MAX)
            continue;
        int freed = a == A_FREE || a == A_SEG_FREE || a == A_UNMAP;
        u64map_put(&first, key, freed ? 2 : 1);
        if (freed)
            event(c, CULEAK_OP_ALLOC,
                  a == A_FREE    ? CULEAK_API_TORCH_BLOCK_ALLOC
                  : a == A_UNMAP ? CULEAK_API_CU_MEM_MAP
                                 : CULEAK_API_CUDA_MALLOC,
                  v[i].device, u_of(pkv_get(v[i].e, "addr")), u_of(pkv_get(v[i].e, "size")), 0, t0,
                  stack_of(c, pkv_get(v[i].e, "frames"), a != A_FREE));
    }
    struct pkv *const *segs, *const *blocks;
    const struct pkv *s = root->type == PKV_LIST ? root : pkv_get(root, "segments");
    size_t ns = pkv_items(s, &segs);
    for (size_t i = 0; i < ns && !c->failed; i++) {
        int dev = (int)pkv_int(pkv_get(segs[i], "device"), 0);
        uint64_t addr = u_of(pkv_get(segs[i], "address"));
        int expandable = pkv_int(pkv_get(segs[i], "is_expandable"), 0) != 0;
        if (u64map_get(&first, addr << 1 | 1) == UINT32_MAX)
            event(c, CULEAK_OP_ALLOC, expandable ? CULEAK_API_CU_MEM_MAP : CULEAK_API_CUDA_MALLOC, dev, addr,
                  u_of(pkv_get(segs[i], "total_size")), 0, t0, stack_of(c, pkv_get(segs[i], "frames"), 1));
        size_t nb = pkv_items(pkv_get(segs[i], "blocks"), &blocks);
        c->work += nb;
        if (c->work > c->budget) {
            fail(c, "more blocks than the file's size allows: not read");
            break;
        }
        for (size_t b = 0; b < nb && !c->failed; b++) {
            const struct pkv *st = pkv_get(blocks[b], "state");
            uint64_t baddr = u_of(pkv_get(blocks[b], "address"));
            if (pkv_is(st, "inactive") || u64map_get(&first, baddr << 1) != UINT32_MAX)
                continue;
            /* the size asked for, as the trace's alloc entries have it (the block's is rounded) */
            const struct pkv *req = pkv_get(blocks[b], "requested_size");
            event(c, CULEAK_OP_ALLOC, CULEAK_API_TORCH_BLOCK_ALLOC, dev, baddr,
                  u_of(req && pkv_int(req, 0) > 0 ? req : pkv_get(blocks[b], "size")), 0, t0,
                  stack_of(c, pkv_get(blocks[b], "frames"), 0));
        }
    }
    u64map_free(&first);
}

static void trace(struct conv *c, const struct entry *v, size_t n)
{
    for (size_t i = 0; i < n && !c->failed && !c->stopped; i++) {
        if (v[i].mark) {
            mark(c, v[i].mark, v[i].t_ns);
            continue;
        }
        const struct pkv *e = v[i].e;
        enum act a = act_of(e);
        uint64_t addr = u_of(pkv_get(e, "addr")), size = u_of(pkv_get(e, "size"));
        const struct pkv *fr = pkv_get(e, "frames");
        switch (a) {
        case A_ALLOC:
            event(c, CULEAK_OP_ALLOC, CULEAK_API_TORCH_BLOCK_ALLOC, v[i].device, addr, size, 0, v[i].t_ns,
                  stack_of(c, fr, 0));
            break;
        case A_FREE:
            event(c, CULEAK_OP_FREE, CULEAK_API_TORCH_BLOCK_FREE, v[i].device, addr, size, 0, v[i].t_ns,
                  stack_of(c, fr, 0));
            break;
        case A_SEG_ALLOC:
        case A_MAP:
            event(c, CULEAK_OP_ALLOC, a == A_MAP ? CULEAK_API_CU_MEM_MAP : CULEAK_API_CUDA_MALLOC, v[i].device, addr,
                  size, 0, v[i].t_ns, stack_of(c, fr, 1));
            break;
        case A_SEG_FREE:
        case A_UNMAP:
            event(c, CULEAK_OP_FREE, a == A_UNMAP ? CULEAK_API_CU_MEM_UNMAP : CULEAK_API_CUDA_FREE, v[i].device, addr,
                  size, 0, v[i].t_ns, stack_of(c, fr, 1));
            break;
        case A_OOM: /* cudaErrorMemoryAllocation */
            event(c, CULEAK_OP_ALLOC, CULEAK_API_CUDA_MALLOC, v[i].device, 0, size, 2, v[i].t_ns, stack_of(c, fr, 1));
            break;
        case A_OTHER:
            break;
        }
    }
}

int culeak_torch_snapshot_stream(const uint8_t *buf, size_t n, const char *name, culeak_bytes_fn fn, void *ctx,
                                 char *err, size_t errlen)
{
    struct pkdoc doc;
    char perr[256];
    if (pkr_load(&doc, buf, n, perr, sizeof perr) != 0) {
        snprintf(err, errlen, "%s: %s", name, perr);
        return -1;
    }
    const struct pkv *root = doc.root;
    if (!(root->type == PKV_LIST ||
          (root->type == PKV_DICT && (pkv_get(root, "segments") || pkv_get(root, "device_traces"))))) {
        snprintf(err, errlen, "%s: a pickle, but not a PyTorch memory snapshot (a dict of segments and device_traces)",
                 name);
        pkr_free(&doc);
        return -1;
    }
    struct conv *c = calloc(1, sizeof *c);
    if (c && !(c->out = malloc(FLUSH + REC_ROOM))) {
        free(c);
        c = NULL;
    }
    if (!c) {
        snprintf(err, errlen, "%s: out of memory", name);
        pkr_free(&doc);
        return -1;
    }
    *c = (struct conv){.name = name, .fn = fn, .ctx = ctx, .out = c->out, .err = err, .errlen = errlen,
                       .budget = 16 * (uint64_t)n + (1u << 20)};
    strpool_init(&c->frames);
    u64map_init(&c->nodes);
    u64map_init(&c->lists);
    size_t ne = 0;
    struct entry *v = root->type == PKV_DICT ? entries(c, root, &ne) : NULL;
    uint64_t t0 = 1000000000ull;
    for (size_t i = 0; i < ne; i++)
        if (v[i].e) {
            t0 = v[i].t_ns > 1000 ? v[i].t_ns - 1000 : 0;
            break;
        }
    if (!c->failed) {
        c->enc.t_last = t0;
        if (hello(c, t0) == 0) {
            before(c, root, v, ne, t0);
            trace(c, v, ne);
        }
        flush(c);
    }
    for (size_t i = 0; i < ne; i++)
        free((char *)v[i].mark);
    free(v);
    int rc = c->failed ? -1 : c->stopped ? 1 : 0;
    strpool_free(&c->frames);
    u64map_free(&c->nodes);
    u64map_free(&c->lists);
    free(c->out);
    free(c);
    pkr_free(&doc);
    return rc;
}
