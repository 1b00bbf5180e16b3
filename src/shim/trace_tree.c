/* Stack interning: a trace tree whose nodes are (parent, ip) edges with ids from 1. A
 * stack is sent once, node by node (FRAME records), and every event then carries only
 * its leaf id. The caller holds the stream lock.
 *
 * Three ways to a stack's leaf, cheapest first:
 *   - the thread's previous stack, root first with its ids: a stack that is all of it or
 *     a part of it from the root needs no lookup, and a new stack usually shares all but
 *     its innermost frames with it;
 *   - the table of whole stacks, by two hashes of all the frames (struct whole);
 *   - frame by frame through the (parent, ip) index, creating the nodes it lacks.
 * Nodes live in arrays by id; the index and the whole-stack table hold ids only, so the
 * memory per node stays small. */
#include "shim.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- arrays: mmap'd ----
 * The index is read and written at random: from 2 MB on it asks for huge pages
 * (MADV_HUGEPAGE), where a miss in the TLB costs a walk of the page tables at each
 * lookup, two-dimensional in a virtual machine (100k distinct stacks: about 15% less
 * per event with them). Its pages are faulted in at once when it grows (populate), so a
 * compaction for huge pages, where the kernel does one, happens there, once per growth.
 * So does the table of whole stacks. The node arrays, written in order, keep small
 * pages. */

#define HUGE_PAGE ((size_t)2 << 20)

static void *big_alloc(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* bytes (a multiple of the page size) at an address huge pages can back: aligned to
 * HUGE_PAGE, which mmap does not promise. */
static void *huge_alloc(size_t bytes)
{
    uint8_t *p = big_alloc(bytes + HUGE_PAGE);
    if (!p)
        return NULL;
    size_t head = (HUGE_PAGE - (uintptr_t)p % HUGE_PAGE) % HUGE_PAGE;
    if (head)
        munmap(p, head);
    munmap(p + head + bytes, HUGE_PAGE - head);
    madvise(p + head, bytes, MADV_HUGEPAGE);
    return p + head;
}

static void big_free(void *p, size_t bytes)
{
    if (p)
        munmap(p, bytes);
}

/* Faults in the pages of p[from, to) at once (MADV_POPULATE_WRITE, Linux 5.14): one
 * system call instead of a page fault per page, the larger part of the cost of fresh
 * memory, and several times more in a virtual machine. Memory about to be written all
 * over (a grown index, whose slots are spread by hash) or in order (the node arrays, a
 * step ahead of the next id). Where the kernel cannot, the pages fault in as used. */
static void populate(void *p, size_t from, size_t to)
{
    const size_t page = 4096;
    from &= ~(page - 1);
    if (to > from)
        madvise((char *)p + from, to - from, MADV_POPULATE_WRITE);
}

/* Grows *p from old_bytes to new_bytes (contents kept, the rest zero). -1: no memory.
 * The pages move rather than be copied: a copy would touch every byte twice more. */
static int big_grow(void **p, size_t old_bytes, size_t new_bytes)
{
    if (*p) {
        void *q = mremap(*p, old_bytes, new_bytes, MREMAP_MAYMOVE);
        if (q == MAP_FAILED)
            return -1;
        *p = q;
        return 0;
    }
    void *q = big_alloc(new_bytes);
    if (!q)
        return -1;
    *p = q;
    return 0;
}

/* A whole stack, known by two independent 64-bit hashes of its frames and its depth: a
 * lookup compares these and reads no node (walking a stack's nodes from its leaf is a
 * chain of cache misses, one per node made with another stack). Two stacks of one
 * depth that share both hashes are the same stack, but for a chance of about n^2 / 2^129
 * among n stacks. */
struct whole {
    uint64_t hash, hash2;
    uint32_t leaf; /* 0: empty */
    uint32_t n;
};

/* An index slot: the node id, whose parent is `parent` (its ip is in the node arrays).
 * Its place comes from the hash of the node's whole path from the root, which a stack
 * gives for all its frames at once: the slots of a stack's frames are asked for together
 * and their cache misses overlap. 8 bytes, the index at most 3/4 full: with 100k
 * distinct stacks the index is most of the tree's memory, and fresh memory is what
 * costs (every page is cleared when first touched). */
struct slot {
    uint32_t parent;
    uint32_t id; /* 0: empty */
};

struct culeak_tree {
    uint64_t *ip;        /* by node id (0 unused) */
    uint32_t *parent;
    uint32_t *place;     /* the low half of the node's path hash: its place in any index
                          * (at most 2^32 slots), kept so that growing the index reads
                          * the nodes in order and hashes nothing again */
    uint32_t next_id, node_cap;
    uint32_t populated;  /* the node arrays' pages are in up to this id */
    struct slot *index;  /* open addressing by path hash */
    size_t mask;
    uint32_t used;
    struct whole *stacks; /* path hash of a whole stack -> leaf */
    size_t smask, sused;
};

#define POPULATE_STEP 16384u /* nodes: 128 KB of ips */
#define ROOT_HASH UINT64_C(0x6a09e667f3bcc909)

static uint64_t path_hash(uint64_t parent_hash, uint64_t ip)
{
    uint64_t h = (parent_hash ^ ip) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 32);
}

