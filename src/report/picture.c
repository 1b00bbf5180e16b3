/* Building a picture of a model (picture.h): moments as per-stack values, the stacks'
 * frame tree and their call sites. */
#include "model/model_internal.h"
#include "picture.h"
#include "stack_fold.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_STACKS 4000
#define MAX_FRAMES 512
#define OTHER_STACK UINT64_MAX
#define DEFAULT_STACK_MOMENTS 16

const char *picture_moment_kind_name(enum picture_moment_kind k)
{
    static const char *const names[] = {"mark", "tick", "oom", "peak", "end", "leaks"};
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

/* Growable arrays: the picture's own and the builder's. */
static int grow(void **items, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 64;
    while (nc < need)
        nc *= 2;
    void *ni = realloc(*items, nc * size);
    if (!ni)
        return -1;
    *items = ni;
    *cap = nc;
    return 0;
}

struct builder {
    struct model *m;
    struct picture *p;
    const struct picture_options *o;
    size_t moments_cap, values_cap, stacks_cap, nodes_cap, names_cap, sites_cap;
    struct u64map stack_index;   /* proc << 32 | stack -> picture stack */
    struct u64map node_index;    /* parent << 32 | name -> node */
    struct u64map site_index;    /* the model's site -> picture site */
    struct strpool names;
    uint64_t *stack_max;         /* per picture stack: most bytes in any moment */
    size_t stack_max_cap;
    uint32_t *slot;              /* per picture stack: its value in the moment being built + 1 */
    size_t slot_cap;
    uint32_t *site_slot;         /* the same per picture site */
    size_t site_slot_cap;
};

/* Blocks a pool handed out (tensors, culeak_alloc) lie inside memory the pool already
 * holds: they are drawn apart, never added to device memory. */
static int kind_is_pool(unsigned kind) { return kind == CULEAK_KIND_BLOCK || kind == CULEAK_KIND_USER; }

static uint32_t stack_of(struct builder *b, int proc, uint64_t stack, int pool)
{
    uint64_t key = (uint64_t)proc << 33 | (uint64_t)(pool != 0) << 32 | (stack & 0xffffffffu);
    uint32_t i = u64map_get(&b->stack_index, key);
    if (i != UINT32_MAX)
        return i;
    struct picture *p = b->p;
    if (grow((void **)&p->stacks, &b->stacks_cap, p->nstacks + 1, sizeof *p->stacks) ||
        grow((void **)&b->stack_max, &b->stack_max_cap, p->nstacks + 1, sizeof *b->stack_max) ||
        grow((void **)&b->slot, &b->slot_cap, p->nstacks + 1, sizeof *b->slot) ||
        u64map_put(&b->stack_index, key, (uint32_t)p->nstacks))
        return UINT32_MAX;
    p->stacks[p->nstacks] = (struct picture_stack){proc, stack, 0, UINT32_MAX, pool != 0};
    b->stack_max[p->nstacks] = 0;
    b->slot[p->nstacks] = 0;
    return (uint32_t)p->nstacks++;
}

static uint32_t site_of(struct builder *b, uint32_t site, int pool)
{
    uint64_t key = (uint64_t)site << 1 | (pool != 0);
    uint32_t i = u64map_get(&b->site_index, key);
    if (i != UINT32_MAX)
        return i;
    struct picture *p = b->p;
    if (grow((void **)&p->sites, &b->sites_cap, p->nsites + 1, sizeof *p->sites) ||
        grow((void **)&b->site_slot, &b->site_slot_cap, p->nsites + 1, sizeof *b->site_slot) ||
        u64map_put(&b->site_index, key, (uint32_t)p->nsites))
        return UINT32_MAX;
    p->sites[p->nsites] = (struct picture_site){.id = site, .pool = pool != 0};
    b->site_slot[p->nsites] = 0;
    return (uint32_t)p->nsites++;
}

/* The moment's stack values come first, then its site values: both are built unit by
 * unit, so the site values go to a second pass over the same units. */
static struct picture_moment *moment_begin(struct builder *b, int proc, enum picture_moment_kind kind,
                                           const char *label, uint64_t t_ns, int has_stacks)
{
    struct picture *p = b->p;
    if (grow((void **)&p->moments, &b->moments_cap, p->nmoments + 1, sizeof *p->moments))
        return NULL;
    struct picture_moment *mo = &p->moments[p->nmoments++];
    *mo = (struct picture_moment){.proc = proc, .kind = kind, .label = label, .t_ns = t_ns,
                                  .has_stacks = has_stacks, .first = p->nvalues};
    return mo;
}

/* Adds bytes to the value of `key` in values[first..): slot[key] - 1 is its value when
 * it has one in this range already. */
static int value_add(struct builder *b, uint32_t *slot, size_t first, size_t *n, uint32_t key, uint64_t bytes,
                     uint64_t count)
{
    struct picture *p = b->p;
    if (slot[key] && slot[key] - 1 >= first) {
        p->values[slot[key] - 1].bytes += bytes;
        p->values[slot[key] - 1].count += count;
        return 0;
    }
    if (grow((void **)&p->values, &b->values_cap, p->nvalues + 1, sizeof *p->values))
        return -1;
    p->values[p->nvalues] = (struct picture_value){key, bytes, count};
    slot[key] = (uint32_t)++p->nvalues;
    (*n)++;
    return 0;
}

static int moment_add_stack(struct builder *b, struct picture_moment *mo, const struct unit *u, uint64_t bytes,
                            uint64_t count)
{
    if (!bytes && !count)
        return 0;
    uint32_t s = stack_of(b, mo->proc, u->stack, kind_is_pool(u->kind));
    if (s == UINT32_MAX)
        return -1;
    if (bytes > b->stack_max[s])
        b->stack_max[s] = bytes; /* a lower bound when a stack has several kinds: enough to rank */
    return value_add(b, b->slot, mo->first, &mo->n, s, bytes, count);
}

/* A unit's site; a tracked pool's segments are the pool's row, not a second site of the
 * blocks' growth (pools.c). */
static uint32_t unit_site(struct builder *b, int proc, struct unit *u)
{
    enum model_cache pool = unit_pool(b->m, proc, u);
    return pool ? pool_row_id(b->m, pool, MODEL_GROUP_SITE) : u->site;
}

static int moment_add_site(struct builder *b, struct picture_moment *mo, struct unit *u, uint64_t bytes,
                           uint64_t count)
{
    if (!bytes && !count)
        return 0;
    int pool = kind_is_pool(u->kind);
    uint32_t site = unit_site(b, mo->proc, u);
    uint32_t s = site_of(b, site, pool);
    if (s == UINT32_MAX)
        return -1;
    if (pool)
        mo->pool_bytes += bytes;
    else
        mo->bytes += bytes;
    if (site != u->site)
        mo->reserved_bytes += bytes;
    return value_add(b, b->site_slot, mo->site_first, &mo->site_n, s, bytes, count);
}

static int add_state(struct builder *b, struct process *pr, enum picture_moment_kind kind, const char *label,
                     uint64_t t_ns, const struct state *st, int has_stacks)
{
    struct picture_moment *mo = moment_begin(b, pr->pub.index, kind, label, t_ns, has_stacks);
    if (!mo)
        return -1;
    for (int pass = has_stacks ? 0 : 1; pass < 2; pass++) {
        if (pass == 1)
            mo->site_first = b->p->nvalues;
        for (size_t i = 0; i < st->n; i++) {
            const struct state_item *it = &st->items[i];
            if (it->unit >= pr->nunits || !culeak_kind_is_memory(pr->units[it->unit].kind))
                continue;
            struct unit *u = &pr->units[it->unit];
            if (pass ? moment_add_site(b, mo, u, it->bytes, it->count) : moment_add_stack(b, mo, u, it->bytes, it->count))
                return -1;
        }
    }
    return 0;
}

static int add_source(struct builder *b, struct process *pr, enum picture_moment_kind kind, uint64_t t_ns,
                      enum model_source src)
{
    struct picture_moment *mo = moment_begin(b, pr->pub.index, kind, NULL, t_ns, 1);
    if (!mo)
        return -1;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            mo->site_first = b->p->nvalues;
        for (size_t i = 0; i < pr->nunits; i++) {
            struct unit *u = &pr->units[i]; /* unit_cache classifies it once */
            if (!culeak_kind_is_memory(u->kind))
                continue;
            /* a framework pool's blocks go with the pool, what a caching allocator holds at
             * the end is its cache, and what was live before an attach or when a recording
             * ends before its process did is not judged (reports list them apart): none is a
             * leak; a program's own pool's blocks (culeak_alloc) are, as the text says */
            if (src == MODEL_SOURCE_LEAKS && (u->kind == CULEAK_KIND_BLOCK || unit_cache(b->m, pr->pub.index, u) ||
                                              unit_before_attach_unjudged(b->m, u) ||
                                              model_process_unended(&pr->pub)))
                continue;
            uint64_t bytes, count;
            unit_value(pr, u, i, src, NULL, &bytes, &count);
            if (src == MODEL_SOURCE_LEAKS && b->o && b->o->supp && (bytes || count) &&
                !unit_suppression_kept(b->m, pr, u, b->o->supp, MODEL_SUPP_LEFT_OUT)) {
                if (pass == 0 && unit_suppression_kept(b->m, pr, u, b->o->supp, MODEL_SUPP_ONLY_DEFAULT))
                    mo->held_bytes += bytes;
                continue;
            }
            if (pass ? moment_add_site(b, mo, u, bytes, count) : moment_add_stack(b, mo, u, bytes, count))
                return -1;
        }
    }
    return 0;
}

