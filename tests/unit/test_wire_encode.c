/* The stream's encoder (common/wire_encode.c) read back by its decoder, without the
 * shim: every record kind it writes comes back with the fields it was given, the
 * compact kinds (ALLOC_AGAIN, FREE_AGAIN) only where they can say it; and each record
 * framed shorter or cut off is refused or read short, never read past its end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/apis.h"
#include "common/decode.h"
#include "decode_got.h"
#include "common/wire_encode.h"
#include "stream_builder.h"

#define MONO0 1000000u /* HELLO's monotonic time: the encoder's t_last at the start */

/* What the decoder handed back, in order (events and frames: decode_got.h). */
struct seen {
    struct got base; /* first: on_event and on_frame take the ctx for it */
    struct culeak_mark mark[2];
    char label[2][16];
    int nmark;
    uint64_t lost[3];
    char note[32];
    struct culeak_pyframe py[2];
    char pyfile[2][16], pyfunc[2][32];
    int npy;
    struct culeak_exit exit;
    int nexit;
};

static void copy_str(char *dst, size_t cap, struct culeak_str s)
{
    snprintf(dst, cap, "%.*s", (int)s.n, s.p);
}

static int on_mark(void *ctx, const struct culeak_mark *m)
{
    struct seen *g = ctx;
    g->mark[g->nmark] = *m;
    copy_str(g->label[g->nmark], sizeof g->label[0], m->label);
    g->nmark++;
    return 0;
}

static int on_lost(void *ctx, uint64_t count, uint64_t first, uint64_t last)
{
    struct seen *g = ctx;
    g->lost[0] = count;
    g->lost[1] = first;
    g->lost[2] = last;
    return 0;
}

static int on_note(void *ctx, struct culeak_str text)
{
    struct seen *g = ctx;
    copy_str(g->note, sizeof g->note, text);
    return 0;
}

static int on_pyframe(void *ctx, const struct culeak_pyframe *f)
{
    struct seen *g = ctx;
    g->py[g->npy] = *f;
    copy_str(g->pyfile[g->npy], sizeof g->pyfile[0], f->file);
    copy_str(g->pyfunc[g->npy], sizeof g->pyfunc[0], f->function);
    g->npy++;
    return 0;
}

static int on_exit_rec(void *ctx, const struct culeak_exit *x)
{
    struct seen *g = ctx;
    g->exit = *x;
    g->nexit++;
    return 0;
}

static struct culeak_sink sink_for(struct seen *g)
{
    struct culeak_sink s = {0};
    s.ctx = g;
    s.event = on_event;
    s.frame = on_frame;
    s.mark = on_mark;
    s.lost = on_lost;
    s.note = on_note;
    s.pyframe = on_pyframe;
    s.exit = on_exit_rec;
    return s;
}

/* Decodes bytes[0..n) whole: 0 (clean end), -1 (refused) or 1 (cut off). */
static int decode(const uint8_t *bytes, size_t n, struct seen *g)
{
    struct culeak_sink sink = sink_for(g);
    struct culeak_decoder d;
    culeak_decoder_init(&d, &sink, 1);
    memset(g, 0, sizeof *g);
    int rc = culeak_decoder_feed(&d, bytes, n);
    if (rc == 0)
        rc = culeak_decoder_finish(&d);
    culeak_decoder_free(&d);
    return rc;
}

/* The encoded records, each apart (for the hostile framings) and one after another. */
struct recs {
    uint8_t buf[4096];
    size_t n;
    size_t at[32], len[32];
    int count;
};

static void add(struct recs *r, size_t len)
{
    r->at[r->count] = r->n;
    r->len[r->count++] = len;
    r->n += len;
}

static uint8_t *room(struct recs *r) { return r->buf + r->n; }

static const struct culeak_ev ALLOC = {CULEAK_OP_ALLOC, CULEAK_API_CU_MEM_ALLOC, CULEAK_KIND_DEVICE, 0,
                                       0xc0, 4096, 0x7f0000001000, 0, 0};
static const struct culeak_ev FREE = {CULEAK_OP_FREE, CULEAK_API_CU_MEM_FREE, CULEAK_KIND_DEVICE, -1,
                                      0, 4096, 0x7f0000001000, 0, 0};