/* The whole stack's second hash: other constants, other shifts (its chain runs beside
 * path_hash's). */
#define SECOND_SEED UINT64_C(0xbb67ae8584caa73b)
static uint64_t second_hash(uint64_t h, uint64_t ip)
{
    h = (h + ip) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

static void tree_free(struct culeak_tree *t)
{
    big_free(t->index, (t->mask + 1) * sizeof *t->index);
    big_free(t->stacks, (t->smask + 1) * sizeof *t->stacks);
    big_free(t->ip, t->node_cap * sizeof *t->ip);
    big_free(t->parent, t->node_cap * sizeof *t->parent);
    big_free(t->place, t->node_cap * sizeof *t->place);
    free(t);
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
    t->place = big_alloc(t->node_cap * sizeof *t->place);
    if (!t->index || !t->stacks || !t->ip || !t->parent || !t->place) {
        tree_free(t);
        return NULL;
    }
    t->next_id = 1;
    return t;
}

static int grow_index(struct culeak_tree *t)
{
    size_t cap = (t->mask + 1) * 2;
    if (cap - 1 > UINT32_MAX) /* places are 32 bits */
        return -1;
    size_t bytes = cap * sizeof(struct slot);
    struct slot *s = bytes >= HUGE_PAGE ? huge_alloc(bytes) : big_alloc(bytes);
    if (!s)
        return -1;
    populate(s, 0, bytes);
    const uint32_t *h = t->place;
    for (uint32_t id = 1; id < t->next_id; id++) {
        if (id + 16 < t->next_id) /* the slots are random: ask for them ahead */
            __builtin_prefetch(&s[h[id + 16] & (cap - 1)], 1);
        size_t j = h[id] & (cap - 1);
        while (s[j].id)
            j = (j + 1) & (cap - 1);
        s[j] = (struct slot){t->parent[id], id};
    }
    big_free(t->index, (t->mask + 1) * sizeof *t->index);
    t->index = s;
    t->mask = cap - 1;
    return 0;
}

static int grow_stacks(struct culeak_tree *t)
{
    size_t cap = (t->smask + 1) * 2, bytes = cap * sizeof(struct whole);
    struct whole *s = bytes >= HUGE_PAGE ? huge_alloc(bytes) : big_alloc(bytes);
    if (!s)
        return -1;
    populate(s, 0, bytes);
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

/* Room for `more` nodes without growing anything on the way; -1: no memory (then the
 * nodes are made as far as memory goes). */
static int reserve(struct culeak_tree *t, uint32_t more)
{
    while (t->next_id + more > t->node_cap) {
        uint32_t cap = t->node_cap * 2;
        if (cap < t->node_cap || big_grow((void **)&t->ip, t->node_cap * sizeof *t->ip, cap * sizeof *t->ip) < 0 ||
            big_grow((void **)&t->parent, t->node_cap * sizeof *t->parent, cap * sizeof *t->parent) < 0 ||
            big_grow((void **)&t->place, t->node_cap * sizeof *t->place, cap * sizeof *t->place) < 0)
            return -1;
        t->node_cap = cap;
    }
    if (t->next_id + more > t->populated) { /* the node arrays, POPULATE_STEP nodes ahead */
        uint32_t to = t->next_id + more + POPULATE_STEP;
        to = to < t->node_cap ? to : t->node_cap;
        populate(t->ip, t->populated * sizeof *t->ip, to * sizeof *t->ip);
        populate(t->parent, t->populated * sizeof *t->parent, to * sizeof *t->parent);
        populate(t->place, t->populated * sizeof *t->place, to * sizeof *t->place);
        t->populated = to;
    }
    /* the index stays at most 3/4 full */
    while ((size_t)(t->used + more) * 4 > (t->mask + 1) * 3)
        if (grow_index(t) < 0)
            return -1;
    return 0;
}

/* The thread's previous stack, root first, with the ids it was interned to; and as it
 * came, leaf first, with its leaf and its unwinder's tag: the same stack again is one
 * comparison of tags, or one memcmp. */
struct prefix {
    const struct culeak_tree *tree;
    int n;
    uintptr_t ip[CULEAK_MAX_DEPTH];
    uint32_t id[CULEAK_MAX_DEPTH];
    uintptr_t last[CULEAK_MAX_DEPTH];
    int last_n;
    uint32_t last_leaf;
    uint64_t last_tag;
};

static struct prefix *thread_prefix(void)
{
    return culeak_thread_block(CULEAK_TB_TREE_PREFIX, sizeof(struct prefix));
}

/* The node (parent, ip) whose path hashes to h, or 0. */
static uint32_t find(const struct culeak_tree *t, uint64_t h, uint32_t parent, uint64_t ip)
{
    for (size_t j = h & t->mask; t->index[j].id; j = (j + 1) & t->mask)
        if (t->index[j].parent == parent && t->ip[t->index[j].id] == ip)
            return t->index[j].id;
    return 0;
}

/* A new node (parent, ip) whose path hashes to h; 0 when out of memory. */
static uint32_t make(struct culeak_tree *t, uint64_t h, uint32_t parent, uint64_t ip,
                     void (*emit)(void *, uint32_t, uint32_t, uintptr_t), void *arg)
{
    if (reserve(t, 1) < 0 && (t->next_id == t->node_cap || t->used == t->mask))
        return 0; /* full and cannot grow */
    uint32_t id = t->next_id++;
    t->ip[id] = ip;
    t->parent[id] = parent;
    t->place[id] = (uint32_t)h;
    size_t j = h & t->mask;
    while (t->index[j].id)
        j = (j + 1) & t->mask;
    t->index[j] = (struct slot){parent, id};
    t->used++;
    emit(arg, id, parent, (uintptr_t)ip);
    return id;
}

/* The leaf of the stack of n frames whose hashes are h and h2, from the whole-stack
 * table; 0 when not there. */
static uint32_t whole_lookup(const struct culeak_tree *t, int n, uint64_t h, uint64_t h2)
{
    for (size_t j = (size_t)h & t->smask; t->stacks[j].leaf; j = (j + 1) & t->smask) {
        const struct whole *w = &t->stacks[j];
        if (w->hash == h && w->hash2 == h2 && w->n == (uint32_t)n)
            return w->leaf;
    }
    return 0;
}

static void whole_add(struct culeak_tree *t, uint64_t h, uint64_t h2, uint32_t leaf, int n)
{
    if ((t->sused + 1) * 2 > t->smask + 1 && grow_stacks(t) < 0)
        return; /* such stacks are found frame by frame */
    size_t j = (size_t)h & t->smask;
    while (t->stacks[j].leaf)
        j = (j + 1) & t->smask;
    t->stacks[j] = (struct whole){h, h2, leaf, (uint32_t)n};
    t->sused++;
}

static uint32_t intern(struct culeak_tree *t, const uintptr_t *ips, int n,
                       void (*emit)(void *, uint32_t, uint32_t, uintptr_t), void *arg, int *fresh,
                       struct prefix *c, int *whole)
{
    int same = 0;
    if (c && c->tree == t) {
        while (same < n && same < c->n && c->ip[same] == ips[n - 1 - same])
            same++;
        if (same == n)
            return c->id[n - 1];
    } else if (c) {
        c->n = 0;
    }
    /* the path hash of every frame, root first; and the stack's second hash */
    uint64_t hk[CULEAK_MAX_DEPTH], h = ROOT_HASH, h2 = SECOND_SEED;
    for (int k = 0; k < n; k++) {
        hk[k] = h = path_hash(h, ips[n - 1 - k]);
        h2 = second_hash(h2, ips[n - 1 - k]);
    }
    uint32_t leaf = whole_lookup(t, n, h, h2);
    if (leaf) {
        if (c) { /* its nodes' ids are not read: no prefix for the next stack */
            c->tree = t;
            c->n = 0;
        }
        *whole = 1;
        return leaf;
    }
    reserve(t, (uint32_t)(n - same)); /* no growth below: the slots asked for stay */
    for (int k = same; k < n; k++)
        __builtin_prefetch(&t->index[hk[k] & t->mask]);
    uint32_t parent = same ? c->id[same - 1] : 0;
    int complete = 1, made = 0;
    for (int k = same; k < n; k++) {
        uintptr_t ip = ips[n - 1 - k];
        /* below a node just made there is nothing to find */
        uint32_t id = made ? 0 : find(t, hk[k], parent, ip);
        if (!id) {
            id = make(t, hk[k], parent, ip, emit, arg);
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
    *fresh = made;
    if (c) {
        c->tree = t;
        c->n = n;
    }
    if (complete)
        whole_add(t, h, h2, parent, n);
    return parent;
}

uint32_t culeak_tree_intern(struct culeak_tree *t, const uintptr_t *ips, int n, uint64_t tag,
                            void (*emit)(void *, uint32_t, uint32_t, uintptr_t), void *arg,
                            int *fresh)
{
    *fresh = 0;
    if (n <= 0) /* the empty stack (a bare free): the thread's previous stack stays cached */
        return 0;
    struct prefix *c = thread_prefix();
    if (c && c->tree == t && c->last_leaf && c->last_n == n &&
        ((tag && tag == c->last_tag) || memcmp(c->last, ips, (size_t)n * sizeof *ips) == 0)) {
        c->last_tag = tag;
        return c->last_leaf;
    }
    int whole = 0;
    uint32_t leaf = intern(t, ips, n, emit, arg, fresh, c, &whole);
    if (c && leaf && (whole || c->n == n)) {
        memcpy(c->last, ips, (size_t)n * sizeof *ips);
        c->last_n = n;
        c->last_leaf = leaf;
        c->last_tag = tag;
    } else if (c) {
        c->last_leaf = 0;
        c->last_tag = 0;
    }
    return leaf;
}
