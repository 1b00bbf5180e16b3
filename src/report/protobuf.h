/* A protocol buffer writer, just what profile.proto needs: varint and length-delimited
 * fields into a growing buffer (a nested message is written into its own buffer, then
 * added as bytes), and the gzip stream pprof reads (zlib). */
#ifndef CULEAK_PROTOBUF_H
#define CULEAK_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pb {
    uint8_t *p;
    size_t n, cap;
    int oom; /* a write could not grow the buffer: the message is incomplete */
};

void pb_free(struct pb *b);
void pb_clear(struct pb *b); /* empty again, its memory kept */
/* Field number field, wire type varint: an unsigned value, or a signed one as its 64-bit
 * two's complement (protobuf's int64). Zero values are written too. */
void pb_uint(struct pb *b, unsigned field, uint64_t v);
void pb_int(struct pb *b, unsigned field, int64_t v);
/* Field number field, wire type length-delimited: a string, bytes or a nested message. */
void pb_bytes(struct pb *b, unsigned field, const void *data, size_t n);
static inline void pb_message(struct pb *b, unsigned field, const struct pb *m) { pb_bytes(b, field, m->p, m->n); }
/* Bytes already encoded as fields (a set of fields kept to repeat). */
void pb_raw(struct pb *b, const void *data, size_t n);
/* A packed repeated varint field (proto3's default for repeated scalars). */
void pb_packed(struct pb *b, unsigned field, const uint64_t *v, size_t n);
/* Writes b's bytes to f as one gzip member. 0, or -1 (out of memory, a write error). */
int pb_write_gzip(const struct pb *b, FILE *f);

#endif
