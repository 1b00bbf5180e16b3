/* Open-addressing table of live allocations (see live_table.h). */
#include "live_table.h"

#include <stdlib.h>
#include <string.h>

static uint64_t key_hash(int proc, unsigned space, uint64_t addr)
{
    uint64_t h = addr ^ ((uint64_t)(unsigned)proc << 48) ^ ((uint64_t)space << 40);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

static int same_key(const struct live_entry *e, int proc, unsigned space, uint64_t addr)
{
    return e->addr == addr && e->space == space && live_entry_proc(e) == proc;
}

void live_table_init(struct live_table *t) { memset(t, 0, sizeof *t); }

void live_table_free(struct live_table *t)
{
    free(t->entries);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

static uint64_t entry_hash(const struct live_entry *e) { return key_hash(live_entry_proc(e), e->space, e->addr); }

/* A slot's parts: the entry it points at (index + 1; 0 empty) and where its probe began. */
static uint32_t slot_index(uint64_t s) { return (uint32_t)s; }
static size_t slot_home(const struct live_table *t, uint64_t s) { return (size_t)(s >> 32) & (t->nslots - 1); }
static uint64_t slot_make(uint64_t hash, size_t idx) { return hash << 32 | (uint32_t)(idx + 1); }

static int grow_slots(struct live_table *t)
{
    size_t ns = t->nslots ? t->nslots * 2 : 64;
    if (ns > (size_t)1 << 32) /* the home is taken from 32 bits of the hash */
        return -1;
    uint64_t *s = calloc(ns, sizeof *s);
    if (!s)
        return -1;
    uint64_t *old = t->slots;
    size_t nold = t->nslots;
    t->slots = s;
    t->nslots = ns;
    for (size_t i = 0; i < nold; i++) {
        if (!old[i])
            continue;
        size_t j = slot_home(t, old[i]);
        while (s[j])
            j = (j + 1) & (ns - 1);
        s[j] = old[i];
    }
    free(old);
    return 0;
}

/* Slot holding entry index idx (which must be present), whose hash is h. */
static size_t find_slot_of_index(const struct live_table *t, size_t idx, uint64_t h)
{
    size_t j = (size_t)h & (t->nslots - 1);
    while (slot_index(t->slots[j]) != idx + 1)
        j = (j + 1) & (t->nslots - 1);
    return j;
}

struct live_entry *live_table_find(struct live_table *t, int proc, unsigned space, uint64_t addr)
{
    if (!t->n)
        return NULL;
    size_t mask = t->nslots - 1;
    uint64_t h = key_hash(proc, space, addr);
    uint32_t tag = (uint32_t)h;
    for (size_t j = (size_t)h & mask;; j = (j + 1) & mask) {
        uint64_t s = t->slots[j];
        if (!s)
            return NULL;
        if ((uint32_t)(s >> 32) != tag)
            continue;
        struct live_entry *e = &t->entries[slot_index(s) - 1];
        if (same_key(e, proc, space, addr)) {
            t->found = j;
            return e;
        }
    }
}

struct live_entry *live_table_insert(struct live_table *t, const struct live_entry *e)
{
    if (t->n >= UINT32_MAX - 1)
        return NULL;
    /* index load factor at most 3/4: the index is 8 bytes a slot, a quarter of an entry */
    if ((t->n + 1) * 4 > t->nslots * 3 && grow_slots(t) != 0)
        return NULL;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap + t->cap / 2 : 64;
        struct live_entry *ne = realloc(t->entries, cap * sizeof *ne);
        if (!ne)
            return NULL;
        t->entries = ne;
        t->cap = cap;
    }
    size_t idx = t->n++;
    t->entries[idx] = *e;
    uint64_t h = (uint32_t)entry_hash(e);
    size_t j = (size_t)h & (t->nslots - 1);
    while (t->slots[j])
        j = (j + 1) & (t->nslots - 1);
    t->slots[j] = slot_make(h, idx);
    return &t->entries[idx];
}

void live_table_remove(struct live_table *t, struct live_entry *e)
{
    size_t idx = (size_t)(e - t->entries), mask = t->nslots - 1;
    size_t hole = t->found < t->nslots && slot_index(t->slots[t->found]) == idx + 1
                      ? t->found
                      : find_slot_of_index(t, idx, entry_hash(e));
    /* backward-shift deletion keeps every probe chain unbroken */
    for (size_t j = (hole + 1) & mask; t->slots[j]; j = (j + 1) & mask) {
        size_t home = slot_home(t, t->slots[j]);
        /* move slot j into the hole if its home is not in (hole, j] cyclically */
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            t->slots[hole] = t->slots[j];
            hole = j;
        }
    }
    t->slots[hole] = 0;
    size_t last = t->n - 1;
    if (idx != last) {
        size_t ls = find_slot_of_index(t, last, entry_hash(&t->entries[last]));
        t->entries[idx] = t->entries[last];
        t->slots[ls] = slot_make(t->slots[ls] >> 32, idx);
    }
    t->n--;
}

size_t live_table_memory(const struct live_table *t)
{
    return t->cap * sizeof *t->entries + t->nslots * sizeof *t->slots;
}
