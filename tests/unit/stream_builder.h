/* Test helper: builds culeak streams in memory with the wire.h encoders, so model and
 * report tests can say exactly which records a shim would have sent. */
#ifndef CULEAK_TEST_STREAM_BUILDER_H
#define CULEAK_TEST_STREAM_BUILDER_H

#include "common/apis.h"
#include "common/wire.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct sb {
    uint8_t *buf;
    size_t n, cap;
    uint8_t rec[1 << 16];
    size_t plen; /* payload bytes in rec after the headroom */
};

static inline void sb_reserve(struct sb *b, size_t more)
{
    if (b->n + more <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + more)
        cap *= 2;
    b->buf = realloc(b->buf, cap);
    if (!b->buf)
        abort();
    b->cap = cap;
}

static inline void sb_raw(struct sb *b, const void *p, size_t n)
{
    sb_reserve(b, n);
    memcpy(b->buf + b->n, p, n);
    b->n += n;
}

static inline struct sb *sb_new(void)
{
    struct sb *b = calloc(1, sizeof *b);
    if (!b)
        abort();
    sb_raw(b, CULEAK_MAGIC, CULEAK_MAGIC_LEN);
    return b;
}

static inline void sb_free(struct sb *b)
{
    free(b->buf);
    free(b);
}

static inline uint8_t *sb_p(struct sb *b) { return b->rec + CULEAK_REC_HEADROOM + b->plen; }
static inline void sb_u(struct sb *b, uint64_t v) { b->plen += culeak_put_u(sb_p(b), v); }
static inline void sb_z(struct sb *b, int64_t v) { b->plen += culeak_put_z(sb_p(b), v); }
static inline void sb_s(struct sb *b, const char *s) { b->plen += culeak_put_s(sb_p(b), s, strlen(s)); }

static inline void sb_end(struct sb *b, uint8_t type)
{
    size_t n = culeak_rec_finish(b->rec, type, b->plen);
    sb_raw(b, b->rec, n);
    b->plen = 0;
}

/* HELLO with one argument and optional "KEY=VALUE" environment entry (NULL: none), of
 * a process started at wall time realtime (ns) and monotonic time mono (ns). */
static inline void sb_hello_full(struct sb *b, uint64_t pid, uint64_t ppid, const char *exe, const char *env,
                                 uint64_t realtime, uint64_t mono)
{
    sb_u(b, CULEAK_FORMAT_VERSION);
    sb_u(b, pid);
    sb_u(b, ppid);
    sb_u(b, realtime);
    sb_u(b, mono);
    sb_s(b, "testhost");
    sb_s(b, exe);
    sb_u(b, 2);
    sb_s(b, exe);
    sb_s(b, "--flag");
    sb_u(b, env ? 1 : 0);
    if (env)
        sb_s(b, env);
    sb_u(b, 64);
    sb_u(b, 1);
    sb_end(b, CULEAK_REC_HELLO);
}

static inline void sb_hello_at(struct sb *b, uint64_t pid, const char *exe, const char *env, uint64_t realtime,
                               uint64_t mono)
{
    sb_hello_full(b, pid, 1, exe, env, realtime, mono);
}

static inline void sb_hello(struct sb *b, uint64_t pid, const char *exe, const char *env)
{
    sb_hello_at(b, pid, exe, env, 1000, 1000000);
}

/* MODULES with one module of one segment [base+vaddr, +memsz). */
static inline void sb_module(struct sb *b, const char *path, uint64_t base, uint64_t vaddr, uint64_t memsz)
{
    sb_u(b, 1);
    sb_u(b, 1);
    sb_s(b, path);
    sb_u(b, base);
    sb_u(b, 1);
    sb_u(b, vaddr);
    sb_u(b, memsz);
    sb_end(b, CULEAK_REC_MODULES);
}

static inline void sb_frame(struct sb *b, uint64_t id, uint64_t parent, uint64_t ip)
{
    sb_u(b, id);
    sb_u(b, parent);
    sb_u(b, ip);
    sb_end(b, CULEAK_REC_FRAME);
}

struct sb_ev {
    uint64_t seq, dt, op, api, kind, ctx, size, addr, result, stack, flags;
    uint64_t aux;
    int64_t device;
    uint64_t tid; /* 0: thread 7 */
};

static inline void sb_event(struct sb *b, struct sb_ev e)
{
    sb_u(b, e.seq);
    sb_u(b, e.dt);
    sb_u(b, e.tid ? e.tid : 7);
    sb_u(b, e.op);
    sb_u(b, e.api);
    sb_u(b, e.kind);
    sb_z(b, e.device);
    sb_u(b, e.ctx);
    sb_u(b, e.size);
    sb_u(b, e.addr);
    sb_u(b, e.aux);
    sb_u(b, e.result);
    sb_u(b, e.stack);
    sb_u(b, e.flags);
    sb_end(b, CULEAK_REC_EVENT);
}

/* The common cases: cudaMalloc-like alloc and free of device memory, 1 µs apart. */
static inline void sb_alloc(struct sb *b, uint64_t seq, uint64_t stack, uint64_t addr, uint64_t size)
{
    sb_event(b, (struct sb_ev){.seq = seq, .dt = 1000, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CUDA_MALLOC,
                               .kind = CULEAK_KIND_DEVICE, .size = size, .addr = addr, .stack = stack});
}

static inline void sb_free_dev(struct sb *b, uint64_t seq, uint64_t stack, uint64_t addr)
{
    sb_event(b, (struct sb_ev){.seq = seq, .dt = 1000, .op = CULEAK_OP_FREE, .api = CULEAK_API_CUDA_FREE,
                               .kind = CULEAK_KIND_DEVICE, .addr = addr, .stack = stack});
}

static inline void sb_mark(struct sb *b, uint64_t seq, const char *label)
{
    sb_u(b, seq);
    sb_u(b, 1000);
    sb_u(b, 7);
    sb_s(b, label);
    sb_u(b, 0);
    sb_end(b, CULEAK_REC_MARK);
}

static inline void sb_exit(struct sb *b, uint64_t seq)
{
    sb_u(b, seq);
    sb_u(b, 1000);
    sb_u(b, 0);
    sb_end(b, CULEAK_REC_EXIT);
}

static inline void sb_note(struct sb *b, const char *text)
{
    sb_s(b, text);
    sb_end(b, CULEAK_REC_NOTE);
}

#endif
