/* u64 -> u32 open-addressing map (see u64map.h). */
#include "u64map.h"

#include <stdlib.h>

static size_t hash(uint64_t k)
{
    k ^= k >> 31;
    k *= 0x7fb5d329728ea185ull;
    k ^= k >> 27;
    k *= 0x81dadef4bc2dd44dull;
    k ^= k >> 33;
    return (size_t)k;
}

void u64map_free(struct u64map *m)
{
    free(m->keys);
    free(m->vals);
    u64map_init(m);
}

uint32_t u64map_get(const struct u64map *m, uint64_t key)
{
    if (!m->count)
        return UINT32_MAX;
    size_t mask = m->nslots - 1;
    for (size_t j = hash(key) & mask; m->vals[j]; j = (j + 1) & mask)
        if (m->keys[j] == key)
            return m->vals[j] - 1;
    return UINT32_MAX;
}

static int grow(struct u64map *m)
{
    size_t ns = m->nslots ? m->nslots * 2 : 64;
    uint64_t *keys = malloc(ns * sizeof *keys);
    uint32_t *vals = calloc(ns, sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return -1;
    }
    for (size_t i = 0; i < m->nslots; i++) {
        if (!m->vals[i])
            continue;
        size_t j = hash(m->keys[i]) & (ns - 1);
        while (vals[j])
            j = (j + 1) & (ns - 1);
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->nslots = ns;
    return 0;
}

int u64map_reserve(struct u64map *m, size_t n)
{
    while ((n + 1) * 4 > m->nslots * 3)
        if (grow(m) != 0)
            return -1;
    return 0;
}

int u64map_put(struct u64map *m, uint64_t key, uint32_t val)
{
    if ((m->count + 1) * 4 > m->nslots * 3 && grow(m) != 0)
        return -1;
    size_t mask = m->nslots - 1, j = hash(key) & mask;
    for (; m->vals[j]; j = (j + 1) & mask)
        if (m->keys[j] == key) {
            m->vals[j] = val + 1;
            return 0;
        }
    m->keys[j] = key;
    m->vals[j] = val + 1;
    m->count++;
    return 0;
}


int u64map_add(struct u64map *m, uint64_t key, uint32_t delta)
{
    if (m->count) {
        size_t mask = m->nslots - 1;
        for (size_t j = hash(key) & mask; m->vals[j]; j = (j + 1) & mask)
            if (m->keys[j] == key) {
                m->vals[j] += delta; /* value + 1 + delta */
                return 0;
            }
    }
    return u64map_put(m, key, delta);
}
