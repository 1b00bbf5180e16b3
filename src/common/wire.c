/* Varint and record framing primitives of the culeak stream (see wire.h). */
#include "wire.h"

#include <string.h>

size_t culeak_put_s(uint8_t *p, const char *s, size_t len)
{
    size_t n = culeak_put_u(p, len);
    memcpy(p + n, s, len);
    return n + len;
}

size_t culeak_rec_finish(uint8_t *rec, uint8_t type, size_t payload_len)
{
    /* The payload sits at rec + CULEAK_REC_HEADROOM; move the header flush against it
     * so the record is contiguous, starting at the returned offset's complement. */
    uint8_t hdr[CULEAK_REC_HEADROOM];
    hdr[0] = type;
    size_t hl = 1 + culeak_put_u(hdr + 1, payload_len);
    memmove(rec + hl, rec + CULEAK_REC_HEADROOM, payload_len);
    memcpy(rec, hdr, hl);
    return hl + payload_len;
}

uint64_t culeak_get_u_long(struct culeak_cursor *c)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (c->p >= c->end) {
            c->bad = 1;
            return 0;
        }
        uint8_t b = *c->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    c->bad = 1;
    return 0;
}

const char *culeak_get_s(struct culeak_cursor *c, size_t *len)
{
    uint64_t n = culeak_get_u(c);
    if (c->bad || n > (uint64_t)(c->end - c->p)) {
        c->bad = 1;
        *len = 0;
        return NULL;
    }
    const char *s = (const char *)c->p;
    c->p += n;
    *len = (size_t)n;
    return s;
}

long culeak_next_record(const uint8_t *buf, size_t len, uint8_t *type,
                        const uint8_t **payload, size_t *payload_len)
{
    if (len < 2)
        return 0;
    uint64_t plen = 0;
    size_t i = 1;
    for (unsigned shift = 0;; shift += 7) {
        if (i >= len)
            return 0;
        if (shift > 28)
            return -1;
        uint8_t b = buf[i++];
        plen |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
    }
    if (plen > CULEAK_MAX_RECORD)
        return -1;
    if (len - i < plen)
        return 0;
    *type = buf[0];
    *payload = buf + i;
    *payload_len = (size_t)plen;
    return (long)(i + plen);
}