static int moment_time_cmp(const void *a, const void *b)
{
    const struct picture_moment *x = a, *y = b;
    if (x->t_ns != y->t_ns)
        return x->t_ns < y->t_ns ? -1 : 1;
    return x->kind < y->kind ? -1 : x->kind > y->kind;
}

/* Kept moment i of n gets its stacks when it is one of an even spread of `want`, the
 * newest included, or a mark the options name. */
static int keeps_stacks(const struct builder *b, size_t i, size_t n, const struct moment *mo)
{
    size_t want = b->o && b->o->stack_moments ? b->o->stack_moments : DEFAULT_STACK_MOMENTS;
    for (int k = 0; k < 2; k++)
        if (b->o && b->o->labels[k] && mo->label && !strcmp(b->o->labels[k], mo->label))
            return 1;
    if (n <= want)
        return 1;
    /* moment i is kept when the spread's bucket changes at it, counting from the newest */
    size_t from_end = n - 1 - i;
    return from_end == 0 || from_end * want / n != (from_end - 1) * want / n;
}

static int add_process(struct builder *b, struct process *pr)
{
    size_t first = b->p->nmoments;
    for (size_t i = 0; i < pr->nmoments; i++) {
        const struct moment *mo = &pr->moments[i];
        if (add_state(b, pr, mo->kind == MODEL_MOMENT_MARK ? PICTURE_MARK : PICTURE_TICK, mo->label, mo->st.t_ns,
                      &mo->st, keeps_stacks(b, i, pr->nmoments, mo)))
            return -1;
    }
    for (size_t i = 0; i < b->m->nfailures; i++) {
        const struct failure_rec *f = &b->m->failures[i];
        if (f->pub.proc == pr->pub.index && f->pub.has_state &&
            add_state(b, pr, PICTURE_OOM, NULL, f->pub.t_ns, &f->state, 1))
            return -1;
    }
    uint64_t end = pr->pub.last_t_ns;
    const struct model_counter *c = &pr->counters[0][MODEL_KIND_DEVICE_MEMORY];
    if (add_source(b, pr, PICTURE_PEAK, c->peak_bytes ? c->peak_t_ns : end, MODEL_SOURCE_PEAK) ||
        add_source(b, pr, PICTURE_END, end, MODEL_SOURCE_NOW) ||
        add_source(b, pr, PICTURE_LEAKS, end, MODEL_SOURCE_LEAKS))
        return -1;
    /* values stay where they are: sorting moves only the moments that point at them */
    qsort(b->p->moments + first, b->p->nmoments - first, sizeof *b->p->moments, moment_time_cmp);
    return 0;
}

