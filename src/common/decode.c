/* Incremental decoder of the culeak stream: framing, magic, and per-record fields. */
#include "decode.h"
#include "wire.h"
#include "apis.h"
#include "recording_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void culeak_decoder_init(struct culeak_decoder *d, const struct culeak_sink *sink, int expect_magic)
{
    memset(d, 0, sizeof *d);
    d->sink = *sink;
    d->expect_magic = expect_magic;
}

void culeak_decoder_free(struct culeak_decoder *d)
{
    free(d->buf);
    free(d->scratch);
    d->buf = d->scratch = NULL;
}

static int fail(struct culeak_decoder *d, uint64_t at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char what[160];
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(d->error, sizeof d->error, "corrupt stream at offset %llu: %s", (unsigned long long)at, what);
    return -1;
}

/* Scratch space for the arrays a record decodes into; grows, never shrinks. */
static void *scratch(struct culeak_decoder *d, size_t bytes)
{
    if (bytes > d->scratch_cap) {
        void *p = realloc(d->scratch, bytes);
        if (!p)
            return NULL;
        d->scratch = p;
        d->scratch_cap = bytes;
    }
    return d->scratch;
}

static struct culeak_str get_str(struct culeak_cursor *c)
{
    struct culeak_str s;
    s.p = culeak_get_s(c, &s.n);
    return s;
}

static int decode_hello(struct culeak_decoder *d, struct culeak_cursor *c, uint64_t at)
{
    struct culeak_hello h = {0};
    h.version = culeak_get_u(c);
    if (!c->bad && h.version > CULEAK_FORMAT_VERSION) {
        snprintf(d->error, sizeof d->error,
                 "stream format version %llu is newer than this culeak reads (%d): upgrade culeak",
                 (unsigned long long)h.version, CULEAK_FORMAT_VERSION);
        return -1;
    }
    h.pid = culeak_get_u(c);
    h.ppid = culeak_get_u(c);
    h.realtime_ns = culeak_get_u(c);
    h.monotonic_ns = culeak_get_u(c);
    h.host = get_str(c);
    h.exe = get_str(c);
    uint64_t argc = culeak_get_u(c);
    /* every string takes at least one byte, so a count beyond the payload is corrupt */
    if (c->bad || argc > (uint64_t)(c->end - c->p))
        return fail(d, at, "bad HELLO argument count");
    struct culeak_str *strs = scratch(d, (argc + 64) * sizeof *strs);
    if (!strs)
        return fail(d, at, "out of memory");
    for (uint64_t i = 0; i < argc; i++)
        strs[i] = get_str(c);
    uint64_t nenv = culeak_get_u(c);
    if (c->bad || nenv > 64)
        return fail(d, at, "bad HELLO environment count");
    for (uint64_t i = 0; i < nenv; i++)
        strs[argc + i] = get_str(c);
    h.depth_limit = culeak_get_u(c);
    h.flags = culeak_get_u(c);
    if (c->bad)
        return fail(d, at, "truncated HELLO record");
    h.argc = argc;
    h.argv = strs;
    h.nenv = nenv;
    h.env = strs + argc;
    d->t_last = h.monotonic_ns;
    d->version = h.version;
    d->seen_hello = 1;
    return d->sink.hello ? d->sink.hello(d->sink.ctx, &h) : 0;
}

static int decode_modules(struct culeak_decoder *d, struct culeak_cursor *c, uint64_t at)
{
    struct culeak_modules m;
    m.generation = culeak_get_u(c);
    uint64_t count = culeak_get_u(c);
    size_t left = (size_t)(c->end - c->p);
    if (c->bad || count > left)
        return fail(d, at, "bad MODULES count");
    /* one allocation: modules first, then every segment; segments take >= 2 bytes each */
    size_t bytes = count * sizeof(struct culeak_module) + (left / 2 + 1) * sizeof(struct culeak_segment);
    struct culeak_module *mods = scratch(d, bytes);
    if (!mods)
        return fail(d, at, "out of memory");
    struct culeak_segment *seg = (struct culeak_segment *)(mods + count);
    for (uint64_t i = 0; i < count; i++) {
        mods[i].path = get_str(c);
        mods[i].base = culeak_get_u(c);
        uint64_t nseg = culeak_get_u(c);
        /* each segment takes two varints, at least 2 bytes: the scratch holds left/2 */
        if (c->bad || nseg > (size_t)(c->end - c->p) / 2)
            return fail(d, at, "bad MODULES segment count");
        mods[i].nseg = nseg;
        mods[i].seg = seg;
        for (uint64_t s = 0; s < nseg; s++, seg++) {
            seg->vaddr = culeak_get_u(c);
            seg->memsz = culeak_get_u(c);
        }
    }
    if (c->bad)
        return fail(d, at, "truncated MODULES record");
    m.count = count;
    m.mod = mods;
    return d->sink.modules ? d->sink.modules(d->sink.ctx, &m) : 0;
}

