/* The culeak stream: one format for the socket and the recording file.
 * Normative description: man/culeak-stream.5. Summary:
 *
 *   stream  := MAGIC record*
 *   MAGIC   := "\x89CULEAK\n"                      (8 bytes)
 *   record  := type:u8 length:uvarint payload[length]
 *
 * Integers in payloads are LEB128 unsigned varints ("u"), zig-zag varints ("z"),
 * strings are u(length) + bytes (no NUL). A reader skips records of a type it does
 * not know by their length, and ignores payload bytes past the fields it knows
 * (fields are only ever appended). The first record of a stream is HELLO.
 *
 * Direction shim -> console:
 *   HELLO   u version, u pid, u ppid, u realtime_ns, u monotonic_ns (at start),
 *           s host, s exe, u argc, s argv[argc], u nenv, s env[nenv] ("KEY=VALUE",
 *           rank variables only), u depth_limit, u flags (bit0: output is a file,
 *           bit1: frees carry stack 0, device -1 and context 0, bit2: attached to
 *           the running process; its "before-attach" EVENTs were live then)
 *   MODULES u generation, u count, count * { s path, u base, u nseg, nseg * { u vaddr, u memsz } }
 *           a complete map of loaded modules; later MODULES records add to what the
 *           reader knows (unloaded modules stay resolvable for old addresses).
 *   FRAME   u id, u parent, u ip     -- trace-tree node: (parent, ip) interned to id.
 *           ids start at 1 and grow by one; 0 is the root (empty stack). ip is the
 *           address of the call instruction (return address - 1).
 *   EVENT   u seq, u dt_ns (since previous EVENT/MARK time in this stream, first: since
 *           HELLO's monotonic_ns), u tid, u op, u api, u kind, z device, u ctx,
 *           u size, u addr, u aux (stream / handle / pool, 0 if none; a before-attach
 *           segment's caching allocator, CULEAK_POOL_*), u result,
 *           u stack (leaf FRAME id), u flags (bit0 HELD: the shim waits for RELEASE)
 *   MARK    u seq, u dt_ns, u tid, s label, u flags (bit0: range push, bit1: range pop)
 *           [z device, u free bytes, u total bytes]  -- the current device's memory
 *           (cuMemGetInfo) when the shim could ask for it; absent otherwise
 *   EXIT    u seq, u dt_ns, u reason (0 exit/destructor)
 *   FREE    u seq_step, u dt_ns, u tid (0: the previous EVENT's, ALLOC's or FREE's), u api, u kind,
 *           z addr_step, u size, [u aux, u result]  -- an EVENT of a free with stack 0,
 *           device -1, context 0 and flags 0 (aux and result 0 when absent); its seq is the
 *           previous EVENT's, ALLOC's, FREE's, MARK's or EXIT's plus seq_step (> 0); its
 *           address the previous FREE's or ALLOC's (0 for the first) plus addr_step, modulo
 *           2^64 (format version 2: u addr, the address itself)
 *   ALLOC   u seq_step, u dt_ns, u tid (0: as FREE's), u api, u kind, z device,
 *           u ctx_x (0: the previous EVENT's or ALLOC's context, else context + 1),
 *           u size, z addr_step, u stack, [u aux, [u result, [u flags]]]  -- an EVENT of op 1
 *           (absent fields 0); seq and address as FREE's
 *   FREE_AGAIN   u dt_ns, z addr_step -- a FREE whose seq step is 1, whose thread is the
 *           previous EVENT's, ALLOC's or FREE's, and whose api, kind and size are the previous
 *           FREE's (aux and result 0); its address as FREE's (format version 4)
 *   ALLOC_AGAIN  u dt_ns, z addr_step -- an ALLOC whose seq step is 1, whose thread is the
 *           previous EVENT's, ALLOC's or FREE's, whose context the previous EVENT's or
 *           ALLOC's, and whose api, kind, device, size and stack are the previous ALLOC's
 *           (aux, result and flags 0); its address as ALLOC's (format version 4)
 *   NODE    u back, z ip_step         -- a FRAME: id is the previous FRAME's or NODE's plus
 *           one (1 for the first), parent is id - back (0 < back <= id), ip the previous
 *           FRAME's or NODE's ip (0 for the first) plus ip_step, modulo 2^64
 *   NOTE    s text                    -- a message from the shim for the user
 *   HOLDER  u addr, s words           -- who holds the live block that contains addr: the
 *           chain of Python references from a root to the object whose data is there
 *   PYFRAME u id, s file, s function, u line, u firstlineno
 *           -- a Python frame (CPython code object + instruction), sent once before the
 *           first FRAME that uses it. A FRAME whose ip has bit 63 set (CULEAK_PYFRAME_TAG)
 *           is that Python frame: ip & ~CULEAK_PYFRAME_TAG is its id (ids start at 1).
 *           function is the qualified name (3.11+) or the name (3.10); line 0: unknown.
 *           [u flags] bit0 BACKWARD: not code but a marker; the Python frames outside it
 *           in a stack are another thread's, inside autograd's backward (absent: 0)
 *
 * Direction console -> shim (same framing, no MAGIC):
 *   WATCH      u count, count * u stack  -- hold events whose stack is one of these
 *   UNWATCH    (empty)                   -- forget every watched stack
 *   HOLD_NEW   u on                      -- hold events whose stack is new to the console
 *   HOLD_ALL   u on                      -- hold every allocation (`step`)
 *   RELEASE    u seq                     -- let the held event `seq` return to the program
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
    /* console -> shim */
    CULEAK_CMD_WATCH = 64,
    CULEAK_CMD_UNWATCH = 65,
    CULEAK_CMD_HOLD_NEW = 66,
    CULEAK_CMD_HOLD_ALL = 67,
    CULEAK_CMD_RELEASE = 68,
};

#define CULEAK_HELLO_FILE 1u       /* the stream is a recording file */
#define CULEAK_HELLO_BARE_FREES 2u /* frees carry no stack, device or context */
#define CULEAK_HELLO_ATTACHED 4u   /* culeak attached to the running process (culeak attach) */
#define CULEAK_EVENT_HELD 1u
#define CULEAK_PYFRAME_BACKWARD 1u /* PYFRAME flags: the autograd backward marker */
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

uint64_t culeak_get_u(struct culeak_cursor *c);
int64_t culeak_get_z(struct culeak_cursor *c);
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
