/* A small pickle writer (Python's pickle protocol 2): dicts, lists, tuples, strings,
 * integers, floats, booleans and None, and the memo to write a repeated value once.
 * What any Python since 2.3 reads with pickle.load(), PyTorch's memory snapshots among
 * them. Containers are opened and closed around their items (MARK ... SETITEMS). Errors
 * are the stream's (ferror), and overflow's. */
#ifndef CULEAK_PICKLE_WRITE_H
#define CULEAK_PICKLE_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PKW_KEYS 64  /* strings written by pkw_key() once and then taken from the memo */
#define PKW_DEPTH 32 /* containers open at once */
#define PKW_BATCH 1000 /* a list's items per APPENDS, as Python's pickler batches them: a
                          reader may spread one APPENDS's items as arguments (MemoryViz.js) */

struct pkw {
    FILE *f;
    uint32_t memo;    /* the next memo index */
    uint64_t bytes;   /* written so far */
    struct {
        const char *s; /* a key's address: keys are the writer's own constants */
        uint32_t memo;
    } keys[PKW_KEYS];
    size_t nkeys;
    struct {
        char list;      /* a list (its items are batched), else a dict or tuple */
        uint32_t items; /* since the last APPENDS */
    } open[PKW_DEPTH];
    size_t depth;
    int overflow;       /* nested deeper than PKW_DEPTH: the output is not a pickle */
};

void pkw_begin(struct pkw *w, FILE *f); /* PROTO 2 */
void pkw_end(struct pkw *w);            /* STOP */
void pkw_dict(struct pkw *w);           /* a dict's items (key, value, key, ...) follow */
void pkw_dict_end(struct pkw *w);
void pkw_list(struct pkw *w);
void pkw_list_end(struct pkw *w);
void pkw_tuple(struct pkw *w);
void pkw_tuple_end(struct pkw *w);
/* A str: bytes that are not UTF-8 become U+FFFD, so that Python decodes it. */
void pkw_strn(struct pkw *w, const char *s, size_t n);
void pkw_str(struct pkw *w, const char *s); /* NULL: None */
/* A constant string (a dict key): written the first time, then fetched from the memo. */
void pkw_key(struct pkw *w, const char *s);
void pkw_int(struct pkw *w, int64_t v);
void pkw_uint(struct pkw *w, uint64_t v);
void pkw_float(struct pkw *w, double v);
void pkw_bool(struct pkw *w, int v);
void pkw_none(struct pkw *w);
/* Keeps the value just written in the memo; returns its index for pkw_get(). */
uint32_t pkw_put(struct pkw *w);
/* The value kept at index, again (the same object to the reader). */
void pkw_get(struct pkw *w, uint32_t index);

#endif