static int decode_event(struct culeak_decoder *d, struct culeak_cursor *c, uint64_t at)
{
    struct culeak_event e;
    e.seq = d->seq_last = culeak_get_u(c);
    d->t_last += culeak_get_u(c);
    e.t_ns = d->t_last;
    e.tid = d->tid_last = culeak_get_u(c);
    e.op = (uint32_t)culeak_get_u(c);
    e.api = (uint32_t)culeak_get_u(c);
    e.kind = (uint32_t)culeak_get_u(c);
    e.device = (int32_t)culeak_get_z(c);
    e.ctx = d->ctx_last = culeak_get_u(c);
    e.size = culeak_get_u(c);
    e.addr = culeak_get_u(c);
    e.aux = culeak_get_u(c);
    e.result = culeak_get_u(c);
    e.stack = culeak_get_u(c);
    e.flags = culeak_get_u(c);
    if (c->bad)
        return fail(d, at, "truncated EVENT record");
    return d->sink.event ? d->sink.event(d->sink.ctx, &e) : 0;
}

/* A FREE or an ALLOC (culeak-stream(5)): the EVENT it stands for. Both begin with the
 * seq's step from the previous timed record, the time since it, the thread (0: the
 * previous event's), API and kind. A FREE is a bare free: address and size (stack 0,
 * device -1, context 0). An ALLOC has its device, its context (0: the previous EVENT's or
 * ALLOC's, else the context plus one), size, address and stack. Both end with fields
 * absent when 0. */
/* A FREE's or ALLOC's address: a step from the previous one's (format version 2: itself). */
static uint64_t get_addr(struct culeak_decoder *d, struct culeak_cursor *c)
{
    if (d->version < 3)
        return d->addr_last = culeak_get_u(c);
    return d->addr_last += (uint64_t)culeak_get_z(c);
}

static int decode_compact(struct culeak_decoder *d, struct culeak_cursor *c, uint64_t at, int alloc)
{
    const char *name = alloc ? "ALLOC" : "FREE";
    struct culeak_event e = {.op = alloc ? CULEAK_OP_ALLOC : CULEAK_OP_FREE, .device = -1};
    uint64_t step = culeak_get_u(c);
    d->t_last += culeak_get_u(c);
    uint64_t tid = culeak_get_u(c);
    e.api = (uint32_t)culeak_get_u(c);
    e.kind = (uint32_t)culeak_get_u(c);
    int64_t dev = -1;
    uint64_t ctx = 1; /* a FREE's: context 0 */
    if (alloc) {
        dev = culeak_get_z(c);
        ctx = culeak_get_u(c);
        e.size = culeak_get_u(c);
        e.addr = get_addr(d, c);
        e.stack = culeak_get_u(c);
    } else {
        e.addr = get_addr(d, c);
        e.size = culeak_get_u(c);
    }
    e.aux = culeak_cursor_more(c) ? culeak_get_u(c) : 0;
    e.result = culeak_cursor_more(c) ? culeak_get_u(c) : 0;
    e.flags = alloc && culeak_cursor_more(c) ? culeak_get_u(c) : 0;
    if (c->bad)
        return fail(d, at, "truncated %s record", name);
    if (step == 0 || d->seq_last + step < d->seq_last)
        return fail(d, at, "the %s record's seq does not follow the previous record's", name);
    e.seq = d->seq_last += step;
    e.t_ns = d->t_last;
    e.tid = d->tid_last = tid ? tid : d->tid_last;
    e.device = dev < INT32_MIN || dev > INT32_MAX ? -1 : (int32_t)dev;
    if (alloc)
        e.ctx = d->ctx_last = ctx ? ctx - 1 : d->ctx_last;
    if (alloc)
        d->alloc_last = e;
    else
        d->free_last = e;
    return d->sink.event ? d->sink.event(d->sink.ctx, &e) : 0;
}