/* Every kind the encoder writes, in an order that makes each compact kind step from the
 * one before it. */
static void encode_all(struct recs *r)
{
    struct culeak_enc s;
    memset(&s, 0, sizeof s);
    s.t_last = MONO0;
    memset(r, 0, sizeof *r);
    add(r, culeak_enc_node(&s, room(r), 1, 0, 0x401000));
    add(r, culeak_enc_node(&s, room(r), 2, 1, 0x400ff0)); /* an ip below the previous */
    struct culeak_ev a = ALLOC;
    add(r, culeak_enc_alloc(&s, room(r), &a, MONO0 + 100, 11, 2, 0));           /* seq 1 */
    a.addr += 4096;
    add(r, culeak_enc_alloc(&s, room(r), &a, MONO0 + 200, 11, 2, 0));           /* 2: AGAIN */
    a.addr -= 8192;
    a.ctx = 0;
    a.aux = 5;
    add(r, culeak_enc_alloc(&s, room(r), &a, MONO0 + 300, 11, 2, 1));           /* 3: held */
    struct culeak_ev f = FREE;
    add(r, culeak_enc_free(&s, room(r), &f, MONO0 + 400, 12));                  /* 4 */
    f.addr += 4096;
    add(r, culeak_enc_free(&s, room(r), &f, MONO0 + 500, 12));                  /* 5: AGAIN */
    f.result = 2;
    add(r, culeak_enc_free(&s, room(r), &f, MONO0 + 600, 12));                  /* 6 */
    struct culeak_ev x = {CULEAK_OP_FREE_ALL, CULEAK_API_UNKNOWN, CULEAK_KIND_NONE, 1, 0xc1, 0, 0, 0, 0};
    add(r, culeak_enc_event(&s, room(r), &x, MONO0 + 700, 13, 1));              /* 7 */
    ++s.seq;                                                                    /* 8: dropped */
    a = ALLOC;
    add(r, culeak_enc_alloc(&s, room(r), &a, MONO0 + 800, 13, 2, 0));           /* 9 */
    ++s.seq;                                                                    /* 10: dropped */
    a.addr += 4096;
    add(r, culeak_enc_alloc(&s, room(r), &a, MONO0 + 900, 13, 2, 0));           /* 11: no AGAIN */
    struct culeak_enc_mem mem = {1, 3u << 20, 80ull << 30};
    add(r, culeak_enc_mark(&s, room(r), MONO0 + 1000, 14, "epoch 1", 7, CULEAK_MARK_PUSH, &mem)); /* 12 */
    add(r, culeak_enc_mark(&s, room(r), MONO0 + 1100, 14, NULL, 0, CULEAK_MARK_POP, NULL));       /* 13 */
    add(r, culeak_enc_lost(room(r), 3, 7, 9));
    add(r, culeak_enc_note(room(r), "a note", 6));
    add(r, culeak_enc_pyframe(room(r), 1, "train.py", 8, "Model.forward", 13, 42, 40, 0));
    add(r, culeak_enc_pyframe(room(r), 2, "", 0, "[autograd backward]", 19, 0, 0, CULEAK_PYFRAME_BACKWARD));
    add(r, culeak_enc_exit(&s, room(r), MONO0 + 1050, CULEAK_EXIT_QUICK)); /* 14: earlier: dt 0 */
}

/* A stream of HELLO and then bytes[0..n). */
static struct sb *stream_of(const uint8_t *bytes, size_t n)
{
    struct sb *b = sb_new();
    sb_hello_at(b, 100, "/bin/job", NULL, 5, MONO0);
    sb_raw(b, bytes, n);
    return b;
}

static void check_event(const struct culeak_event *e, uint64_t seq, uint64_t t, uint64_t tid, uint32_t op,
                        int32_t device, uint64_t ctx, uint64_t addr, uint64_t aux, uint64_t result, uint64_t stack,
                        uint64_t flags)
{
    assert_int_equal(e->seq, seq);
    assert_int_equal(e->t_ns, MONO0 + t);
    assert_int_equal(e->tid, tid);
    assert_int_equal(e->op, op);
    assert_int_equal(e->device, device);
    assert_int_equal(e->ctx, ctx);
    assert_int_equal(e->addr, addr);
    assert_int_equal(e->aux, aux);
    assert_int_equal(e->result, result);
    assert_int_equal(e->stack, stack);
    assert_int_equal(e->flags, flags);
}

