/* Interned strings: each distinct string stored once, pointers stable until the pool is
 * freed. Used for symbol names, file names, labels and group keys. */
#ifndef CULEAK_STRPOOL_H
#define CULEAK_STRPOOL_H

#include <stddef.h>
#include <stdint.h>

struct strpool {
    char **chunks;          /* arena chunks */
    size_t nchunks, used;   /* bytes used in the last chunk */
    const char **slots;     /* open addressing by hash */
    uint32_t *ids;          /* id of each slot's string */
    size_t nslots, count;
    const char **by_id;     /* strings in order of interning: ids are dense */
};

void strpool_init(struct strpool *p);
void strpool_free(struct strpool *p);
/* Returns the stored copy (NUL-terminated); NULL only when out of memory. */
const char *strpool_intern(struct strpool *p, const char *s, size_t n);
/* A copy in the pool's arena without interning (no id, not shared): for the many strings
 * that are unique anyway. NULL only when out of memory. */
const char *strpool_store(struct strpool *p, const char *s, size_t n);
/* Dense id of the string (0, 1, ...); UINT32_MAX when out of memory. */
uint32_t strpool_id(struct strpool *p, const char *s, size_t n);
static inline const char *strpool_get(const struct strpool *p, uint32_t id) { return p->by_id[id]; }

#endif