/* A FREE_AGAIN or ALLOC_AGAIN: the previous FREE or ALLOC (all 0 before the first) with
 * the next seq, its own time and address, the previous event's thread and context. */
static int decode_again(struct culeak_decoder *d, struct culeak_cursor *c, uint64_t at, int alloc)
{
    uint64_t dt = culeak_get_u(c);
    int64_t step = culeak_get_z(c);
    if (c->bad)
        return fail(d, at, "truncated %s_AGAIN record", alloc ? "ALLOC" : "FREE");
    if (d->version < 4)
        return fail(d, at, "%s_AGAIN record in a format version %llu stream", alloc ? "ALLOC" : "FREE",
                    (unsigned long long)d->version);
    if (d->seq_last + 1 == 0)
        return fail(d, at, "the %s_AGAIN record's seq does not follow the previous record's", alloc ? "ALLOC" : "FREE");
    struct culeak_event e = alloc ? d->alloc_last : d->free_last;
    e.op = alloc ? CULEAK_OP_ALLOC : CULEAK_OP_FREE;
    e.device = alloc ? e.device : -1;
    e.seq = ++d->seq_last;
    e.t_ns = d->t_last += dt;
    e.addr = d->addr_last += (uint64_t)step;
    e.tid = d->tid_last;
    e.ctx = alloc ? d->ctx_last : 0;
    e.aux = e.result = e.flags = 0;
    return d->sink.event ? d->sink.event(d->sink.ctx, &e) : 0;
}

/* A CHURN (culeak-stream(5)): units by ascending stack (each a step from the one before),
 * then the high-water marks. Counts beyond what the payload can hold, a step past 2^64, a
 * unit that says nothing or a peak of no counter are corrupt. */
static int decode_churn(struct culeak_decoder *d, struct culeak_cursor *c, uint64_t at)
{
    struct culeak_churn ch = {0};
    ch.interval_ns = culeak_get_u(c);
    ch.t_first = culeak_get_u(c);
    ch.t_last = culeak_get_u(c);
    uint64_t nunits = culeak_get_u(c);
    size_t left = (size_t)(c->end - c->p);
    if (c->bad || nunits > left / 5) /* a unit takes 5 bytes at least */
        return fail(d, at, "bad CHURN unit count");
    if (ch.t_last < ch.t_first)
        return fail(d, at, "a CHURN record ends before it starts");
    /* one allocation: units, then peaks (each takes 6 bytes at least), then values at the
     * peak (4 bytes at least) */
    size_t npeak_max = left / 6 + 1, nat_max = left / 4 + 1;
    struct culeak_churn_unit *u = scratch(d, nunits * sizeof *u + npeak_max * sizeof(struct culeak_churn_peak) +
                                                 nat_max * sizeof(struct culeak_churn_at_peak));
    if (!u)
        return fail(d, at, "out of memory");
    uint64_t stack = 0;
    for (uint64_t i = 0; i < nunits; i++) {
        uint64_t step = culeak_get_u(c);
        if (stack + step < stack)
            return fail(d, at, "bad CHURN stack step");
        u[i].stack = stack += step;
        uint64_t kind = culeak_get_u(c); /* the kind, and whether peak and thread follow */
        u[i].kind = (uint32_t)(kind >> 2);
        int64_t dev = culeak_get_z(c);
        u[i].device = dev < INT32_MIN || dev > INT32_MAX ? -1 : (int32_t)dev;
        u[i].count = culeak_get_u(c);
        u[i].bytes = culeak_get_u(c);
        u[i].peak = kind & 1 ? culeak_get_u(c) : 0;
        u[i].thread = kind & 2 ? culeak_get_u(c) : 0;
        if (c->bad)
            return fail(d, at, "truncated CHURN record");
        if (!u[i].count && (u[i].bytes || (!u[i].peak && !u[i].thread)))
            return fail(d, at, "a CHURN unit that counts nothing");
    }
    uint64_t npeaks = culeak_get_u(c);
    if (c->bad || npeaks > (size_t)(c->end - c->p) / 6)
        return fail(d, at, "bad CHURN peak count");
    struct culeak_churn_peak *pk = (struct culeak_churn_peak *)(u + nunits);
    for (uint64_t i = 0; i < npeaks; i++) {
        uint64_t dev = culeak_get_u(c);
        pk[i].all_devices = dev == 0;
        int64_t dz = dev ? culeak_unzigzag(dev - 1) : -1;
        pk[i].device = dz < INT32_MIN || dz > INT32_MAX ? -1 : (int32_t)dz;
        uint64_t slot = culeak_get_u(c);
        pk[i].slot = slot == CULEAK_CHURN_DEVICE_MEMORY ? CULEAK_KIND_COUNT : (uint32_t)slot;
        pk[i].bytes = culeak_get_u(c);
        pk[i].t_ns = culeak_get_u(c);
        pk[i].seq = culeak_get_u(c);
        if (c->bad)
            return fail(d, at, "truncated CHURN record");
        if (slot >= CULEAK_KIND_COUNT && slot != CULEAK_CHURN_DEVICE_MEMORY)
            return fail(d, at, "a CHURN peak of no counter (slot %llu)", (unsigned long long)slot);
    }
    uint64_t nat = culeak_get_u(c);
    if (c->bad || nat > (size_t)(c->end - c->p) / 4 + 1)
        return fail(d, at, "bad CHURN count of values at the peak");
    struct culeak_churn_at_peak *ap = (struct culeak_churn_at_peak *)(pk + npeaks);
    stack = 0;
    for (uint64_t i = 0; i + 1 < nat; i++) {
        uint64_t step = culeak_get_u(c);
        if (stack + step < stack)
            return fail(d, at, "bad CHURN stack step");
        ap[i].stack = stack += step;
        ap[i].kind = (uint32_t)culeak_get_u(c);
        ap[i].bytes = culeak_get_u(c);
        ap[i].count = culeak_get_u(c);
        if (c->bad)
            return fail(d, at, "truncated CHURN record");
    }
    ch.nunits = nunits;
    ch.unit = u;
    ch.npeaks = npeaks;
    ch.peak = pk;
    ch.peak_moved = nat > 0;
    ch.nat_peak = nat ? nat - 1 : 0;
    ch.at_peak = ap;
    return d->sink.churn ? d->sink.churn(d->sink.ctx, &ch) : 0;
}

