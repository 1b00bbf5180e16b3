/* Live allocations: an open-addressing index (linear probing, backward-shift deletion,
 * no tombstones) over a dense array of 32-byte entries. Removing swaps the last entry
 * into the hole, so iteration is a plain loop and memory stays near 48 bytes per live
 * allocation. A slot holds the entry's index and 32 bits of its key's hash: a probe and
 * the deletion's shift compare those and touch an entry only where the hash matches, so
 * at millions of live allocations a lookup costs one or two cache misses, not one per
 * probe. */
#ifndef CULEAK_LIVE_TABLE_H
#define CULEAK_LIVE_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct live_entry {
    uint64_t addr;
    uint64_t size;
    uint64_t seq_proc;  /* seq << 16 | process index */
    uint32_t unit;      /* the (stack, kind) aggregate it counts in */
    int8_t device;
    uint8_t space;      /* address space: allocations of different kinds may share numbers */
    uint16_t ctx;       /* per-process context index */
};

static inline uint64_t live_entry_seq(const struct live_entry *e) { return e->seq_proc >> 16; }
static inline int live_entry_proc(const struct live_entry *e) { return (int)(e->seq_proc & 0xffff); }

struct live_table {
    struct live_entry *entries;
    size_t n, cap;
    uint64_t *slots;     /* hash's low 32 bits << 32 | entry index + 1; 0 empty */
    size_t nslots;       /* power of two */
    size_t found;        /* the slot of find's last entry: a remove that follows probes no more */
};

void live_table_init(struct live_table *t);
void live_table_free(struct live_table *t);
/* The entry for (proc, space, addr), or NULL. */
struct live_entry *live_table_find(struct live_table *t, int proc, unsigned space, uint64_t addr);
/* Adds a new entry (the key must not be present); NULL when out of memory. */
struct live_entry *live_table_insert(struct live_table *t, const struct live_entry *e);
/* Removes the entry (a pointer from find or iteration); the last entry moves into its place. */
void live_table_remove(struct live_table *t, struct live_entry *e);
/* Bytes of memory the table holds. */
size_t live_table_memory(const struct live_table *t);

#endif
