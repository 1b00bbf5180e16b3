/* The restricted unpickler (pickle_read.h): a stack machine over the opcodes that build
 * plain data, as Python's Lib/pickle.py runs them; every other opcode is refused. */
#include "pickle_read.h"
#include "u64map.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_NODES 4096

struct pkr_chunk {
    struct pkr_chunk *next;
    size_t used;
    struct pkv nodes[CHUNK_NODES];
};

struct reader {
    struct pkdoc *doc;
    const uint8_t *buf;
    size_t n, at, op_at;
    struct pkv **stack;
    size_t sp, cap;
    size_t marks[PKR_MAX_DEPTH];
    size_t nmarks;
    struct u64map memo;  /* memo index -> position in memo_vals */
    struct pkv **memo_vals;
    size_t nmemo, capmemo;
    char *err;
    size_t errlen;
};

/* The opcodes that would import or call something, by name: refused. */
static const char *refused_name(uint8_t op)
{
    switch (op) {
    case 'c': return "GLOBAL";
    case 0x93: return "STACK_GLOBAL";
    case 'R': return "REDUCE";
    case 'b': return "BUILD";
    case 'i': return "INST";
    case 'o': return "OBJ";
    case 0x81: return "NEWOBJ";
    case 0x92: return "NEWOBJ_EX";
    case 0x82: return "EXT1";
    case 0x83: return "EXT2";
    case 0x84: return "EXT4";
    case 'P': return "PERSID";
    case 'Q': return "BINPERSID";
    case 0x8f: return "EMPTY_SET";
    case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    case 'S': return "STRING";
    case 'V': return "UNICODE";
    }
    return NULL;
}

static int fail(struct reader *r, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(r->err, r->errlen, "pickle: at offset %zu: %s", r->op_at, what);
    return -1;
}

static struct pkv *node(struct reader *r, enum pkv_type t)
{
    struct pkr_chunk *c = r->doc->chunks;
    if (!c || c->used == CHUNK_NODES) {
        if (!(c = malloc(sizeof *c)))
            return NULL;
        c->next = r->doc->chunks;
        c->used = 0;
        r->doc->chunks = c;
    }
    struct pkv *v = &c->nodes[c->used++];
    memset(v, 0, sizeof *v);
    v->type = (uint8_t)t;
    return v;
}

static int push(struct reader *r, struct pkv *v)
{
    if (!v)
        return fail(r, "out of memory");
    if (r->sp == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 256;
        struct pkv **s = realloc(r->stack, cap * sizeof *s);
        if (!s)
            return fail(r, "out of memory");
        r->stack = s;
        r->cap = cap;
    }
    r->stack[r->sp++] = v;
    return 0;
}

/* The stack's floor: the last mark, or its bottom. */
static size_t floor_of(const struct reader *r) { return r->nmarks ? r->marks[r->nmarks - 1] : 0; }

static struct pkv *pop(struct reader *r)
{
    if (r->sp <= floor_of(r)) {
        fail(r, "stack underflow");
        return NULL;
    }
    return r->stack[--r->sp];
}

static struct pkv *top(struct reader *r)
{
    if (r->sp <= floor_of(r)) {
        fail(r, "stack underflow");
        return NULL;
    }
    return r->stack[r->sp - 1];
}

/* Appends items to a container (a dict takes them as key, value pairs). */
static int add_items(struct reader *r, struct pkv *c, struct pkv *const *items, size_t k)
{
    size_t have = c->type == PKV_DICT ? 2 * (size_t)c->n : c->n;
    if (have + k > UINT32_MAX - 1)
        return fail(r, "container too large");
    if (have + k > c->cap) {
        size_t cap = c->cap ? c->cap : 4;
        while (cap < have + k)
            cap *= 2;
        int first = c->u.items == NULL;
        struct pkv **it = realloc(c->u.items, cap * sizeof *it);
        if (!it)
            return fail(r, "out of memory");
        c->u.items = it;
        c->cap = (uint32_t)(cap < UINT32_MAX ? cap : UINT32_MAX);
        if (first) { /* the arena frees nodes; the item arrays are freed by their list */
            struct pkdoc *d = r->doc;
            if (d->ncontainers == d->capcontainers) {
                size_t nc = d->capcontainers ? d->capcontainers * 2 : 64;
                struct pkv **l = realloc(d->containers, nc * sizeof *l);
                if (!l) {
                    free(it);
                    c->u.items = NULL;
                    c->cap = 0;
                    return fail(r, "out of memory");
                }
                d->containers = l;
                d->capcontainers = nc;
            }
            d->containers[d->ncontainers++] = c;
        }
    }
    memcpy(c->u.items + have, items, k * sizeof *items);
    c->n = (uint32_t)(c->type == PKV_DICT ? (have + k) / 2 : have + k);
    return 0;
}

