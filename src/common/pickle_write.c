/* The pickle writer (pickle_write.h): opcodes as Python's Lib/pickletools.py names them. */
#include "pickle_write.h"

#include <string.h>

static void put(struct pkw *w, const void *p, size_t n)
{
    fwrite(p, 1, n, w->f);
    w->bytes += n;
}

static void op(struct pkw *w, uint8_t c) { put(w, &c, 1); }

static void le32(struct pkw *w, uint8_t opcode, uint32_t v)
{
    uint8_t b[5] = {opcode, (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(w, b, 5);
}

/* Every value starts here: a list's items go in batches of PKW_BATCH. */
static void item(struct pkw *w)
{
    if (!w->depth || !w->open[w->depth - 1].list)
        return;
    if (w->open[w->depth - 1].items == PKW_BATCH) {
        put(w, "e(", 2); /* APPENDS, MARK */
        w->open[w->depth - 1].items = 0;
    }
    w->open[w->depth - 1].items++;
}

static void open_container(struct pkw *w, const char *ops, size_t n, int list)
{
    item(w);
    put(w, ops, n);
    if (w->depth == PKW_DEPTH) {
        w->overflow = 1;
        return;
    }
    w->open[w->depth].list = (char)list;
    w->open[w->depth++].items = 0;
}

static void close_container(struct pkw *w, uint8_t c)
{
    op(w, c);
    if (w->depth)
        w->depth--;
}

void pkw_begin(struct pkw *w, FILE *f)
{
    memset(w, 0, sizeof *w);
    w->f = f;
    put(w, "\x80\x02", 2);
}

void pkw_end(struct pkw *w) { op(w, '.'); }
void pkw_dict(struct pkw *w) { open_container(w, "}(", 2, 0); }  /* EMPTY_DICT MARK */
void pkw_dict_end(struct pkw *w) { close_container(w, 'u'); }     /* SETITEMS */
void pkw_list(struct pkw *w) { open_container(w, "](", 2, 1); }  /* EMPTY_LIST MARK */
void pkw_list_end(struct pkw *w) { close_container(w, 'e'); }     /* APPENDS */
void pkw_tuple(struct pkw *w) { open_container(w, "(", 1, 0); }  /* MARK */
void pkw_tuple_end(struct pkw *w) { close_container(w, 't'); }    /* TUPLE */

void pkw_none(struct pkw *w)
{
    item(w);
    op(w, 'N');
}

void pkw_bool(struct pkw *w, int v)
{
    item(w);
    op(w, v ? 0x88 : 0x89); /* NEWTRUE, NEWFALSE */
}

/* The length of the UTF-8 sequence at s (at most n bytes), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t len = s[0] < 0x80 ? 1
                 : (s[0] & 0xe0) == 0xc0 ? 2
                 : (s[0] & 0xf0) == 0xe0 ? 3
                 : (s[0] & 0xf8) == 0xf0 ? 4
                                         : 0;
    if (len == 0 || len > n || (len == 2 && s[0] < 0xc2) || (len == 4 && s[0] > 0xf4))
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if (len == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0))) /* overlong, surrogate */
        return 0;
    if (len == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
        return 0;
    return len;
}

void pkw_strn(struct pkw *w, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t out = 0, bad = 0;
    for (size_t i = 0, k; i < n; i += k ? k : 1) {
        k = utf8_len(u + i, n - i);
        out += k ? k : 3;
        bad += !k;
    }
    item(w);
    le32(w, 'X', (uint32_t)out); /* BINUNICODE */
    if (!bad) {
        put(w, s, n);
        return;
    }
    for (size_t i = 0, k; i < n; i += k ? k : 1) {
        k = utf8_len(u + i, n - i);
        if (k)
            put(w, u + i, k);
        else
            put(w, "\xef\xbf\xbd", 3);
    }
}

void pkw_str(struct pkw *w, const char *s)
{
    if (!s)
        pkw_none(w);
    else
        pkw_strn(w, s, strlen(s));
}

void pkw_key(struct pkw *w, const char *s)
{
    for (size_t i = 0; i < w->nkeys; i++)
        if (w->keys[i].s == s) {
            pkw_get(w, w->keys[i].memo);
            return;
        }
    pkw_str(w, s);
    uint32_t m = pkw_put(w);
    if (w->nkeys < PKW_KEYS) {
        w->keys[w->nkeys].s = s;
        w->keys[w->nkeys++].memo = m;
    }
}

/* LONG1 of a positive v: n little-endian bytes of two's complement. */
static void long1(struct pkw *w, uint64_t v)
{
    uint8_t b[11] = {0x8a, 0};
    size_t n = 0;
    do {
        b[2 + n++] = (uint8_t)v;
        v >>= 8;
    } while (v != 0);
    /* the sign is the top bit of the last byte: a zero byte more when it is set */
    if (b[1 + n] & 0x80)
        b[2 + n++] = 0;
    b[1] = (uint8_t)n;
    put(w, b, 2 + n);
}

void pkw_uint(struct pkw *w, uint64_t v)
{
    item(w);
    if (v < 0x100) {
        uint8_t b[2] = {'K', (uint8_t)v}; /* BININT1 */
        put(w, b, 2);
    } else if (v < 0x10000) {
        uint8_t b[3] = {'M', (uint8_t)v, (uint8_t)(v >> 8)}; /* BININT2 */
        put(w, b, 3);
    } else if (v <= INT32_MAX) {
        le32(w, 'J', (uint32_t)v); /* BININT */
    } else {
        long1(w, v);
    }
}

void pkw_int(struct pkw *w, int64_t v)
{
    if (v >= 0) {
        pkw_uint(w, (uint64_t)v);
        return;
    }
    item(w);
    if (v >= INT32_MIN)
        le32(w, 'J', (uint32_t)v);
    else {
        uint8_t b[10] = {0x8a, 8};
        for (int i = 0; i < 8; i++)
            b[2 + i] = (uint8_t)((uint64_t)v >> (8 * i));
        put(w, b, 10);
    }
}

void pkw_float(struct pkw *w, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    item(w);
    uint8_t b[9] = {'G'}; /* BINFLOAT: big-endian */
    for (int i = 0; i < 8; i++)
        b[1 + i] = (uint8_t)(bits >> (56 - 8 * i));
    put(w, b, 9);
}

uint32_t pkw_put(struct pkw *w)
{
    uint32_t m = w->memo++;
    if (m < 0x100) {
        uint8_t b[2] = {'q', (uint8_t)m}; /* BINPUT */
        put(w, b, 2);
    } else {
        le32(w, 'r', m); /* LONG_BINPUT */
    }
    return m;
}

void pkw_get(struct pkw *w, uint32_t index)
{
    item(w);
    if (index < 0x100) {
        uint8_t b[2] = {'h', (uint8_t)index}; /* BINGET */
        put(w, b, 2);
    } else {
        le32(w, 'j', index); /* LONG_BINGET */
    }
}