/* ---------------------------------------------------------------- fewer stacks */

static const uint64_t *sort_max;
static int by_max_desc(const void *a, const void *b)
{
    uint64_t x = sort_max[*(const uint32_t *)a], y = sort_max[*(const uint32_t *)b];
    return x > y ? -1 : x < y;
}

/* Keeps the max stacks that held the most bytes; the others of a process become its
 * OTHER_STACK (one for its memory, one for its pool blocks), so a picture stays a few MB
 * whatever the number of stacks. */
static int merge_small_stacks(struct builder *b, size_t max)
{
    struct picture *p = b->p;
    if (p->nstacks <= max)
        return 0;
    uint32_t *order = malloc(p->nstacks * sizeof *order), *remap = malloc(p->nstacks * sizeof *remap);
    struct picture_stack *old = p->stacks;
    if (!order || !remap) {
        free(order);
        free(remap);
        return -1;
    }
    for (size_t i = 0; i < p->nstacks; i++)
        order[i] = (uint32_t)i;
    sort_max = b->stack_max;
    qsort(order, p->nstacks, sizeof *order, by_max_desc);
    size_t n = p->nstacks;
    p->stacks = NULL;
    p->nstacks = 0;
    b->stacks_cap = 0;
    u64map_free(&b->stack_index);
    u64map_init(&b->stack_index);
    int rc = 0;
    for (size_t k = 0; k < n && !rc; k++) {
        const struct picture_stack *s = &old[order[k]];
        uint32_t ni = stack_of(b, s->proc, k < max ? s->stack : OTHER_STACK, s->pool);
        rc = ni == UINT32_MAX ? -1 : 0;
        remap[order[k]] = ni;
    }
    /* a moment's values are of one process: its merged stacks add up into one value */
    for (size_t i = 0; i < p->nmoments && !rc; i++) {
        struct picture_moment *mo = &p->moments[i];
        size_t w = mo->first, other[2] = {SIZE_MAX, SIZE_MAX};
        for (size_t r = mo->first; r < mo->first + mo->n; r++) {
            struct picture_value v = p->values[r];
            v.key = remap[v.key];
            if (p->stacks[v.key].stack == OTHER_STACK) {
                size_t *o = &other[p->stacks[v.key].pool];
                if (*o != SIZE_MAX) {
                    p->values[*o].bytes += v.bytes;
                    p->values[*o].count += v.count;
                    continue;
                }
                *o = w;
            }
            p->values[w++] = v;
        }
        mo->n = w - mo->first;
    }
    free(old);
    free(order);
    free(remap);
    return rc;
}

