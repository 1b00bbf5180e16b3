/* A protocol buffer writer (protobuf.h). */
#include "protobuf.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

void pb_free(struct pb *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

void pb_clear(struct pb *b)
{
    b->n = 0;
}

static int pb_room(struct pb *b, size_t more)
{
    if (b->oom)
        return -1;
    if (b->n + more <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + more)
        cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

static void pb_varint(struct pb *b, uint64_t v)
{
    if (pb_room(b, 10) != 0)
        return;
    while (v >= 0x80) {
        b->p[b->n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b->p[b->n++] = (uint8_t)v;
}

void pb_uint(struct pb *b, unsigned field, uint64_t v)
{
    pb_varint(b, (uint64_t)field << 3 | WIRE_VARINT);
    pb_varint(b, v);
}

void pb_int(struct pb *b, unsigned field, int64_t v)
{
    pb_uint(b, field, (uint64_t)v);
}

void pb_raw(struct pb *b, const void *data, size_t n)
{
    if (n && pb_room(b, n) == 0) {
        memcpy(b->p + b->n, data, n);
        b->n += n;
    }
}

void pb_bytes(struct pb *b, unsigned field, const void *data, size_t n)
{
    pb_varint(b, (uint64_t)field << 3 | WIRE_LEN);
    pb_varint(b, n);
    pb_raw(b, data, n);
}

void pb_packed(struct pb *b, unsigned field, const uint64_t *v, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        for (uint64_t x = v[i];; x >>= 7) {
            len++;
            if (x < 0x80)
                break;
        }
    pb_varint(b, (uint64_t)field << 3 | WIRE_LEN);
    pb_varint(b, len);
    for (size_t i = 0; i < n; i++)
        pb_varint(b, v[i]);
}

int pb_write_gzip(const struct pb *b, FILE *f)
{
    if (b->oom || b->n > UINT32_MAX) /* zlib's one call takes at most 4 GiB */
        return -1;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16 /* gzip */, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    unsigned char out[65536];
    z.next_in = b->p;
    z.avail_in = (uInt)b->n;
    int rc, bad = 0;
    do {
        z.next_out = out;
        z.avail_out = sizeof out;
        rc = deflate(&z, Z_FINISH);
        size_t k = sizeof out - z.avail_out;
        bad |= rc == Z_STREAM_ERROR || (k && fwrite(out, 1, k, f) != k);
    } while (rc == Z_OK && !bad);
    deflateEnd(&z);
    return bad || rc != Z_STREAM_END ? -1 : 0;
}
