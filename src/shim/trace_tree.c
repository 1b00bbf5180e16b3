/* Stack interning: a trace tree whose nodes are (parent, ip) edges with ids from 1. A
 * stack is sent once, node by node (FRAME records), and every event then carries only
 * its leaf id. The caller holds the stream lock.
 *
 * Three ways to a stack's leaf, cheapest first:
 *   - the thread's previous stack, root first with its ids: a stack that is all of it or
 *     a part of it from the root needs no lookup, and a new stack usually shares all but
 *     its innermost frames with it;
 *   - the table of whole stacks, by a hash of all the frames, checked against the nodes
 *     from the leaf up (the nodes of a stack made at once are next to each other);
 *   - frame by frame through the (parent, ip) index, creating the nodes it lacks.
 * Nodes live in arrays by id; the index and the whole-stack table hold ids only, so the
 * memory per node stays small, and big arrays ask for huge pages. */
#include "shim.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- arrays: mmap'd (huge pages where the kernel gives them on request) ---- */

static void *big_alloc(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    if (bytes >= (2u << 20))
        madvise(p, bytes, MADV_HUGEPAGE);
    return p;
}

static void big_free(void *p, size_t bytes)
{
    if (p)
        munmap(p, bytes);
}

/* Grows *p from old_bytes to new_bytes (contents kept, the rest zero). -1: no memory. */
static int big_grow(void **p, size_t old_bytes, size_t new_bytes)
{
    void *q = big_alloc(new_bytes);
    if (!q)
        return -1;
    if (*p)
        memcpy(q, *p, old_bytes);
    big_free(*p, old_bytes);
    *p = q;
    return 0;
}

struct whole {
    uint64_t hash;
    uint32_t leaf; /* 0: empty */
    uint32_t n;
};

struct culeak_tree {
    uint64_t *ip;        /* by node id (0 unused) */
    uint32_t *parent;
    uint32_t next_id, node_cap;
    uint32_t *index;     /* (parent, ip) -> id, open addressing; 0: empty */
    size_t mask;
    uint32_t used;
    struct whole *stacks; /* hash of a whole stack -> leaf */
    size_t smask, sused;
};

static size_t edge_hash(uint32_t parent, uint64_t ip)
{
    uint64_t h = (ip ^ ((uint64_t)parent << 40) ^ parent) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h ^ (h >> 29));
}

static uint64_t stack_hash(const uintptr_t *ips, int n)
{
    uint64_t h = (uint64_t)n * 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < n; i++)
        h = (h ^ ips[i]) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

struct culeak_tree *culeak_tree_new(void)
{
    struct culeak_tree *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->mask = 4095;
    t->smask = 1023;
    t->node_cap = 4096;
    t->index = big_alloc((t->mask + 1) * sizeof *t->index);
    t->stacks = big_alloc((t->smask + 1) * sizeof *t->stacks);
    t->ip = big_alloc(t->node_cap * sizeof *t->ip);
    t->parent = big_alloc(t->node_cap * sizeof *t->parent);
    if (!t->index || !t->stacks || !t->ip || !t->parent) {
        big_free(t->index, (t->mask + 1) * sizeof *t->index);
        big_free(t->stacks, (t->smask + 1) * sizeof *t->stacks);
        big_free(t->ip, t->node_cap * sizeof *t->ip);
        big_free(t->parent, t->node_cap * sizeof *t->parent);
        free(t);
        return NULL;
    }
    t->next_id = 1;
    return t;
}

static int grow_index(struct culeak_tree *t)
{
    size_t cap = (t->mask + 1) * 2;
    uint32_t *s = big_alloc(cap * sizeof *s);
    if (!s)
        return -1;
    for (uint32_t id = 1; id < t->next_id; id++) {
        if (id + 16 < t->next_id) /* the slots are random: ask for them ahead */
            __builtin_prefetch(&s[edge_hash(t->parent[id + 16], t->ip[id + 16]) & (cap - 1)], 1);
        size_t j = edge_hash(t->parent[id], t->ip[id]) & (cap - 1);
        while (s[j])
            j = (j + 1) & (cap - 1);
        s[j] = id;
    }
    big_free(t->index, (t->mask + 1) * sizeof *t->index);
    t->index = s;
    t->mask = cap - 1;
    return 0;
}

static int grow_stacks(struct culeak_tree *t)
{
    size_t cap = (t->smask + 1) * 2;
    struct whole *s = big_alloc(cap * sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i <= t->smask; i++) {
        if (!t->stacks[i].leaf)
            continue;
        size_t j = (size_t)t->stacks[i].hash & (cap - 1);
        while (s[j].leaf)
            j = (j + 1) & (cap - 1);
        s[j] = t->stacks[i];
    }
    big_free(t->stacks, (t->smask + 1) * sizeof *t->stacks);
    t->stacks = s;
    t->smask = cap - 1;
    return 0;
}

/* The thread's previous stack, root first, with the ids it was interned to. */
struct prefix {
    const struct culeak_tree *tree;
    int n;
    uintptr_t ip[CULEAK_MAX_DEPTH];
    uint32_t id[CULEAK_MAX_DEPTH];
};

static pthread_key_t prefix_key;
static pthread_once_t prefix_once = PTHREAD_ONCE_INIT;
static CULEAK_TLS struct prefix *prefix;

static void prefix_key_init(void) { pthread_key_create(&prefix_key, free); }

static struct prefix *thread_prefix(void)
{
    if (!prefix) {
        pthread_once(&prefix_once, prefix_key_init);
        prefix = calloc(1, sizeof *prefix);
        if (prefix)
            pthread_setspecific(prefix_key, prefix); /* freed when the thread ends */
    }
    return prefix;
}