/* A new container of the items above the last mark, which is dropped. */
static int from_mark(struct reader *r, enum pkv_type t)
{
    if (!r->nmarks)
        return fail(r, "no mark");
    size_t m = r->marks[--r->nmarks], k = r->sp - m;
    if (t == PKV_DICT && k % 2)
        return fail(r, "odd number of dict items");
    struct pkv *c = node(r, t);
    if (!c || (k && add_items(r, c, r->stack + m, k)))
        return c ? -1 : fail(r, "out of memory");
    r->sp = m;
    return push(r, c);
}

/* Items above the last mark added to the container under it. */
static int extend(struct reader *r, enum pkv_type want)
{
    if (!r->nmarks)
        return fail(r, "no mark");
    size_t m = r->marks[--r->nmarks], k = r->sp - m;
    if (m <= floor_of(r) || r->stack[m - 1]->type != want)
        return fail(r, want == PKV_DICT ? "SETITEMS on a value that is not a dict"
                                        : "APPENDS on a value that is not a list");
    if (want == PKV_DICT && k % 2)
        return fail(r, "odd number of dict items");
    if (k && add_items(r, r->stack[m - 1], r->stack + m, k))
        return -1;
    r->sp = m;
    return 0;
}

/* The last k items in one container (APPEND, SETITEM, TUPLEn). */
static int last_into(struct reader *r, size_t k, enum pkv_type want, int make)
{
    size_t fl = floor_of(r);
    if (r->sp < fl + k + !make)
        return fail(r, "stack underflow");
    struct pkv *c;
    if (make) {
        if (!(c = node(r, want)))
            return fail(r, "out of memory");
    } else if ((c = r->stack[r->sp - k - 1])->type != want) {
        return fail(r, want == PKV_DICT ? "SETITEM on a value that is not a dict"
                                        : "APPEND on a value that is not a list");
    }
    if (k && add_items(r, c, r->stack + r->sp - k, k))
        return -1;
    r->sp -= k;
    return make ? push(r, c) : 0;
}

static int need(struct reader *r, size_t k)
{
    if (r->n - r->at < k)
        return fail(r, "truncated");
    return 0;
}

