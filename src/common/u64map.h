/* A map from 64-bit keys to 32-bit values (open addressing, linear probing; no removal).
 * The model's many small indexes: (stack, kind) -> unit, site keys -> site, ... */
#ifndef CULEAK_U64MAP_H
#define CULEAK_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct u64map {
    uint64_t *keys;
    uint32_t *vals;   /* value + 1; 0 marks an empty slot */
    size_t nslots, count;
};

static inline void u64map_init(struct u64map *m) { m->keys = NULL; m->vals = NULL; m->nslots = m->count = 0; }
void u64map_free(struct u64map *m);
/* The value, or UINT32_MAX when absent. */
uint32_t u64map_get(const struct u64map *m, uint64_t key);
/* Sets key to val (val < UINT32_MAX); -1 when out of memory. */
int u64map_put(struct u64map *m, uint64_t key, uint32_t val);
/* Adds delta (modulo 2^32) to key's value, an absent key's being 0, in one probe where
 * a get and a put take two; the sum must not be UINT32_MAX. -1 when out of memory. */
int u64map_add(struct u64map *m, uint64_t key, uint32_t delta);
/* Room for n keys without growing; -1 when out of memory. */
int u64map_reserve(struct u64map *m, size_t n);

#endif
