/* A restricted unpickler: reads a pickle (protocols 0 to 5) that holds only dicts, lists,
 * tuples, strings, bytes, integers, floats, booleans and None, with the memo and mark
 * opcodes that build them. Nothing in the input is ever run: an opcode that would import
 * or call anything (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, EXT*, PERSID,
 * sets, out-of-band buffers) stops the reading with an error naming it and its offset.
 * Nesting is bounded (PKR_MAX_DEPTH marks), values are nodes of one arena freed at once,
 * and strings point into the input, which must outlive the document. The memo makes a
 * graph, not a tree (a value may be reached twice, even from inside itself): a reader
 * walking it bounds its own work. */
#ifndef CULEAK_PICKLE_READ_H
#define CULEAK_PICKLE_READ_H

#include <stddef.h>
#include <stdint.h>

#define PKR_MAX_DEPTH 256

enum pkv_type { PKV_NONE, PKV_BOOL, PKV_INT, PKV_BIGINT, PKV_FLOAT, PKV_STR, PKV_BYTES, PKV_LIST, PKV_TUPLE, PKV_DICT };

struct pkv {
    uint8_t type;        /* enum pkv_type */
    uint32_t n;          /* STR, BYTES: bytes; LIST, TUPLE: items; DICT: pairs */
    uint32_t cap;
    union {
        int64_t i;       /* BOOL, INT (a BIGINT does not fit 64 bits: its value is lost) */
        double f;
        const char *s;   /* STR, BYTES: into the input, not NUL-terminated */
        struct pkv **items; /* LIST, TUPLE; DICT: key, value, key, value, ... */
    } u;
};

struct pkr_chunk;
struct pkdoc {
    struct pkv *root;
    struct pkr_chunk *chunks; /* the arena */
    struct pkv **containers;  /* their item arrays to free */
    size_t ncontainers, capcontainers;
};

/* Reads buf[0..n): 0 with doc->root set, or -1 with err "pickle: at offset N: ...". */
int pkr_load(struct pkdoc *doc, const uint8_t *buf, size_t n, char *err, size_t errlen);
void pkr_free(struct pkdoc *doc);

/* The value of key (a str) in dict d, or NULL (d not a dict, no such key). */
const struct pkv *pkv_get(const struct pkv *d, const char *key);
/* Is v a str (or bytes) equal to s? */
int pkv_is(const struct pkv *v, const char *s);
/* v as an integer (INT, BOOL; a FLOAT truncated); def otherwise. */
int64_t pkv_int(const struct pkv *v, int64_t def);
double pkv_num(const struct pkv *v, double def);
/* A list's or tuple's items (NULL and 0 for anything else). */
size_t pkv_items(const struct pkv *v, struct pkv *const **items);

#endif
