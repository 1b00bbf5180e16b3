/* The stream's encoder: one record per call, each laid out as culeak-stream(5) and
 * wire_encode.h say; decode.c reads them back. The shim compiles it into its own
 * link-time-optimized unit, where these calls inline into the writer's. */
#include "common/wire_encode.h"

/* The seq and the time since the previous timed record, for a record made at `now` (taken
 * before the caller's lock: another thread's record may come first with a later time, then
 * this one's dt is 0). */
static inline uint64_t next_dt(struct culeak_enc *s, uint64_t now)
{
    uint64_t dt = now > s->t_last ? now - s->t_last : 0;
    s->t_last = now > s->t_last ? now : s->t_last;
    s->seq_put = ++s->seq;
    return dt;
}

static inline size_t put_seq_dt(struct culeak_enc *s, uint8_t *p, uint64_t now)
{
    uint64_t dt = next_dt(s, now);
    size_t k = culeak_put_u(p, s->seq);
    return k + culeak_put_u(p + k, dt);
}

/* NODE: its parent a step back from its id, its ip a signed step from the previous node's
 * (the nodes of a new stack come one after another, their addresses mostly in one library). */
size_t culeak_enc_node(struct culeak_enc *s, uint8_t *rec, uint32_t id, uint32_t parent, uint64_t ip)
{
    uint8_t *p = rec + CULEAK_REC_SHORT;
    size_t k = culeak_put_u(p, id - parent);
    k += culeak_put_z(p + k, (int64_t)(ip - s->ip_put));
    s->ip_put = ip;
    return culeak_rec_finish_short(rec, CULEAK_REC_NODE, k);
}

/* The head of a FREE or ALLOC: its seq as the step from the previous record's, the time,
 * its thread 0 when it is the previous event's, its api and kind. */
static inline size_t put_head(struct culeak_enc *s, uint8_t *p, const struct culeak_ev *e, uint64_t now, uint64_t tid)
{
    uint64_t prev = s->seq_put;
    uint64_t dt = next_dt(s, now);
    size_t k = culeak_put_u(p, s->seq - prev);
    k += culeak_put_u(p + k, dt);
    k += culeak_put_u(p + k, tid == s->tid_put ? 0 : tid);
    s->tid_put = tid;
    k += culeak_put_u(p + k, e->api);
    return k + culeak_put_u(p + k, e->kind);
}

/* Whether an ..._AGAIN record can say it: its seq's step is 1 (no event was dropped since
 * the last record) and its thread the previous event's. */
static inline int again_fits(const struct culeak_enc *s, uint64_t tid)
{
    return s->seq == s->seq_put && tid == s->tid_put;
}

/* A FREE_AGAIN or ALLOC_AGAIN: the time and an address step. */
static inline size_t put_again(struct culeak_enc *s, uint8_t *rec, uint8_t type, uint64_t now, uint64_t addr)
{
    uint8_t *p = rec + CULEAK_REC_SHORT;
    size_t k = culeak_put_u(p, next_dt(s, now));
    k += culeak_put_z(p + k, (int64_t)(addr - s->addr_put));
    s->addr_put = addr;
    return culeak_rec_finish_short(rec, type, k);
}

/* FREE: its address a step from the previous FREE's or ALLOC's (a free follows its
 * allocation, an allocation often lies near the one before: a byte or a few instead of
 * six), aux and result only when one is not 0. */
size_t culeak_enc_free(struct culeak_enc *s, uint8_t *rec, const struct culeak_ev *e, uint64_t now, uint64_t tid)
{
    if (e->api == s->free_api && e->kind == s->free_kind && e->size == s->free_size && !e->aux && !e->result &&
        again_fits(s, tid))
        return put_again(s, rec, CULEAK_REC_FREE_AGAIN, now, e->addr);
    s->free_api = e->api;
    s->free_kind = e->kind;
    s->free_size = e->size;
    uint8_t *p = rec + CULEAK_REC_SHORT;
    size_t k = put_head(s, p, e, now, tid);
    k += culeak_put_z(p + k, (int64_t)(e->addr - s->addr_put));
    s->addr_put = e->addr;
    k += culeak_put_u(p + k, e->size);
    if (e->aux || e->result) {
        k += culeak_put_u(p + k, e->aux);
        k += culeak_put_u(p + k, e->result);
    }
    return culeak_rec_finish_short(rec, CULEAK_REC_FREE, k);
}

/* ALLOC: as a FREE, its seq and address steps and its tid 0 when it is the previous
 * event's; its context 0 when it is the previous EVENT's or ALLOC's (else the context
 * plus one); aux, result and flags only up to the last that is not 0. */