static void test_round_trip(void **state)
{
    (void)state;
    struct recs r;
    encode_all(&r);
    static const uint8_t kinds[] = {
        CULEAK_REC_NODE, CULEAK_REC_NODE, CULEAK_REC_ALLOC, CULEAK_REC_ALLOC_AGAIN, CULEAK_REC_ALLOC,
        CULEAK_REC_FREE, CULEAK_REC_FREE_AGAIN, CULEAK_REC_FREE, CULEAK_REC_EVENT, CULEAK_REC_ALLOC,
        CULEAK_REC_ALLOC, CULEAK_REC_MARK, CULEAK_REC_MARK, CULEAK_REC_LOST, CULEAK_REC_NOTE,
        CULEAK_REC_PYFRAME, CULEAK_REC_PYFRAME, CULEAK_REC_EXIT,
    };
    assert_int_equal(r.count, (int)sizeof kinds);
    for (int i = 0; i < r.count; i++)
        assert_int_equal(r.buf[r.at[i]], kinds[i]);

    struct sb *b = stream_of(r.buf, r.n);
    struct seen g;
    assert_int_equal(decode(b->buf, b->n, &g), 0);
    sb_free(b);

    assert_int_equal(g.base.nframe, 2);
    assert_int_equal(g.base.frame[0][0], 1);
    assert_int_equal(g.base.frame[0][1], 0);
    assert_int_equal(g.base.frame[0][2], 0x401000);
    assert_int_equal(g.base.frame[1][0], 2);
    assert_int_equal(g.base.frame[1][1], 1);
    assert_int_equal(g.base.frame[1][2], 0x400ff0);

    assert_int_equal(g.base.nev, 9);
    const uint64_t A = 0x7f0000001000;
    check_event(&g.base.ev[0], 1, 100, 11, CULEAK_OP_ALLOC, 0, 0xc0, A, 0, 0, 2, 0);
    check_event(&g.base.ev[1], 2, 200, 11, CULEAK_OP_ALLOC, 0, 0xc0, A + 4096, 0, 0, 2, 0);
    check_event(&g.base.ev[2], 3, 300, 11, CULEAK_OP_ALLOC, 0, 0, A - 4096, 5, 0, 2, CULEAK_EVENT_HELD);
    check_event(&g.base.ev[3], 4, 400, 12, CULEAK_OP_FREE, -1, 0, A, 0, 0, 0, 0);
    check_event(&g.base.ev[4], 5, 500, 12, CULEAK_OP_FREE, -1, 0, A + 4096, 0, 0, 0, 0);
    check_event(&g.base.ev[5], 6, 600, 12, CULEAK_OP_FREE, -1, 0, A + 4096, 0, 2, 0, 0);
    check_event(&g.base.ev[6], 7, 700, 13, CULEAK_OP_FREE_ALL, 1, 0xc1, 0, 0, 0, 1, 0);
    check_event(&g.base.ev[7], 9, 800, 13, CULEAK_OP_ALLOC, 0, 0xc0, A, 0, 0, 2, 0);
    check_event(&g.base.ev[8], 11, 900, 13, CULEAK_OP_ALLOC, 0, 0xc0, A + 4096, 0, 0, 2, 0);
    for (int i = 0; i < 9; i++) {
        assert_int_equal(g.base.ev[i].size, 4096 * (g.base.ev[i].op != CULEAK_OP_FREE_ALL));
        assert_int_equal(g.base.ev[i].api, i == 6 ? CULEAK_API_UNKNOWN
                                             : g.base.ev[i].op == CULEAK_OP_ALLOC ? CULEAK_API_CU_MEM_ALLOC
                                                                             : CULEAK_API_CU_MEM_FREE);
        assert_int_equal(g.base.ev[i].kind, i == 6 ? CULEAK_KIND_NONE : CULEAK_KIND_DEVICE);
    }

    assert_int_equal(g.nmark, 2);
    assert_int_equal(g.mark[0].seq, 12);
    assert_int_equal(g.mark[0].t_ns, MONO0 + 1000);
    assert_int_equal(g.mark[0].tid, 14);
    assert_string_equal(g.label[0], "epoch 1");
    assert_int_equal(g.mark[0].flags, CULEAK_MARK_PUSH);
    assert_int_equal(g.mark[0].mem_device, 1);
    assert_int_equal(g.mark[0].mem_free, 3u << 20);
    assert_int_equal(g.mark[0].mem_total, 80ull << 30);
    assert_int_equal(g.mark[1].seq, 13);
    assert_string_equal(g.label[1], "");
    assert_int_equal(g.mark[1].flags, CULEAK_MARK_POP);
    assert_int_equal(g.mark[1].mem_total, 0);

    assert_int_equal(g.lost[0], 3);
    assert_int_equal(g.lost[1], 7);
    assert_int_equal(g.lost[2], 9);
    assert_string_equal(g.note, "a note");

    assert_int_equal(g.npy, 2);
    assert_int_equal(g.py[0].id, 1);
    assert_string_equal(g.pyfile[0], "train.py");
    assert_string_equal(g.pyfunc[0], "Model.forward");
    assert_int_equal(g.py[0].line, 42);
    assert_int_equal(g.py[0].firstlineno, 40);
    assert_int_equal(g.py[0].flags, 0);
    assert_int_equal(g.py[1].id, 2);
    assert_string_equal(g.pyfunc[1], "[autograd backward]");
    assert_int_equal(g.py[1].flags, CULEAK_PYFRAME_BACKWARD);

    assert_int_equal(g.nexit, 1);
    assert_int_equal(g.exit.seq, 14);
    assert_int_equal(g.exit.t_ns, MONO0 + 1100); /* made earlier than the last record: no step back */
    assert_int_equal(g.exit.reason, CULEAK_EXIT_QUICK);
}