/* A NODE: a FRAME whose id is the previous node's plus one, its parent and ip steps. */
static int decode_node(struct culeak_decoder *d, struct culeak_cursor *c, uint64_t at)
{
    uint64_t back = culeak_get_u(c);
    int64_t step = culeak_get_z(c);
    if (c->bad)
        return fail(d, at, "truncated NODE record");
    uint64_t id = d->node_id + 1;
    if (back == 0 || back > id)
        return fail(d, at, "a NODE record's parent is not before it");
    d->node_id = id;
    d->node_ip += (uint64_t)step;
    return d->sink.frame ? d->sink.frame(d->sink.ctx, id, id - back, d->node_ip) : 0;
}

static int decode_record(struct culeak_decoder *d, uint8_t type, const uint8_t *p, size_t n, uint64_t at)
{
    struct culeak_cursor c = {p, p + n, 0};
    if (type < CULEAK_CMD_WATCH && type != CULEAK_REC_HELLO && !d->seen_hello && d->expect_magic)
        return fail(d, at, "record type %u before HELLO", type);
    switch (type) {
    case CULEAK_REC_HELLO:
        if (d->seen_hello) /* a stream is one process: more HELLOs would be more processes */
            return fail(d, at, "a second HELLO record");
        return decode_hello(d, &c, at);
    case CULEAK_REC_MODULES:
        return decode_modules(d, &c, at);
    case CULEAK_REC_FRAME: {
        uint64_t id = culeak_get_u(&c), parent = culeak_get_u(&c), ip = culeak_get_u(&c);
        if (c.bad)
            return fail(d, at, "truncated FRAME record");
        d->node_id = id;
        d->node_ip = ip;
        return d->sink.frame ? d->sink.frame(d->sink.ctx, id, parent, ip) : 0;
    }
    case CULEAK_REC_EVENT:
        return decode_event(d, &c, at);
    case CULEAK_REC_FREE:
    case CULEAK_REC_ALLOC:
        return decode_compact(d, &c, at, type == CULEAK_REC_ALLOC);
    case CULEAK_REC_FREE_AGAIN:
    case CULEAK_REC_ALLOC_AGAIN:
        return decode_again(d, &c, at, type == CULEAK_REC_ALLOC_AGAIN);
    case CULEAK_REC_NODE:
        return decode_node(d, &c, at);
    case CULEAK_REC_MARK: {
        struct culeak_mark m;
        m.seq = d->seq_last = culeak_get_u(&c);
        d->t_last += culeak_get_u(&c);
        m.t_ns = d->t_last;
        m.tid = culeak_get_u(&c);
        m.label = get_str(&c);
        m.flags = culeak_get_u(&c);
        m.mem_device = -1;
        m.mem_free = m.mem_total = 0;
        if (culeak_cursor_more(&c)) { /* appended fields: the device's memory */
            int64_t dev = culeak_get_z(&c);
            m.mem_device = dev < INT32_MIN || dev > INT32_MAX ? -1 : (int32_t)dev;
            m.mem_free = culeak_get_u(&c);
            m.mem_total = culeak_get_u(&c);
        }
        if (c.bad)
            return fail(d, at, "truncated MARK record");
        return d->sink.mark ? d->sink.mark(d->sink.ctx, &m) : 0;
    }
    case CULEAK_REC_EXIT: {
        struct culeak_exit x;
        x.seq = d->seq_last = culeak_get_u(&c);
        d->t_last += culeak_get_u(&c);
        x.t_ns = d->t_last;
        x.reason = culeak_get_u(&c);
        if (c.bad)
            return fail(d, at, "truncated EXIT record");
        return d->sink.exit ? d->sink.exit(d->sink.ctx, &x) : 0;
    }
    case CULEAK_REC_NOTE: {
        struct culeak_str s = get_str(&c);
        if (c.bad)
            return fail(d, at, "truncated NOTE record");
        return d->sink.note ? d->sink.note(d->sink.ctx, s) : 0;
    }
    case CULEAK_REC_HOLDER: {
        uint64_t addr = culeak_get_u(&c);
        struct culeak_str s = get_str(&c);
        if (c.bad)
            return fail(d, at, "truncated HOLDER record");
        return d->sink.holder ? d->sink.holder(d->sink.ctx, addr, s) : 0;
    }
    case CULEAK_REC_PYFRAME: {
        struct culeak_pyframe f;
        f.id = culeak_get_u(&c);
        f.file = get_str(&c);
        f.function = get_str(&c);
        f.line = culeak_get_u(&c);
        f.firstlineno = culeak_get_u(&c);
        f.flags = culeak_cursor_more(&c) ? culeak_get_u(&c) : 0; /* appended: absent in older streams */
        if (c.bad)
            return fail(d, at, "truncated PYFRAME record");
        return d->sink.pyframe ? d->sink.pyframe(d->sink.ctx, &f) : 0;
    }
    case CULEAK_REC_CHURN:
        return decode_churn(d, &c, at);
    case CULEAK_REC_LOST: {
        uint64_t count = culeak_get_u(&c), first = culeak_get_u(&c), last = culeak_get_u(&c);
        if (c.bad)
            return fail(d, at, "truncated LOST record");
        return d->sink.lost ? d->sink.lost(d->sink.ctx, count, first, last) : 0;
    }
    case CULEAK_REC_ROLL: {
        struct culeak_roll r;
        r.which = culeak_get_u(&c);
        r.part = culeak_get_u(&c);
        r.offset = culeak_get_u(&c);
        r.name = get_str(&c);
        if (c.bad)
            return fail(d, at, "truncated ROLL record");
        return d->sink.roll ? d->sink.roll(d->sink.ctx, &r) : 0;
    }
    default:
        if (type >= CULEAK_CMD_WATCH && d->sink.command)
            return d->sink.command(d->sink.ctx, type, p, n);
        return 0; /* a kind this reader does not know: skipped by its length */
    }
}