size_t culeak_enc_alloc(struct culeak_enc *s, uint8_t *rec, const struct culeak_ev *e, uint64_t now, uint64_t tid,
                        uint32_t leaf, int held)
{
    if (leaf == s->alloc_leaf && e->api == s->alloc_api && e->kind == s->alloc_kind && e->size == s->alloc_size &&
        e->device == s->alloc_device && e->ctx == s->ctx_put && !e->aux && !e->result && !held &&
        again_fits(s, tid))
        return put_again(s, rec, CULEAK_REC_ALLOC_AGAIN, now, e->addr);
    s->alloc_leaf = leaf;
    s->alloc_api = e->api;
    s->alloc_kind = e->kind;
    s->alloc_size = e->size;
    s->alloc_device = e->device;
    uint8_t *p = rec + CULEAK_REC_SHORT;
    size_t k = put_head(s, p, e, now, tid);
    k += culeak_put_z(p + k, e->device);
    k += culeak_put_u(p + k, e->ctx == s->ctx_put ? 0 : e->ctx + 1);
    s->ctx_put = e->ctx;
    k += culeak_put_u(p + k, e->size);
    k += culeak_put_z(p + k, (int64_t)(e->addr - s->addr_put));
    s->addr_put = e->addr;
    k += culeak_put_u(p + k, leaf);
    uint64_t flags = held ? CULEAK_EVENT_HELD : 0;
    if (e->aux || e->result || flags) {
        k += culeak_put_u(p + k, e->aux);
        if (e->result || flags) {
            k += culeak_put_u(p + k, e->result);
            if (flags)
                k += culeak_put_u(p + k, flags);
        }
    }
    return culeak_rec_finish_short(rec, CULEAK_REC_ALLOC, k);
}

size_t culeak_enc_event(struct culeak_enc *s, uint8_t *rec, const struct culeak_ev *e, uint64_t now, uint64_t tid,
                        uint32_t leaf)
{
    uint8_t *p = rec + CULEAK_REC_SHORT;
    size_t k = put_seq_dt(s, p, now);
    s->tid_put = tid;
    s->ctx_put = e->ctx;
    k += culeak_put_u(p + k, tid);
    k += culeak_put_u(p + k, e->op);
    k += culeak_put_u(p + k, e->api);
    k += culeak_put_u(p + k, e->kind);
    k += culeak_put_z(p + k, e->device);
    k += culeak_put_u(p + k, e->ctx);
    k += culeak_put_u(p + k, e->size);
    k += culeak_put_u(p + k, e->addr);
    k += culeak_put_u(p + k, e->aux);
    k += culeak_put_u(p + k, e->result);
    k += culeak_put_u(p + k, leaf);
    k += culeak_put_u(p + k, 0);
    return culeak_rec_finish_short(rec, CULEAK_REC_EVENT, k);
}

size_t culeak_enc_mark(struct culeak_enc *s, uint8_t *rec, uint64_t now, uint64_t tid, const char *label, size_t n,
                       unsigned flags, const struct culeak_enc_mem *mem)
{
    uint8_t *p = rec + CULEAK_REC_HEADROOM;
    size_t k = put_seq_dt(s, p, now);
    k += culeak_put_u(p + k, tid);
    k += culeak_put_s(p + k, label ? label : "", label ? n : 0);
    k += culeak_put_u(p + k, flags);
    if (mem) {
        k += culeak_put_z(p + k, mem->device);
        k += culeak_put_u(p + k, mem->free);
        k += culeak_put_u(p + k, mem->total);
    }
    return culeak_rec_finish(rec, CULEAK_REC_MARK, k);
}

size_t culeak_enc_exit(struct culeak_enc *s, uint8_t *rec, uint64_t now, unsigned reason)
{
    uint8_t *p = rec + CULEAK_REC_HEADROOM;
    size_t k = put_seq_dt(s, p, now);
    k += culeak_put_u(p + k, reason);
    return culeak_rec_finish(rec, CULEAK_REC_EXIT, k);
}

size_t culeak_enc_lost(uint8_t *rec, uint64_t count, uint64_t first_seq, uint64_t last_seq)
{
    uint8_t *p = rec + CULEAK_REC_SHORT;
    size_t k = culeak_put_u(p, count);
    k += culeak_put_u(p + k, first_seq);
    k += culeak_put_u(p + k, last_seq);
    return culeak_rec_finish_short(rec, CULEAK_REC_LOST, k);
}

size_t culeak_enc_roll(uint8_t *rec, unsigned which, uint64_t part, uint64_t offset, const char *name, size_t len)
{
    uint8_t *p = rec + CULEAK_REC_HEADROOM;
    size_t k = culeak_put_u(p, which);
    k += culeak_put_u(p + k, part);
    k += culeak_put_u(p + k, offset);
    k += culeak_put_s(p + k, name, len);
    return culeak_rec_finish(rec, CULEAK_REC_ROLL, k);
}

size_t culeak_enc_note(uint8_t *rec, const char *text, size_t len)
{
    return culeak_rec_finish(rec, CULEAK_REC_NOTE, culeak_put_s(rec + CULEAK_REC_HEADROOM, text, len));
}

size_t culeak_enc_pyframe(uint8_t *rec, uint64_t id, const char *file, size_t file_len, const char *func,
                          size_t func_len, uint64_t line, uint64_t firstlineno, uint64_t flags)
{
    uint8_t *p = rec + CULEAK_REC_HEADROOM;
    size_t k = culeak_put_u(p, id);
    k += culeak_put_s(p + k, file, file_len);
    k += culeak_put_s(p + k, func, func_len);
    k += culeak_put_u(p + k, line);
    k += culeak_put_u(p + k, firstlineno);
    if (flags)
        k += culeak_put_u(p + k, flags);
    return culeak_rec_finish(rec, CULEAK_REC_PYFRAME, k);
}
