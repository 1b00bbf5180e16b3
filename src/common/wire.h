/* The culeak stream's framing, varints and record numbers. Its normative description,
 * every record's fields included, is culeak-stream(5) (man/culeak-stream.5); the
 * records are written by wire_encode.c (and the shim's HELLO and MODULES) and read by
 * decode.c.
 *
 *   stream := MAGIC record*        record := type:u8 length:uvarint payload[length]
 *
 * A reader skips a record of a type it does not know by its length and ignores payload
 * bytes past the fields it knows (fields are only ever appended).
 *
 *   record       what it says                                  steps from the previous
 *   HELLO        the process, its command line, the format     -
 *   MODULES      the loaded modules and their segments         -
 *   FRAME, NODE  a node of the trace tree (call site)          NODE: id, parent, ip
 *   EVENT        an allocation, free or other API event        -
 *   ALLOC, FREE  an allocation, a bare free, in few bytes      seq, time, tid, ctx, addr
 *   ..._AGAIN    an ALLOC or FREE like the previous one        all but time and address
 *   MARK         a mark or an NVTX range (device memory)       -
 *   EXIT         how the process ended                         -
 *   NOTE         a message from the shim for the user          -
 *   HOLDER       who holds a live block: Python references     -
 *   PYFRAME      a Python frame a FRAME's tagged ip names      -
 *   LOST         events dropped while the reader was stopped   -
 *   ROLL         where a rolled recording's part ends or starts  -
 *   CHURN        an aggregated recording's folded allocations    -
 *                (per site: made and freed between flush points)
 *   WATCH ... RELEASE  the console's commands to the shim (the ring's command area)
 */
#ifndef CULEAK_WIRE_H
#define CULEAK_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define CULEAK_MAGIC "\x89" "CULEAK\n"
#define CULEAK_MAGIC_LEN 8
#define CULEAK_FORMAT_VERSION 4
/* A record longer than this is corrupt (the largest, MODULES, stays far below). */
#define CULEAK_MAX_RECORD (16u << 20)
/* A before-attach segment's auxiliary value: the caching allocator whose it is. */
#define CULEAK_POOL_TORCH 1

enum culeak_record {
    CULEAK_REC_HELLO = 1,
    CULEAK_REC_MODULES = 2,
    CULEAK_REC_FRAME = 3,
    CULEAK_REC_EVENT = 4,
    CULEAK_REC_MARK = 5,
    CULEAK_REC_EXIT = 6,
    CULEAK_REC_NOTE = 7,
    CULEAK_REC_PYFRAME = 8,
    /* 9: PAD, in a ring only (ring.h) */
    CULEAK_REC_LOST = 10, /* events dropped while the reader was stopped */
    CULEAK_REC_FREE = 11, /* an EVENT of a bare free, in few bytes */
    CULEAK_REC_NODE = 12, /* a FRAME, in few bytes */
    CULEAK_REC_ALLOC = 13, /* an EVENT of an allocation, in few bytes */
    CULEAK_REC_FREE_AGAIN = 14,  /* a FREE like the previous one, but for its time and address */
    CULEAK_REC_ALLOC_AGAIN = 15, /* an ALLOC like the previous one, but for its time and address */
    CULEAK_REC_HOLDER = 16,      /* who holds a live block: a chain of Python references */
    CULEAK_REC_ROLL = 24,        /* a rolled recording's part: the next part's name, or the previous's */
    CULEAK_REC_CHURN = 17,       /* aggregated: allocations made and freed since the last, by site */
    /* console -> shim */
    CULEAK_CMD_WATCH = 64,
    CULEAK_CMD_UNWATCH = 65,
    CULEAK_CMD_HOLD_NEW = 66,
    CULEAK_CMD_HOLD_ALL = 67,
    CULEAK_CMD_RELEASE = 68,
    CULEAK_CMD_HOLDERS = 69,
};