/* ---------------------------------------------------------------- frame tree */

static uint32_t node_of(struct builder *b, uint32_t parent, const char *name, int folded, int site)
{
    uint32_t id = strpool_id(&b->names, name, strlen(name));
    if (id == UINT32_MAX)
        return UINT32_MAX;
    uint64_t key = (uint64_t)parent << 32 | id;
    uint32_t n = u64map_get(&b->node_index, key);
    struct picture *p = b->p;
    if (n == UINT32_MAX) {
        if (grow((void **)&p->nodes, &b->nodes_cap, p->nnodes + 1, sizeof *p->nodes) ||
            u64map_put(&b->node_index, key, (uint32_t)p->nnodes))
            return UINT32_MAX;
        n = (uint32_t)p->nnodes++;
        p->nodes[n] = (struct picture_node){parent, id, folded, 0};
    }
    p->nodes[n].site |= site;
    return n;
}

static uint32_t process_root(struct builder *b, int proc)
{
    if (b->m->nprocs < 2)
        return 0;
    const struct model_process *mp = model_process(b->m, proc);
    char name[256];
    if (mp->rank >= 0)
        snprintf(name, sizeof name, "process %llu (rank %d)", (unsigned long long)mp->pid, mp->rank);
    else
        snprintf(name, sizeof name, "process %llu", (unsigned long long)mp->pid);
    return node_of(b, 0, name, 0, 0);
}

static int path_is_culeak_h(const char *path)
{
    const char *slash = strrchr(path, '/');
    return !strcmp(slash ? slash + 1 : path, "culeak.h");
}

static int place_stack(struct builder *b, struct picture_stack *s, struct model_frame *frames,
                       struct stack_line *lines)
{
    uint32_t node = process_root(b, s->proc);
    if (node == UINT32_MAX)
        return -1;
    if (s->stack == OTHER_STACK) {
        s->leaf = node_of(b, node, "(smaller stacks, merged)", 0, 0);
        return s->leaf == UINT32_MAX ? -1 : 0;
    }
    size_t n = model_stack_frames(b->m, s->proc, s->stack, frames, MAX_FRAMES);
    if (n > MAX_FRAMES)
        n = MAX_FRAMES;
    if (n == 0) {
        s->leaf = node_of(b, node, "[no stack]", 0, 1);
        return s->leaf == UINT32_MAX ? -1 : 0;
    }
    /* culeak.h's inline wrappers (culeak_alloc, culeak_free) are how the program reports
     * a block, not where: the graph ends at their caller */
    size_t inner = 0;
    while (inner + 1 < n && frames[inner].file && path_is_culeak_h(frames[inner].file))
        inner++;
    frames += inner;
    n -= inner;
    size_t nl = stack_lines(frames, n, 1, lines);
    char text[1200];
    for (size_t k = nl; k-- > 0 && node != UINT32_MAX;) { /* outermost first */
        const struct stack_line *l = &lines[k];
        if (l->count)
            stack_fold_text(frames + l->frame, l->count, text, sizeof text);
        else
            model_frame_format(&frames[l->frame], text, sizeof text);
        node = node_of(b, node, text, l->count > 0, l->site);
    }
    s->leaf = node;
    return node == UINT32_MAX ? -1 : 0;
}

/* ---------------------------------------------------------------- sites */