static uint64_t le(const uint8_t *p, size_t k)
{
    uint64_t v = 0;
    for (size_t i = 0; i < k; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static int integer(struct reader *r, int64_t v)
{
    struct pkv *x = node(r, PKV_INT);
    if (x)
        x->u.i = v;
    return push(r, x);
}

/* LONG1/LONG4: k little-endian bytes of two's complement. */
static int long_bytes(struct reader *r, const uint8_t *p, size_t k)
{
    int negative = k && (p[k - 1] & 0x80);
    size_t used = k;
    while (used > 0 && p[used - 1] == (negative ? 0xff : 0x00))
        used--;
    /* fits in int64: at most 8 bytes, and the sign bit of byte 8 agrees */
    int fits = used < 8 || (used == 8 && ((p[7] & 0x80) != 0) == negative);
    if (!fits) {
        struct pkv *x = node(r, PKV_BIGINT);
        return push(r, x);
    }
    uint64_t v = negative ? UINT64_MAX : 0;
    for (size_t i = 0; i < k && i < 8; i++) {
        v &= ~((uint64_t)0xff << (8 * i));
        v |= (uint64_t)p[i] << (8 * i);
    }
    return integer(r, (int64_t)v);
}

static int string(struct reader *r, enum pkv_type t, size_t lenbytes)
{
    if (need(r, lenbytes))
        return -1;
    uint64_t len = le(r->buf + r->at, lenbytes);
    r->at += lenbytes;
    if (len > r->n - r->at)
        return fail(r, "truncated");
    if (len > UINT32_MAX)
        return fail(r, "string too long");
    struct pkv *x = node(r, t);
    if (x) {
        x->u.s = (const char *)r->buf + r->at;
        x->n = (uint32_t)len;
    }
    r->at += len;
    return push(r, x);
}

/* The text argument of a protocol 0 opcode: up to the newline. */
static int line(struct reader *r, char *out, size_t len)
{
    const uint8_t *nl = memchr(r->buf + r->at, '\n', r->n - r->at);
    if (!nl)
        return fail(r, "truncated");
    size_t k = (size_t)(nl - (r->buf + r->at));
    if (k >= len)
        return fail(r, "argument too long");
    memcpy(out, r->buf + r->at, k);
    out[k] = 0;
    r->at += k + 1;
    return 0;
}

static int memo_put(struct reader *r, uint64_t index)
{
    struct pkv *v = top(r);
    if (!v)
        return -1;
    uint32_t at = u64map_get(&r->memo, index);
    if (at != UINT32_MAX) {
        r->memo_vals[at] = v;
        return 0;
    }
    if (r->nmemo == r->capmemo) {
        size_t cap = r->capmemo ? r->capmemo * 2 : 256;
        struct pkv **m = realloc(r->memo_vals, cap * sizeof *m);
        if (!m)
            return fail(r, "out of memory");
        r->memo_vals = m;
        r->capmemo = cap;
    }
    if (r->nmemo >= UINT32_MAX - 1 || u64map_put(&r->memo, index, (uint32_t)r->nmemo) != 0)
        return fail(r, "out of memory");
    r->memo_vals[r->nmemo++] = v;
    return 0;
}

static int memo_get(struct reader *r, uint64_t index)
{
    uint32_t at = u64map_get(&r->memo, index);
    if (at == UINT32_MAX)
        return fail(r, "memo key %llu not found", (unsigned long long)index);
    return push(r, r->memo_vals[at]);
}

static int text_int(struct reader *r, int is_put_get)
{
    char t[64], *end;
    if (line(r, t, sizeof t))
        return -1;
    size_t k = strlen(t);
    if (k && t[k - 1] == 'L') /* LONG's suffix */
        t[--k] = 0;
    errno = 0;
    long long v = strtoll(t, &end, 10);
    if (!k || *end || errno)
        return fail(r, "bad integer");
    if (is_put_get == 1)
        return v < 0 ? fail(r, "bad memo key") : memo_put(r, (uint64_t)v);
    if (is_put_get == 2)
        return v < 0 ? fail(r, "bad memo key") : memo_get(r, (uint64_t)v);
    if (!strcmp(t, "01") || !strcmp(t, "00")) { /* INT's booleans */
        struct pkv *x = node(r, PKV_BOOL);
        if (x)
            x->u.i = t[1] == '1';
        return push(r, x);
    }
    return integer(r, v);
}

static int one(struct reader *r, int *stop)
{
    r->op_at = r->at;
    uint8_t op = r->buf[r->at++];
    const uint8_t *p = r->buf + r->at;
    const char *no = refused_name(op);
    if (no)
        return fail(r, "opcode %s (0x%02x) refused (a snapshot holds only dicts, lists, strings and numbers; "
                       "nothing in it is run)", no, op);
    struct pkv *x;
    switch (op) {
    case 0x80: /* PROTO */
        if (need(r, 1))
            return -1;
        if (p[0] > 5)
            return fail(r, "protocol %u is newer than 5", p[0]);
        r->at++;
        return 0;
    case 0x95: /* FRAME: a length hint */
        if (need(r, 8))
            return -1;
        r->at += 8;
        return 0;
    case '.':
        *stop = 1;
        return 0;
    case '(':
        if (r->nmarks == PKR_MAX_DEPTH)
            return fail(r, "nested deeper than %d", PKR_MAX_DEPTH);
        r->marks[r->nmarks++] = r->sp;
        return 0;
    case '0':
        return pop(r) ? 0 : -1;
    case '1':
        if (!r->nmarks)
            return fail(r, "no mark");
        r->sp = r->marks[--r->nmarks];
        return 0;
    case '2':
        return (x = top(r)) ? push(r, x) : -1;
    case '}':
        return push(r, node(r, PKV_DICT));
    case ']':
        return push(r, node(r, PKV_LIST));
    case ')':
        return push(r, node(r, PKV_TUPLE));
    case 'd':
        return from_mark(r, PKV_DICT);
    case 'l':
        return from_mark(r, PKV_LIST);
    case 't':
        return from_mark(r, PKV_TUPLE);
    case 0x85:
    case 0x86:
    case 0x87:
        return last_into(r, (size_t)(op - 0x84), PKV_TUPLE, 1);
    case 's':
        return last_into(r, 2, PKV_DICT, 0);
    case 'a':
        return last_into(r, 1, PKV_LIST, 0);
    case 'u':
        return extend(r, PKV_DICT);
    case 'e':
        return extend(r, PKV_LIST);
    case 'N':
        return push(r, node(r, PKV_NONE));
    case 0x88:
    case 0x89:
        if ((x = node(r, PKV_BOOL)))
            x->u.i = op == 0x88;
        return push(r, x);
    case 'J':
        if (need(r, 4))
            return -1;
        r->at += 4;
        return integer(r, (int32_t)(uint32_t)le(p, 4));
    case 'K':
        if (need(r, 1))
            return -1;
        r->at += 1;
        return integer(r, p[0]);
    case 'M':
        if (need(r, 2))
            return -1;
        r->at += 2;
        return integer(r, (int64_t)le(p, 2));
    case 0x8a:
    case 0x8b: {
        size_t lb = op == 0x8a ? 1 : 4;
        if (need(r, lb))
            return -1;
        uint64_t k = le(p, lb);
        r->at += lb;
        if (k > r->n - r->at)
            return fail(r, "truncated");
        r->at += k;
        return long_bytes(r, p + lb, k);
    }
    case 'I':
    case 'L':
        return text_int(r, 0);
    case 'F': {
        char t[64], *end;
        if (line(r, t, sizeof t))
            return -1;
        double d = strtod(t, &end);
        if (end == t || *end)
            return fail(r, "bad float");
        if ((x = node(r, PKV_FLOAT)))
            x->u.f = d;
        return push(r, x);
    }
    case 'G': {
        if (need(r, 8))
            return -1;
        uint64_t bits = 0;
        for (int i = 0; i < 8; i++)
            bits = bits << 8 | p[i];
        r->at += 8;
        if ((x = node(r, PKV_FLOAT)))
            memcpy(&x->u.f, &bits, sizeof bits);
        return push(r, x);
    }
    case 'X':
        return string(r, PKV_STR, 4);
    case 0x8c:
        return string(r, PKV_STR, 1);
    case 0x8d:
        return string(r, PKV_STR, 8);
    case 'T':
    case 'B':
        return string(r, PKV_BYTES, 4);
    case 'U':
    case 'C':
        return string(r, PKV_BYTES, 1);
    case 0x8e:
    case 0x96:
        return string(r, PKV_BYTES, 8);
    case 'p':
        return text_int(r, 1);
    case 'g':
        return text_int(r, 2);
    case 'q':
        if (need(r, 1))
            return -1;
        r->at += 1;
        return memo_put(r, p[0]);
    case 'r':
        if (need(r, 4))
            return -1;
        r->at += 4;
        return memo_put(r, le(p, 4));
    case 0x94: /* MEMOIZE: the next index */
        return memo_put(r, r->nmemo);
    case 'h':
        if (need(r, 1))
            return -1;
        r->at += 1;
        return memo_get(r, p[0]);
    case 'j':
        if (need(r, 4))
            return -1;
        r->at += 4;
        return memo_get(r, le(p, 4));
    }
    return fail(r, "unknown opcode 0x%02x", op);
}

int pkr_load(struct pkdoc *doc, const uint8_t *buf, size_t n, char *err, size_t errlen)
{
    memset(doc, 0, sizeof *doc);
    struct reader r = {.doc = doc, .buf = buf, .n = n, .err = err, .errlen = errlen};
    u64map_init(&r.memo);
    int stop = 0, rc = 0;
    while (!stop && rc == 0) {
        if (r.at >= n) {
            r.op_at = n;
            rc = fail(&r, "no STOP: the pickle is cut off");
            break;
        }
        rc = one(&r, &stop);
    }
    if (rc == 0 && (r.sp != 1 || r.nmarks)) {
        r.op_at = r.at ? r.at - 1 : 0;
        rc = fail(&r, "STOP with %zu values on the stack", r.sp);
    }
    if (rc == 0)
        doc->root = r.stack[0];
    free(r.stack);
    free(r.memo_vals);
    u64map_free(&r.memo);
    if (rc != 0)
        pkr_free(doc);
    return rc;
}

void pkr_free(struct pkdoc *doc)
{
    for (size_t i = 0; i < doc->ncontainers; i++)
        free(doc->containers[i]->u.items);
    free(doc->containers);
    while (doc->chunks) {
        struct pkr_chunk *c = doc->chunks;
        doc->chunks = c->next;
        free(c);
    }
    memset(doc, 0, sizeof *doc);
}

int pkv_is(const struct pkv *v, const char *s)
{
    size_t k = strlen(s);
    return v && (v->type == PKV_STR || v->type == PKV_BYTES) && v->n == k && memcmp(v->u.s, s, k) == 0;
}

const struct pkv *pkv_get(const struct pkv *d, const char *key)
{
    if (!d || d->type != PKV_DICT)
        return NULL;
    for (uint32_t i = 0; i < d->n; i++)
        if (pkv_is(d->u.items[2 * i], key))
            return d->u.items[2 * i + 1];
    return NULL;
}

int64_t pkv_int(const struct pkv *v, int64_t def)
{
    if (v && (v->type == PKV_INT || v->type == PKV_BOOL))
        return v->u.i;
    if (v && v->type == PKV_FLOAT && v->u.f > -9.2e18 && v->u.f < 9.2e18)
        return (int64_t)v->u.f;
    return def;
}

double pkv_num(const struct pkv *v, double def)
{
    if (v && v->type == PKV_FLOAT)
        return v->u.f;
    if (v && (v->type == PKV_INT || v->type == PKV_BOOL))
        return (double)v->u.i;
    return def;
}

size_t pkv_items(const struct pkv *v, struct pkv *const **items)
{
    if (!v || (v->type != PKV_LIST && v->type != PKV_TUPLE) || !v->n) {
        *items = NULL;
        return 0;
    }
    *items = v->u.items;
    return v->n;
}