/* The node (parent, ip), or 0. */
static uint32_t find(const struct culeak_tree *t, uint32_t parent, uint64_t ip)
{
    for (size_t j = edge_hash(parent, ip) & t->mask; t->index[j]; j = (j + 1) & t->mask) {
        uint32_t id = t->index[j];
        if (t->ip[id] == ip && t->parent[id] == parent)
            return id;
    }
    return 0;
}

/* A new node, not in the index yet (index_new puts it there); 0 when out of memory. */
static uint32_t make(struct culeak_tree *t, uint32_t parent, uint64_t ip,
                     void (*emit)(void *, uint32_t, uint32_t, uintptr_t), void *arg)
{
    if (t->next_id == t->node_cap) {
        uint32_t cap = t->node_cap * 2;
        if (cap < t->node_cap || big_grow((void **)&t->ip, t->node_cap * sizeof *t->ip, cap * sizeof *t->ip) < 0 ||
            big_grow((void **)&t->parent, t->node_cap * sizeof *t->parent, cap * sizeof *t->parent) < 0)
            return 0;
        t->node_cap = cap;
    }
    /* Keep the load under one half; a failed grow just fills the index further. */
    if ((t->used + 1) * 2 > t->mask + 1)
        grow_index(t);
    if (t->used == t->mask) /* full and cannot grow */
        return 0;
    uint32_t id = t->next_id++;
    t->ip[id] = ip;
    t->parent[id] = parent;
    t->used++;
    emit(arg, id, parent, (uintptr_t)ip);
    return id;
}

/* Puts the nodes first..last (made in a row) in the index. Their slots are random in a
 * large table: asked for all at once, their cache misses overlap. */
static void index_new(struct culeak_tree *t, uint32_t first, uint32_t last)
{
    for (uint32_t id = first; id <= last; id++)
        __builtin_prefetch(&t->index[edge_hash(t->parent[id], t->ip[id]) & t->mask], 1);
    for (uint32_t id = first; id <= last; id++) {
        size_t j = edge_hash(t->parent[id], t->ip[id]) & t->mask;
        while (t->index[j])
            j = (j + 1) & t->mask;
        t->index[j] = id;
    }
}

/* The leaf of ips[0..n) from the whole-stack table, its ids written root first into c
 * (when not NULL); 0 when not there. */
static uint32_t whole_lookup(const struct culeak_tree *t, const uintptr_t *ips, int n, uint64_t h, struct prefix *c)
{
    for (size_t j = (size_t)h & t->smask; t->stacks[j].leaf; j = (j + 1) & t->smask) {
        const struct whole *w = &t->stacks[j];
        if (w->hash != h || w->n != (uint32_t)n)
            continue;
        uint32_t id = w->leaf;
        int k = 0;
        for (; k < n && id && t->ip[id] == ips[k]; k++)
            id = t->parent[id];
        if (k < n || id != 0)
            continue;
        id = w->leaf;
        for (k = 0; c && k < n; k++, id = t->parent[id]) {
            c->ip[n - 1 - k] = ips[k];
            c->id[n - 1 - k] = id;
        }
        return w->leaf;
    }
    return 0;
}

static void whole_add(struct culeak_tree *t, uint64_t h, uint32_t leaf, int n)
{
    if ((t->sused + 1) * 2 > t->smask + 1 && grow_stacks(t) < 0)
        return; /* such stacks are found frame by frame */
    size_t j = (size_t)h & t->smask;
    while (t->stacks[j].leaf)
        j = (j + 1) & t->smask;
    t->stacks[j] = (struct whole){h, leaf, (uint32_t)n};
    t->sused++;
}

uint32_t culeak_tree_intern(struct culeak_tree *t, const uintptr_t *ips, int n,
                            void (*emit)(void *, uint32_t, uint32_t, uintptr_t), void *arg,
                            int *fresh)
{
    *fresh = 0;
    if (n <= 0) /* the empty stack (a bare free): the thread's previous stack stays cached */
        return 0;
    struct prefix *c = thread_prefix();
    int same = 0;
    if (c && c->tree == t) {
        while (same < n && same < c->n && c->ip[same] == ips[n - 1 - same])
            same++;
        if (same == n)
            return c->id[n - 1];
    }
    uint64_t h = stack_hash(ips, n);
    uint32_t leaf = whole_lookup(t, ips, n, h, c);
    if (leaf) {
        if (c) {
            c->tree = t;
            c->n = n;
        }
        return leaf;
    }
    if (c && c->tree != t)
        same = 0;
    uint32_t parent = same ? c->id[same - 1] : 0, first_new = 0;
    int complete = 1, made = 0;
    for (int k = same; k < n; k++) {
        uintptr_t ip = ips[n - 1 - k];
        /* below a node just made there is nothing to find */
        uint32_t id = made ? 0 : find(t, parent, ip);
        if (!id) {
            size_t before = t->mask;
            id = make(t, parent, ip, emit, arg);
            /* the nodes not indexed yet run in a row from first_new; a grown index
             * holds every node made before this one */
            if (id && (!first_new || t->mask != before))
                first_new = id;
            made = id != 0;
        }
        if (!id) { /* out of memory: stop at the deepest known node */
            n = k;
            complete = 0;
            break;
        }
        parent = id;
        if (c) {
            c->ip[k] = ip;
            c->id[k] = id;
        }
    }
    if (first_new)
        index_new(t, first_new, t->next_id - 1);
    *fresh = made;
    if (c) {
        c->tree = t;
        c->n = n;
    }
    if (complete)
        whole_add(t, h, parent, n);
    return parent;
}