/* Record i framed with a payload of plen bytes (its first plen), in a buffer of exactly its
 * size, so that a read past it is caught (ASan). */
static int decode_reframed(const struct recs *r, int i, size_t plen, struct seen *g)
{
    uint8_t type;
    const uint8_t *payload;
    size_t full;
    assert_true(culeak_next_record(r->buf + r->at[i], r->len[i], &type, &payload, &full) > 0);
    uint8_t *rec = malloc(CULEAK_REC_HEADROOM + plen + 1);
    assert_non_null(rec);
    memcpy(rec + CULEAK_REC_HEADROOM, payload, plen);
    size_t n = culeak_rec_finish(rec, type, plen);
    /* the records before it, which it may step from, then it */
    struct sb *b = stream_of(r->buf, r->at[i]);
    sb_raw(b, rec, n);
    free(rec);
    uint8_t *exact = malloc(b->n);
    assert_non_null(exact);
    memcpy(exact, b->buf, b->n);
    int rc = decode(exact, b->n, g);
    free(exact);
    sb_free(b);
    return rc;
}

/* Each record with every shorter payload: refused (-1) or read as a record of fewer
 * fields (0); an empty payload is always refused. Each record cut off inside: read as
 * a stream cut off (1). */
static void test_hostile_lengths(void **state)
{
    (void)state;
    static struct recs r;
    encode_all(&r);
    struct seen g;
    for (int i = 0; i < r.count; i++) {
        uint8_t type;
        const uint8_t *payload;
        size_t full;
        assert_true(culeak_next_record(r.buf + r.at[i], r.len[i], &type, &payload, &full) > 0);
        assert_int_equal(decode_reframed(&r, i, full, &g), 0);
        assert_int_equal(decode_reframed(&r, i, 0, &g), -1);
        for (size_t plen = 1; plen < full; plen++) {
            int rc = decode_reframed(&r, i, plen, &g);
            assert_true(rc == 0 || rc == -1);
        }
        for (size_t cut = 1; cut < r.len[i]; cut++) {
            struct sb *b = stream_of(r.buf, r.at[i] + cut);
            assert_int_equal(decode(b->buf, b->n, &g), 1);
            sb_free(b);
        }
    }
    /* a length beyond CULEAK_MAX_RECORD is refused at once, whatever follows */
    uint8_t big[8] = {CULEAK_REC_NOTE};
    size_t k = 1 + culeak_put_u(big + 1, CULEAK_MAX_RECORD + 1);
    struct sb *b = stream_of(big, k);
    assert_int_equal(decode(b->buf, b->n, &g), -1);
    sb_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_hostile_lengths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
