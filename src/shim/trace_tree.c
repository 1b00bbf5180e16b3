/* Stack interning: a trace tree whose nodes are (parent, ip) edges, kept in one
 * open-addressing hash table. A stack is sent once, node by node (FRAME records), and
 * every event then carries only its leaf id. The caller holds the stream lock. */
#include "shim.h"

#include <stdlib.h>

struct slot {
    uint64_t ip;
    uint32_t parent;
    uint32_t id; /* 0: empty */
};

struct culeak_tree {
    struct slot *slots;
    size_t mask;  /* capacity - 1, capacity a power of two */
    uint32_t next_id, used;
};

static size_t hash(uint32_t parent, uint64_t ip)
{
    uint64_t h = (ip ^ ((uint64_t)parent << 40) ^ parent) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h ^ (h >> 29));
}

struct culeak_tree *culeak_tree_new(void)
{
    struct culeak_tree *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->mask = 4095;
    t->slots = calloc(t->mask + 1, sizeof *t->slots);
    if (!t->slots) {
        free(t);
        return NULL;
    }
    t->next_id = 1;
    return t;
}

static int grow(struct culeak_tree *t)
{
    size_t cap = (t->mask + 1) * 2;
    struct slot *s = calloc(cap, sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i <= t->mask; i++) {
        struct slot *o = &t->slots[i];
        if (!o->id)
            continue;
        size_t j = hash(o->parent, o->ip) & (cap - 1);
        while (s[j].id)
            j = (j + 1) & (cap - 1);
        s[j] = *o;
    }
    free(t->slots);
    t->slots = s;
    t->mask = cap - 1;
    return 0;
}

/* The thread's previous stack, root first, with the ids it was interned to: a new
 * stack usually shares all but its innermost frames with it, and those need no lookup. */
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

static uint32_t lookup_or_add(struct culeak_tree *t, uint32_t parent, uint64_t ip,
                              void (*emit)(void *, uint32_t, uint32_t, uintptr_t), void *arg, int *added)
{
    size_t j = hash(parent, ip) & t->mask;
    while (t->slots[j].id && (t->slots[j].ip != ip || t->slots[j].parent != parent))
        j = (j + 1) & t->mask;
    if (t->slots[j].id)
        return t->slots[j].id;
    /* Keep the load under one half; a failed grow just fills the table further. */
    if ((t->used + 1) * 2 > t->mask + 1 && grow(t) == 0) {
        j = hash(parent, ip) & t->mask;
        while (t->slots[j].id)
            j = (j + 1) & t->mask;
    }
    if (t->used == t->mask) /* full and cannot grow */
        return 0;
    t->slots[j] = (struct slot){ip, parent, t->next_id};
    t->used++;
    emit(arg, t->next_id, parent, (uintptr_t)ip);
    *added = 1;
    return t->next_id++;
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
    if (c && c->tree == t)
        while (same < n && same < c->n && c->ip[same] == ips[n - 1 - same])
            same++;
    uint32_t parent = same ? c->id[same - 1] : 0;
    for (int k = same; k < n; k++) {
        uintptr_t ip = ips[n - 1 - k];
        int added = 0;
        uint32_t id = lookup_or_add(t, parent, ip, emit, arg, &added);
        if (!id) { /* out of memory: stop at the deepest known node */
            n = k;
            break;
        }
        *fresh = added;
        parent = id;
        if (c) {
            c->ip[k] = ip;
            c->id[k] = id;
        }
    }
    if (c) {
        c->tree = t;
        c->n = n;
    }
    return parent;
}