/* Decodes every complete record in b[0..n); returns bytes used, or -1/stop value via *rc. */
static size_t decode_span(struct culeak_decoder *d, const uint8_t *b, size_t n, int *rc)
{
    size_t used = 0;
    *rc = 0;
    if (d->expect_magic && d->offset == 0 && d->records == 0) {
        if (n < CULEAK_MAGIC_LEN) {
            if (memcmp(b, CULEAK_MAGIC, n) != 0)
                *rc = fail(d, 0, "not a culeak stream (bad magic)");
            return 0;
        }
        if (memcmp(b, CULEAK_MAGIC, CULEAK_MAGIC_LEN) != 0) {
            *rc = fail(d, 0, "not a culeak stream (bad magic)");
            return 0;
        }
        used = CULEAK_MAGIC_LEN;
        d->records = 1; /* the magic counts as the first record */
    }
    while (used < n) {
        uint8_t type;
        const uint8_t *payload;
        size_t plen;
        long got = culeak_next_record(b + used, n - used, &type, &payload, &plen);
        if (got == 0)
            break;
        uint64_t at = d->offset + used;
        if (got < 0) {
            *rc = fail(d, at, "record length out of range");
            return used;
        }
        int r = decode_record(d, type, payload, plen, at);
        if (r) {
            *rc = r;
            return used + (r > 0 ? (size_t)got : 0);
        }
        used += (size_t)got;
        d->records++;
    }
    return used;
}

