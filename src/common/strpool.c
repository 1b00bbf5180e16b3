/* String interning in arena chunks (see strpool.h). */
#include "strpool.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK (64 * 1024)

void strpool_init(struct strpool *p) { memset(p, 0, sizeof *p); }

void strpool_free(struct strpool *p)
{
    for (size_t i = 0; i < p->nchunks; i++)
        free(p->chunks[i]);
    free(p->chunks);
    free(p->slots);
    free(p->ids);
    free(p->by_id);
    memset(p, 0, sizeof *p);
}

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static char *arena_copy(struct strpool *p, const char *s, size_t n)
{
    size_t need = n + 1;
    if (need > CHUNK / 4) { /* big strings get their own chunk */
        char **nc = realloc(p->chunks, (p->nchunks + 1) * sizeof *nc);
        if (!nc)
            return NULL;
        p->chunks = nc;
        char *c = malloc(need);
        if (!c)
            return NULL;
        /* keep the current chunk last so small strings go on filling it */
        if (p->nchunks) {
            p->chunks[p->nchunks] = p->chunks[p->nchunks - 1];
            p->chunks[p->nchunks - 1] = c;
        } else {
            p->chunks[0] = c;
            p->used = CHUNK; /* no small chunk yet */
        }
        p->nchunks++;
        memcpy(c, s, n);
        c[n] = 0;
        return c;
    }
    if (!p->nchunks || p->used + need > CHUNK) {
        char **nc = realloc(p->chunks, (p->nchunks + 1) * sizeof *nc);
        if (!nc)
            return NULL;
        p->chunks = nc;
        if (!(p->chunks[p->nchunks] = malloc(CHUNK)))
            return NULL;
        p->nchunks++;
        p->used = 0;
    }
    char *c = p->chunks[p->nchunks - 1] + p->used;
    p->used += need;
    memcpy(c, s, n);
    c[n] = 0;
    return c;
}

static int grow(struct strpool *p)
{
    size_t ns = p->nslots ? p->nslots * 2 : 256;
    const char **slots = calloc(ns, sizeof *slots);
    uint32_t *ids = calloc(ns, sizeof *ids);
    const char **by_id = realloc(p->by_id, ns * sizeof *by_id);
    if (!slots || !ids || !by_id) {
        free(slots);
        free(ids);
        if (by_id)
            p->by_id = by_id;
        return -1;
    }
    p->by_id = by_id;
    for (size_t i = 0; i < p->nslots; i++) {
        if (!p->slots[i])
            continue;
        size_t j = (size_t)hash_bytes(p->slots[i], strlen(p->slots[i])) & (ns - 1);
        while (slots[j])
            j = (j + 1) & (ns - 1);
        slots[j] = p->slots[i];
        ids[j] = p->ids[i];
    }
    free(p->slots);
    free(p->ids);
    p->slots = slots;
    p->ids = ids;
    p->nslots = ns;
    return 0;
}

static size_t lookup(struct strpool *p, const char *s, size_t n, int *found)
{
    size_t mask = p->nslots - 1;
    for (size_t j = (size_t)hash_bytes(s, n) & mask;; j = (j + 1) & mask) {
        const char *c = p->slots[j];
        if (!c) {
            *found = 0;
            return j;
        }
        if (strncmp(c, s, n) == 0 && c[n] == 0) {
            *found = 1;
            return j;
        }
    }
}

uint32_t strpool_id(struct strpool *p, const char *s, size_t n)
{
    /* strings with NUL inside would not round-trip: cut at the first NUL */
    const char *nul = memchr(s, 0, n);
    if (nul)
        n = (size_t)(nul - s);
    if ((p->count + 1) * 2 > p->nslots && grow(p) != 0)
        return UINT32_MAX;
    int found;
    size_t j = lookup(p, s, n, &found);
    if (found)
        return p->ids[j];
    char *c = arena_copy(p, s, n);
    if (!c)
        return UINT32_MAX;
    p->slots[j] = c;
    p->ids[j] = (uint32_t)p->count;
    p->by_id[p->count] = c;
    return (uint32_t)p->count++;
}

const char *strpool_intern(struct strpool *p, const char *s, size_t n)
{
    uint32_t id = strpool_id(p, s, n);
    return id == UINT32_MAX ? NULL : p->by_id[id];
}

const char *strpool_store(struct strpool *p, const char *s, size_t n) { return arena_copy(p, s, n); }