static int describe_sites(struct builder *b)
{
    struct picture *p = b->p;
    for (size_t i = 0; i < p->nsites; i++) {
        struct picture_site *ps = &p->sites[i];
        struct model_row r;
        memset(&r, 0, sizeof r);
        row_describe(b->m, MODEL_GROUP_SITE, ps->id, -1, NULL, &r, 0); /* a site's row id is its index */
        *ps = (struct picture_site){ps->id, r.text, r.function, r.file, r.module, r.line, ps->pool, 0};
    }
    for (size_t i = 0; i < p->nstacks; i++) {
        struct picture_stack *s = &p->stacks[i];
        if (s->stack == OTHER_STACK) {
            uint32_t si = site_of(b, UINT32_MAX - (uint32_t)s->proc, s->pool);
            if (si == UINT32_MAX)
                return -1;
            p->sites[si] = (struct picture_site){UINT32_MAX, "(smaller stacks, merged)", NULL, NULL, NULL, 0, s->pool, 0};
            s->site = si;
            continue;
        }
        const struct process *pr = model_proc(b->m, s->proc);
        uint32_t u = UINT32_MAX; /* the stack's units share its site: any of its layer names it */
        for (unsigned k = 0; u == UINT32_MAX && k < CULEAK_KIND_COUNT; k++)
            if (kind_is_pool(k) == s->pool)
                u = u64map_get(&pr->unit_index, s->stack << 5 | k);
        s->site = u == UINT32_MAX ? UINT32_MAX : site_of(b, unit_site(b, s->proc, &pr->units[u]), s->pool);
        if (s->site == UINT32_MAX)
            return -1;
        struct picture_site *ps = &p->sites[s->site];
        const char *op;
        int pool_row = u != UINT32_MAX && unit_pool(b->m, s->proc, &pr->units[u]); /* the pool's own line */
        if (!pool_row && !ps->autograd_backward && ps->text && model_stack_backward(b->m, s->proc, s->stack, &op)) {
            char text[2048]; /* as the site's row in a report: its memory was made for backward() */
            int n = snprintf(text, sizeof text, "%s (autograd backward)", ps->text);
            const char *t = strpool_intern(&b->m->strings, text, (size_t)(n < (int)sizeof text ? n : (int)sizeof text - 1));
            ps->text = t ? t : ps->text;
            ps->autograd_backward = 1;
        }
    }
    return 0;
}

int picture_build(struct model *m, const struct picture_options *o, struct picture *p)
{
    memset(p, 0, sizeof *p);
    struct builder b = {.m = m, .p = p, .o = o};
    u64map_init(&b.stack_index);
    u64map_init(&b.node_index);
    u64map_init(&b.site_index);
    strpool_init(&b.names);
    size_t max = o && o->max_stacks ? o->max_stacks : DEFAULT_MAX_STACKS;
    struct model_frame *frames = malloc(MAX_FRAMES * sizeof *frames);
    struct stack_line *lines = malloc(MAX_FRAMES * sizeof *lines);
    int rc = frames && lines ? 0 : -1;
    if (!rc && node_of(&b, 0, "all", 0, 0) != 0) /* node 0: the root */
        rc = -1;
    for (int i = 0; i < m->nprocs && !rc; i++)
        rc = add_process(&b, m->procs[i]);
    if (!rc)
        rc = merge_small_stacks(&b, max);
    for (size_t i = 0; i < p->nstacks && !rc; i++)
        rc = place_stack(&b, &p->stacks[i], frames, lines);
    if (!rc)
        rc = describe_sites(&b);
    if (!rc) { /* the names outlive the builder's pool */
        p->nnames = b.names.count;
        p->names = malloc((p->nnames ? p->nnames : 1) * sizeof *p->names);
        for (size_t i = 0; p->names && i < p->nnames; i++)
            p->names[i] = strdup(strpool_get(&b.names, (uint32_t)i));
        rc = p->names ? 0 : -1;
        for (size_t i = 0; !rc && i < p->nnames; i++)
            rc = p->names[i] ? 0 : -1;
    }
    free(frames);
    free(lines);
    free(b.stack_max);
    free(b.slot);
    free(b.site_slot);
    u64map_free(&b.stack_index);
    u64map_free(&b.node_index);
    u64map_free(&b.site_index);
    strpool_free(&b.names);
    if (rc)
        picture_free(p);
    return rc;
}

void picture_free(struct picture *p)
{
    for (size_t i = 0; p->names && i < p->nnames; i++)
        free((void *)p->names[i]);
    free(p->names);
    free(p->moments);
    free(p->values);
    free(p->stacks);
    free(p->nodes);
    free(p->sites);
    memset(p, 0, sizeof *p);
}