/* The carry buffer a decoder keeps between records; one grown for a larger record (up to
 * CULEAK_MAX_RECORD) shrinks back once that record is decoded. */
#define CARRY_KEEP (64u << 10)

/* Appends n bytes to the carry buffer: 0, or -1 out of memory. */
static int carry(struct culeak_decoder *d, const uint8_t *in, size_t n)
{
    if (d->len + n > d->cap) {
        size_t cap = d->cap ? d->cap : 4096;
        while (cap < d->len + n)
            cap *= 2;
        uint8_t *nb = realloc(d->buf, cap);
        if (!nb) {
            snprintf(d->error, sizeof d->error, "out of memory buffering a record");
            return -1;
        }
        d->buf = nb;
        d->cap = cap;
    }
    memcpy(d->buf + d->len, in, n);
    d->len += n;
    return 0;
}

/* What the carry buffer holds that is whole, decoded: rc as decode_span's. */
static int decode_carry(struct culeak_decoder *d)
{
    int rc;
    size_t used = decode_span(d, d->buf, d->len, &rc);
    memmove(d->buf, d->buf + used, d->len - used);
    d->len -= used;
    d->offset += used;
    return rc;
}

/* A record cut by the end of what came before is completed from the new bytes a step at
 * a time, and the rest decoded where it lies: the new bytes are copied only up to that
 * record's end (a whole chunk copied behind each cut record cost a memmove and a
 * realloc per chunk). */
#define CARRY_STEP 4096u

int culeak_decoder_feed(struct culeak_decoder *d, const void *bytes, size_t len)
{
    const uint8_t *in = bytes;
    int rc;
    while (d->len > 0 && len > 0) {
        size_t take = len < CARRY_STEP ? len : CARRY_STEP;
        if (carry(d, in, take) != 0)
            return -1;
        in += take;
        len -= take;
        if ((rc = decode_carry(d)) != 0)
            return rc;
    }
    if (len > 0) {
        size_t used = decode_span(d, in, len, &rc);
        d->offset += used;
        if (rc)
            return rc;
        if (used < len && carry(d, in + used, len - used) != 0) /* the incomplete tail */
            return -1;
    }
    if (d->cap > CARRY_KEEP && d->len <= CARRY_KEEP / 2) { /* a big record is done: give its room back */
        uint8_t *nb = realloc(d->buf, CARRY_KEEP);
        if (nb) {
            d->buf = nb;
            d->cap = CARRY_KEEP;
        }
    }
    return 0;
}

int culeak_decoder_finish(struct culeak_decoder *d)
{
    if (d->len == 0 && (d->records > 0 || !d->expect_magic))
        return 0;
    snprintf(d->error, sizeof d->error,
             d->records == 0 ? "empty or cut-off stream: no header"
                             : "stream cut off at offset %llu (%zu bytes of an incomplete record); "
                               "everything before it was read",
             (unsigned long long)d->offset, d->len);
    return 1;
}

struct file_feed {
    struct culeak_decoder d;
    int rc; /* the decoder's, where it stopped the reading */
};

static int feed_decoder(void *ctx, const uint8_t *bytes, size_t n)
{
    struct file_feed *f = ctx;
    return (f->rc = culeak_decoder_feed(&f->d, bytes, n)) != 0;
}

int culeak_decode_file(const char *path, const struct culeak_sink *sink, char *err, size_t errlen)
{
    struct file_feed f = {.rc = 0};
    culeak_decoder_init(&f.d, sink, 1);
    int r = culeak_read_recording(path, feed_decoder, &f, err, errlen);
    int rc = r < 0 ? -1 : r ? f.rc : culeak_decoder_finish(&f.d);
    if (r >= 0 && rc)
        snprintf(err, errlen, "%s: %s", path, f.d.error);
    culeak_decoder_free(&f.d);
    return rc < 0 ? -1 : rc;
}