/* A CHURN high-water mark's counter of device memory (every other counter is a kind). */
#define CULEAK_CHURN_DEVICE_MEMORY 255u
#define CULEAK_HELLO_FILE 1u       /* the stream is a recording file */
#define CULEAK_HELLO_BARE_FREES 2u /* frees carry no stack, device or context */
#define CULEAK_HELLO_ATTACHED 4u   /* culeak attached to the running process (culeak attach) */
#define CULEAK_EVENT_HELD 1u
#define CULEAK_PYFRAME_BACKWARD 1u /* PYFRAME flags: the autograd backward marker */
/* ROLL's which: the record ends its part (the stream goes on in the next), or starts it */
#define CULEAK_ROLL_NEXT 0u
#define CULEAK_ROLL_PREVIOUS 1u
#define CULEAK_MARK_PUSH 1u
#define CULEAK_MARK_POP 2u
/* EXIT reasons: how the process ended */
#define CULEAK_EXIT_NORMAL 0u  /* exit(), return from main: destructors ran */
#define CULEAK_EXIT_QUICK 1u   /* _exit(), _Exit() (os._exit) */
#define CULEAK_EXIT_EXEC 2u    /* replaced by exec */
#define CULEAK_EXIT_SIGNAL 3u  /* a fatal signal */
/* FRAME ips with this bit set name a PYFRAME (native user-space addresses never have it). */
#define CULEAK_PYFRAME_TAG (UINT64_C(1) << 63)

/* ---- encoding: append to a caller-owned buffer; no allocation, no libc beyond memcpy ---- */

/* Worst case sizes, for reserving room before encoding a record. */
#define CULEAK_UVARINT_MAX 10

static inline size_t culeak_put_u(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static inline uint64_t culeak_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t culeak_unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

static inline size_t culeak_put_z(uint8_t *p, int64_t v) { return culeak_put_u(p, culeak_zigzag(v)); }

size_t culeak_put_s(uint8_t *p, const char *s, size_t len);

/* A record under construction: the payload is built after a gap for the header,
 * then culeak_rec_finish() writes type+length in front and returns the whole size. */
#define CULEAK_REC_HEADROOM (1 + 5)
size_t culeak_rec_finish(uint8_t *rec, uint8_t type, size_t payload_len);

/* The same for records that are nearly always shorter than 128 bytes (events, frames):
 * the payload is built after CULEAK_REC_SHORT bytes, where a one-byte length fits with
 * no move; a longer payload moves forward (room for CULEAK_REC_HEADROOM was kept). */
#define CULEAK_REC_SHORT 2
static inline size_t culeak_rec_finish_short(uint8_t *rec, uint8_t type, size_t payload_len)
{
    if (payload_len < 0x80) {
        rec[0] = type;
        rec[1] = (uint8_t)payload_len;
        return CULEAK_REC_SHORT + payload_len;
    }
    uint8_t hdr[CULEAK_REC_HEADROOM];
    hdr[0] = type;
    size_t hl = 1 + culeak_put_u(hdr + 1, payload_len);
    for (size_t i = payload_len; i-- > 0;) /* forward by hl - 2: from the end */
        rec[hl + i] = rec[CULEAK_REC_SHORT + i];
    for (size_t i = 0; i < hl; i++)
        rec[i] = hdr[i];
    return hl + payload_len;
}

/* ---- decoding: a cursor over one record's payload ---- */

struct culeak_cursor {
    const uint8_t *p, *end;
    int bad;  /* set once a read ran past the end or a varint was overlong */
};

/* Most varints of a stream are one byte: that case is inline, the rest out of line. */
uint64_t culeak_get_u_long(struct culeak_cursor *c);
static inline uint64_t culeak_get_u(struct culeak_cursor *c)
{
    if (c->p < c->end && *c->p < 0x80)
        return *c->p++;
    return culeak_get_u_long(c);
}
static inline int64_t culeak_get_z(struct culeak_cursor *c) { return culeak_unzigzag(culeak_get_u(c)); }
/* Points into the payload; *len gets the length. Returns NULL (and sets bad) on error. */
const char *culeak_get_s(struct culeak_cursor *c, size_t *len);
static inline int culeak_cursor_more(const struct culeak_cursor *c) { return !c->bad && c->p < c->end; }

/* Splits the next record off buf[0..len). Returns
 *   > 0  bytes consumed (type/payload set),
 *     0  incomplete: need more bytes,
 *    -1  corrupt (length beyond CULEAK_MAX_RECORD or an overlong varint). */
long culeak_next_record(const uint8_t *buf, size_t len, uint8_t *type,
                        const uint8_t **payload, size_t *payload_len);

#endif
