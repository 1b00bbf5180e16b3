/* Incremental decoder of the culeak stream (wire.h): feed it bytes as they arrive from a
 * ring or a file, it calls back once per record. Strings point into the decoder's
 * buffer and are valid during the callback only. */
#ifndef CULEAK_DECODE_H
#define CULEAK_DECODE_H

#include <stddef.h>
#include <stdint.h>

struct culeak_str {
    const char *p;
    size_t n;
};

struct culeak_hello {
    uint64_t version, pid, ppid, realtime_ns, monotonic_ns, depth_limit, flags;
    struct culeak_str host, exe;
    size_t argc, nenv;
    const struct culeak_str *argv, *env;
};

struct culeak_segment {
    uint64_t vaddr, memsz;
};

struct culeak_module {
    struct culeak_str path;
    uint64_t base;
    size_t nseg;
    const struct culeak_segment *seg;
};

struct culeak_modules {
    uint64_t generation;
    size_t count;
    const struct culeak_module *mod;
};

struct culeak_event {
    uint64_t seq, t_ns; /* t_ns: CLOCK_MONOTONIC of the traced process */
    uint64_t tid;
    uint32_t op, api, kind;
    int32_t device;
    uint64_t ctx, size, addr, aux, result, stack, flags;
};

struct culeak_mark {
    uint64_t seq, t_ns, tid, flags;
    struct culeak_str label;
    /* the current device's memory when the mark was made (cuMemGetInfo); mem_total 0:
     * not carried (no context, a range pop, or an older shim) */
    int32_t mem_device;
    uint64_t mem_free, mem_total;
};

/* A rolled recording's part boundary (ROLL): which is CULEAK_ROLL_NEXT at the end of a
 * part, CULEAK_ROLL_PREVIOUS at the start of the next; both carry the same offset. */
struct culeak_roll {
    uint64_t which, part, offset;
    struct culeak_str name;
};

struct culeak_exit {
    uint64_t seq, t_ns, reason;
};

struct culeak_pyframe {
    uint64_t id, line, firstlineno;
    struct culeak_str file, function;
    uint64_t flags; /* CULEAK_PYFRAME_BACKWARD: the autograd backward marker */
};

/* CHURN (an aggregated recording): allocations made and freed between two flush points,
 * per call site, and the high-water marks reached meanwhile (culeak-stream(5)). */
struct culeak_churn_unit {
    uint64_t stack;            /* the allocations' stack leaf */
    uint32_t kind;
    int32_t device;
    uint64_t count, bytes;     /* allocated and freed again */
    uint64_t peak;             /* the unit's (stack and kind, any device) live bytes at their
                                * highest; 0: not higher than told */
    uint64_t thread;           /* 0: nothing new; else (tid << 1 | several threads) + 1 */
};
struct culeak_churn_peak {
    int all_devices;           /* the process's counter over all devices, else device's */
    int32_t device;
    uint32_t slot;             /* a culeak_kind, or CULEAK_KIND_COUNT: device memory (on the
                                * wire CULEAK_CHURN_DEVICE_MEMORY) */
    uint64_t bytes, t_ns, seq; /* the high-water mark and when it was reached */
};
/* A unit's live bytes and count at the process's device-memory peak, when that moved. */
struct culeak_churn_at_peak {
    uint64_t stack;
    uint32_t kind;
    uint64_t bytes, count;
};
struct culeak_churn {
    uint64_t interval_ns;      /* the recorder's interval */
    uint64_t t_first, t_last;  /* the first allocation and the last free folded (0: none) */
    size_t nunits, npeaks;
    const struct culeak_churn_unit *unit;
    const struct culeak_churn_peak *peak;
    /* the device-memory peak moved: every unit listed held this at it, every other one
     * what it holds now */
    int peak_moved;
    size_t nat_peak;
    const struct culeak_churn_at_peak *at_peak;
};

/* Each callback returns 0 to go on, non-zero to stop decoding (feed returns it). */
struct culeak_sink {
    void *ctx;
    int (*hello)(void *ctx, const struct culeak_hello *h);
    int (*modules)(void *ctx, const struct culeak_modules *m);
    int (*frame)(void *ctx, uint64_t id, uint64_t parent, uint64_t ip);
    int (*event)(void *ctx, const struct culeak_event *e);
    int (*mark)(void *ctx, const struct culeak_mark *m);
    int (*exit)(void *ctx, const struct culeak_exit *x);
    int (*note)(void *ctx, struct culeak_str text);
    int (*pyframe)(void *ctx, const struct culeak_pyframe *f);
    /* console side: commands (types >= 64) arrive here raw; NULL skips them */
    int (*command)(void *ctx, uint8_t type, const uint8_t *payload, size_t len);
    /* events the process dropped while its reader was stopped (a gap in the stream) */
    int (*lost)(void *ctx, uint64_t count, uint64_t first_seq, uint64_t last_seq);
    /* who holds the live block that contains addr (HOLDER) */
    int (*holder)(void *ctx, uint64_t addr, struct culeak_str words);
    /* a rolled recording's part ends here, or starts (ROLL) */
    int (*roll)(void *ctx, const struct culeak_roll *r);
    /* allocations folded by an aggregated recording (CHURN) */
    int (*churn)(void *ctx, const struct culeak_churn *c);
};

struct culeak_decoder {
    struct culeak_sink sink;
    uint8_t *buf;           /* bytes of an incomplete record carried between feeds */
    size_t len, cap;
    uint64_t offset;        /* stream offset of buf[0] */
    uint64_t records;       /* complete records decoded */
    uint64_t t_last;
    uint64_t seq_last;      /* the seq of the last EVENT, FREE, MARK or EXIT (FREE steps from it) */
    uint64_t tid_last;      /* the tid of the last EVENT, ALLOC or FREE (their 0 is it) */
    uint64_t ctx_last;      /* the context of the last EVENT or ALLOC (an ALLOC's 0 is it) */
    uint64_t node_id, node_ip; /* the last FRAME or NODE (a NODE steps from it) */
    uint64_t addr_last;     /* the address of the last FREE or ALLOC (theirs step from it) */
    struct culeak_event free_last, alloc_last; /* the last FREE and ALLOC: their ..._AGAIN repeat them */
    uint64_t version;       /* HELLO's format version */
    int expect_magic;       /* streams begin with MAGIC; command channels do not */
    int seen_hello;
    char error[256];        /* why decoding stopped, with the byte offset */
    void *scratch;          /* arrays handed to callbacks (argv, modules) */
    size_t scratch_cap;
};

void culeak_decoder_init(struct culeak_decoder *d, const struct culeak_sink *sink, int expect_magic);
void culeak_decoder_free(struct culeak_decoder *d);
/* 0: all bytes taken; -1: corrupt stream (d->error says where); >0: a callback's stop value. */
int culeak_decoder_feed(struct culeak_decoder *d, const void *bytes, size_t len);
/* At end of input: 0 if the stream ended on a record boundary, 1 if it was cut off
 * mid-record (d->error says at which offset). */
int culeak_decoder_finish(struct culeak_decoder *d);

/* Reads a whole recording file through the decoder. Returns 0 on a clean end, 1 when
 * the file was cut off (everything before the cut was delivered), -1 on an error
 * (unreadable, corrupt, newer format); d->error holds the message. */
int culeak_decode_file(const char *path, const struct culeak_sink *sink, char *err, size_t errlen);

#endif
