/* The stream's compact records (culeak-stream(5)): a FREE reads as the EVENT of a bare
 * free, its seq stepped from the previous timed record's, its tid 0 standing for the
 * previous event's; an ALLOC as the EVENT of an allocation, its context 0 standing for
 * the previous EVENT's or ALLOC's; a NODE reads as the FRAME whose id follows the previous node's, with
 * its parent and ip as steps. The decoder refuses the steps that cannot be. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "common/decode.h"
#include "decode_got.h"
#include "stream_builder.h"

/* Decodes b whole: the decoder's verdict (0, or -1 with *why). */
static int decode(struct sb *b, struct got *g, char *why, size_t len)
{
    struct culeak_sink sink = {0};
    sink.ctx = g;
    sink.event = on_event;
    sink.frame = on_frame;
    struct culeak_decoder d;
    culeak_decoder_init(&d, &sink, 1);
    memset(g, 0, sizeof *g);
    int rc = culeak_decoder_feed(&d, b->buf, b->n);
    if (rc == 0)
        rc = culeak_decoder_finish(&d);
    snprintf(why, len, "%s", d.error);
    culeak_decoder_free(&d);
    return rc;
}

/* The address of the last FREE or ALLOC written, which the next one's steps from (format
 * version 3 on); version_2: the addresses are written whole. */
static uint64_t addr_prev;
static int version_2;

static void sb_addr(struct sb *b, uint64_t addr)
{
    if (version_2)
        sb_u(b, addr);
    else
        sb_z(b, (int64_t)(addr - addr_prev));
    addr_prev = addr;
}

/* A new stream, its HELLO of format `version`. */
static struct sb *stream_of_version(uint64_t version)
{
    addr_prev = 0;
    version_2 = version == 2;
    struct sb *b = sb_new();
    if (version == CULEAK_FORMAT_VERSION) {
        sb_hello(b, 42, "/bin/job", NULL);
        return b;
    }
    sb_u(b, version); /* sb_hello's fields, another version */
    sb_u(b, 42);
    sb_u(b, 1);
    sb_u(b, 1000);
    sb_u(b, 1000000);
    sb_s(b, "testhost");
    sb_s(b, "/bin/job");
    sb_u(b, 0);
    sb_u(b, 0);
    sb_u(b, 64);
    sb_u(b, 1);
    sb_end(b, CULEAK_REC_HELLO);
    return b;
}

static struct sb *stream(void) { return stream_of_version(CULEAK_FORMAT_VERSION); }

static void sb_free_rec(struct sb *b, uint64_t step, uint64_t dt, uint64_t tid, uint64_t api, uint64_t addr,
                        uint64_t size, int with_aux, uint64_t aux, uint64_t result)
{
    sb_u(b, step);
    sb_u(b, dt);
    sb_u(b, tid);
    sb_u(b, api);
    sb_u(b, CULEAK_KIND_DEVICE);
    sb_addr(b, addr);
    sb_u(b, size);
    if (with_aux) {
        sb_u(b, aux);
        sb_u(b, result);
    }
    sb_end(b, CULEAK_REC_FREE);
}

/* got is want in every field the decoder fills. */
static void expect_event(const struct culeak_event *got, struct culeak_event want)
{
    const uint64_t g[] = {got->seq, got->t_ns, got->tid, got->op, got->api, got->kind, (uint64_t)(int64_t)got->device,
                          got->ctx, got->size, got->addr, got->aux, got->result, got->stack, got->flags};
    const uint64_t w[] = {want.seq, want.t_ns, want.tid, want.op, want.api, want.kind, (uint64_t)(int64_t)want.device,
                          want.ctx, want.size, want.addr, want.aux, want.result, want.stack, want.flags};
    static const char *const field[] = {"seq", "t_ns", "tid", "op", "api", "kind", "device",
                                        "ctx", "size", "addr", "aux", "result", "stack", "flags"};
    for (size_t f = 0; f < sizeof g / sizeof *g; f++)
        if (g[f] != w[f])
            fail_msg("event seq %llu: %s is 0x%llx, not 0x%llx", (unsigned long long)got->seq, field[f],
                     (unsigned long long)g[f], (unsigned long long)w[f]);
}

/* The EVENT a FREE of cuMemFree_v2 stands for (a bare free of device memory). */
static struct culeak_event bare_free(uint64_t seq, uint64_t t_ns, uint64_t tid, uint64_t addr, uint64_t size)
{
    return (struct culeak_event){.seq = seq, .t_ns = t_ns, .tid = tid, .op = CULEAK_OP_FREE,
                                 .api = CULEAK_API_CU_MEM_FREE, .kind = CULEAK_KIND_DEVICE, .device = -1,
                                 .size = size, .addr = addr};
}

/* The EVENT an ALLOC of cuMemAlloc_v2 stands for. */
static struct culeak_event device_alloc(uint64_t seq, uint64_t t_ns, uint64_t tid, int32_t device, uint64_t ctx,
                                        uint64_t size, uint64_t addr, uint64_t stack)
{
    return (struct culeak_event){.seq = seq, .t_ns = t_ns, .tid = tid, .op = CULEAK_OP_ALLOC,
                                 .api = CULEAK_API_CU_MEM_ALLOC, .kind = CULEAK_KIND_DEVICE, .device = device,
                                 .ctx = ctx, .size = size, .addr = addr, .stack = stack};
}

/* HELLO's monotonic time in stream_builder.h: the base of the events' times. */
#define T0 1000000u

static void test_free_records(void **state)
{
    (void)state;
    struct sb *b = stream();
    sb_event(b, (struct sb_ev){.seq = 5, .dt = 100, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CU_MEM_ALLOC,
                               .kind = CULEAK_KIND_DEVICE, .ctx = 0x1000, .size = 256, .addr = 0x7000,
                               .stack = 0, .tid = 31});
    sb_free_rec(b, 1, 20, 0, CULEAK_API_CU_MEM_FREE, 0x7000, 0, 0, 0, 0);       /* seq 6, thread 31 */
    sb_free_rec(b, 3, 0, 32, CULEAK_API_CU_MEM_FREE, 0x8000, 4096, 1, 9, 0);    /* seq 9 (two lost), thread 32 */
    sb_free_rec(b, 1, 7, 0, CULEAK_API_CU_MEM_FREE, 0x9000, 0, 1, 0, 700);      /* seq 10, thread 32 again */
    sb_mark(b, 20, "step");                                                      /* 1000 ns on */
    sb_free_rec(b, 2, 0, 0, CULEAK_API_CU_MEM_FREE, 0xa000, 0, 0, 0, 0);        /* after the MARK: seq 22 */
    struct got g;
    char why[256];
    assert_int_equal(decode(b, &g, why, sizeof why), 0);
    assert_int_equal(g.nev, 5);
    expect_event(&g.ev[1], bare_free(6, T0 + 120, 31, 0x7000, 0));
    struct culeak_event e = bare_free(9, T0 + 120, 32, 0x8000, 4096);
    e.aux = 9;
    expect_event(&g.ev[2], e);
    e = bare_free(10, T0 + 127, 32, 0x9000, 0);
    e.result = 700;
    expect_event(&g.ev[3], e);
    expect_event(&g.ev[4], bare_free(22, T0 + 1127, 32, 0xa000, 0)); /* a MARK's thread is not an event's */
    sb_free(b);
}

static void sb_alloc_rec(struct sb *b, uint64_t step, uint64_t tid, int64_t device, uint64_t ctx_x, uint64_t size,
                         uint64_t addr, uint64_t stack, int tail, uint64_t aux, uint64_t result, uint64_t flags)
{
    sb_u(b, step);
    sb_u(b, 10);
    sb_u(b, tid);
    sb_u(b, CULEAK_API_CU_MEM_ALLOC);
    sb_u(b, CULEAK_KIND_DEVICE);
    sb_z(b, device);
    sb_u(b, ctx_x);
    sb_u(b, size);
    sb_addr(b, addr);
    sb_u(b, stack);
    if (tail > 0)
        sb_u(b, aux);
    if (tail > 1)
        sb_u(b, result);
    if (tail > 2)
        sb_u(b, flags);
    sb_end(b, CULEAK_REC_ALLOC);
}

static void test_alloc_records(void **state)
{
    (void)state;
    struct sb *b = stream();
    sb_alloc_rec(b, 1, 31, 0, 0x1000 + 1, 256, 0x7000, 4, 0, 0, 0, 0);           /* seq 1, context 0x1000 */
    sb_alloc_rec(b, 1, 0, 1, 0, 512, 0x8000, 4, 1, 77, 0, 0);                    /* the same context, thread */
    sb_free_rec(b, 1, 0, 0, CULEAK_API_CU_MEM_FREE, 0x7000, 0, 0, 0, 0);        /* a FREE keeps the context */
    sb_alloc_rec(b, 2, 32, -1, 0 + 1, 0, 0, 0, 3, 0, 2, CULEAK_EVENT_HELD);      /* context 0, failed, held */
    sb_event(b, (struct sb_ev){.seq = 9, .op = CULEAK_OP_FREE_ALL, .api = CULEAK_API_CU_MEM_FREE,
                               .ctx = 0x2000, .device = 0, .tid = 33});
    sb_alloc_rec(b, 1, 0, 0, 0, 64, 0x9000, 5, 0, 0, 0, 0);                      /* after the EVENT: its context */
    struct got g;
    char why[256];
    assert_int_equal(decode(b, &g, why, sizeof why), 0);
    assert_int_equal(g.nev, 6);
    expect_event(&g.ev[0], device_alloc(1, T0 + 10, 31, 0, 0x1000, 256, 0x7000, 4));
    struct culeak_event e = device_alloc(2, T0 + 20, 31, 1, 0x1000, 512, 0x8000, 4);
    e.aux = 77;
    expect_event(&g.ev[1], e);
    expect_event(&g.ev[2], bare_free(3, T0 + 20, 31, 0x7000, 0));
    e = device_alloc(5, T0 + 30, 32, -1, 0, 0, 0, 0);
    e.result = 2;
    e.flags = CULEAK_EVENT_HELD;
    expect_event(&g.ev[3], e);
    expect_event(&g.ev[5], device_alloc(10, T0 + 40, 33, 0, 0x2000, 64, 0x9000, 5));
    sb_free(b);
}

static void test_node_records(void **state)
{
    (void)state;
    struct sb *b = stream();
    sb_u(b, 1); /* id 1, parent 0 */
    sb_z(b, 0x401000);
    sb_end(b, CULEAK_REC_NODE);
    sb_u(b, 1); /* id 2, parent 1 */
    sb_z(b, -0x20);
    sb_end(b, CULEAK_REC_NODE);
    sb_frame(b, 7, 2, 0x7f0000001000); /* a FRAME sets where the next NODE steps from */
    sb_u(b, 6); /* id 8, parent 2 */
    sb_z(b, 0x10);
    sb_end(b, CULEAK_REC_NODE);
    sb_u(b, 1); /* id 9, parent 8: a Python frame (bit 63), reached by a step that wraps */
    sb_z(b, (int64_t)((CULEAK_PYFRAME_TAG | 3) - UINT64_C(0x7f0000001010)));
    sb_end(b, CULEAK_REC_NODE);
    struct got g;
    char why[256];
    assert_int_equal(decode(b, &g, why, sizeof why), 0);
    assert_int_equal(g.nframe, 5);
    const uint64_t want[5][3] = {{1, 0, 0x401000},
                                 {2, 1, 0x400fe0},
                                 {7, 2, 0x7f0000001000},
                                 {8, 2, 0x7f0000001010},
                                 {9, 8, CULEAK_PYFRAME_TAG | 3}};
    for (int i = 0; i < 5; i++)
        for (int f = 0; f < 3; f++)
            assert_int_equal(g.frame[i][f], want[i][f]);
    sb_free(b);
}

/* The steps that cannot be: a FREE that does not move the seq on, a NODE whose parent is
 * itself or before the root. Each is a corrupt stream, said so, and what came before is
 * delivered. */
static void test_impossible_steps(void **state)
{
    (void)state;
    struct got g;
    char why[256];
    struct sb *b = stream();
    sb_free_rec(b, 1, 0, 5, CULEAK_API_CU_MEM_FREE, 0x7000, 0, 0, 0, 0);
    sb_free_rec(b, 0, 0, 5, CULEAK_API_CU_MEM_FREE, 0x8000, 0, 0, 0, 0);
    assert_int_equal(decode(b, &g, why, sizeof why), -1);
    assert_int_equal(g.nev, 1);
    assert_non_null(strstr(why, "FREE"));
    sb_free(b);

    static const uint64_t bad_back[] = {0, 2};
    for (int i = 0; i < 2; i++) {
        b = stream();
        sb_u(b, bad_back[i]); /* id 1: its parent is 1 - back */
        sb_z(b, 0x401000);
        sb_end(b, CULEAK_REC_NODE);
        assert_int_equal(decode(b, &g, why, sizeof why), -1);
        assert_int_equal(g.nframe, 0);
        assert_non_null(strstr(why, "NODE"));
        sb_free(b);
    }

    b = stream(); /* cut inside the fields it must have */
    sb_u(b, 1);
    sb_u(b, 0);
    sb_u(b, 5);
    sb_end(b, CULEAK_REC_FREE);
    assert_int_equal(decode(b, &g, why, sizeof why), -1);
    assert_non_null(strstr(why, "truncated FREE"));
    sb_free(b);

    b = stream();
    sb_alloc_rec(b, 0, 5, 0, 1, 256, 0x7000, 0, 0, 0, 0, 0);
    assert_int_equal(decode(b, &g, why, sizeof why), -1);
    assert_int_equal(g.nev, 0);
    assert_non_null(strstr(why, "ALLOC"));
    sb_free(b);
}

static void sb_again(struct sb *b, int alloc, uint64_t dt, uint64_t addr)
{
    sb_u(b, dt);
    sb_addr(b, addr);
    sb_end(b, alloc ? CULEAK_REC_ALLOC_AGAIN : CULEAK_REC_FREE_AGAIN);
}

/* A FREE_AGAIN or ALLOC_AGAIN is the previous FREE or ALLOC again (all 0 before the
 * first) with the next seq, its own time and address step, and the previous event's
 * thread and context: an EVENT between them changes those, not what is repeated. A
 * stream of a format before 4 has none: one there is refused, as one cut short. */
static void test_again_records(void **state)
{
    (void)state;
    struct sb *b = stream();
    sb_again(b, 0, 4, 0x6000);                                               /* seq 1: before any FREE */
    sb_alloc_rec(b, 1, 31, 0, 0x1000 + 1, 256, 0x7000, 4, 0, 0, 0, 0);       /* seq 2 */
    sb_free_rec(b, 1, 5, 0, CULEAK_API_CU_MEM_FREE, 0x7000, 4096, 1, 9, 0);  /* seq 3 */
    sb_again(b, 1, 3, 0x7100);                                               /* seq 4: as seq 2 */
    sb_again(b, 0, 2, 0x7100);                                               /* seq 5: as seq 3, aux 0 */
    sb_event(b, (struct sb_ev){.seq = 9, .op = CULEAK_OP_FREE_ALL, .api = CULEAK_API_CU_MEM_FREE,
                               .ctx = 0x2000, .device = 0, .tid = 33});
    sb_again(b, 1, 1, 0x6f00); /* seq 10: the EVENT's thread and context, seq 2's stack and size */
    struct got g;
    char why[256];
    assert_int_equal(decode(b, &g, why, sizeof why), 0);
    assert_int_equal(g.nev, 7);
    struct culeak_event e = {.seq = 1, .t_ns = T0 + 4, .op = CULEAK_OP_FREE, .device = -1, .addr = 0x6000};
    expect_event(&g.ev[0], e);
    expect_event(&g.ev[1], device_alloc(2, T0 + 14, 31, 0, 0x1000, 256, 0x7000, 4));
    e = bare_free(3, T0 + 19, 31, 0x7000, 4096);
    e.aux = 9;
    expect_event(&g.ev[2], e);
    expect_event(&g.ev[3], device_alloc(4, T0 + 22, 31, 0, 0x1000, 256, 0x7100, 4));
    expect_event(&g.ev[4], bare_free(5, T0 + 24, 31, 0x7100, 4096));
    expect_event(&g.ev[6], device_alloc(10, T0 + 25, 33, 0, 0x2000, 256, 0x6f00, 4));
    sb_free(b);

    b = stream_of_version(3);
    sb_alloc_rec(b, 1, 31, 0, 0x1000 + 1, 256, 0x7000, 4, 0, 0, 0, 0);
    sb_again(b, 1, 3, 0x7100);
    assert_int_equal(decode(b, &g, why, sizeof why), -1);
    assert_int_equal(g.nev, 1);
    assert_non_null(strstr(why, "ALLOC_AGAIN record in a format version 3 stream"));
    sb_free(b);

    b = stream();
    sb_u(b, 3); /* no address step */
    sb_end(b, CULEAK_REC_FREE_AGAIN);
    assert_int_equal(decode(b, &g, why, sizeof why), -1);
    assert_non_null(strstr(why, "truncated FREE_AGAIN"));
    sb_free(b);
}

/* Addresses step from the previous FREE's or ALLOC's, an EVENT's between them aside,
 * backwards too and round 2^64; a stream of format version 2 has them whole. */
static void test_address_steps(void **state)
{
    (void)state;
    static const uint64_t versions[] = {CULEAK_FORMAT_VERSION, 2};
    for (int v = 0; v < 2; v++) {
        struct sb *b = stream_of_version(versions[v]);
        sb_alloc_rec(b, 1, 31, 0, 0x1000 + 1, 256, 0x7f0000200000, 4, 0, 0, 0, 0);
        sb_alloc_rec(b, 1, 0, 0, 0, 256, 0x7f0000100000, 4, 0, 0, 0, 0); /* below the one before */
        sb_free_rec(b, 1, 0, 0, CULEAK_API_CU_MEM_FREE, 0x7f0000200000, 0, 0, 0, 0);
        sb_event(b, (struct sb_ev){.seq = 4, .op = CULEAK_OP_FREE, .api = CULEAK_API_CU_MEM_FREE, .addr = 0x5000,
                                   .device = -1, .tid = 31});
        sb_free_rec(b, 1, 0, 0, CULEAK_API_CU_MEM_FREE, 0x7f0000100000, 0, 0, 0, 0); /* from the FREE's */
        sb_alloc_rec(b, 1, 0, 0, 0, 0, 0, 0, 2, 0, 2, 0);                                /* failed: at 0 */
        sb_alloc_rec(b, 1, 0, 0, 0, 64, UINT64_MAX - 0xfff, 5, 0, 0, 0, 0);            /* round 2^64 */
        struct got g;
        char why[256];
        assert_int_equal(decode(b, &g, why, sizeof why), 0);
        assert_int_equal(g.nev, 7);
        static const uint64_t want[] = {0x7f0000200000, 0x7f0000100000, 0x7f0000200000, 0x5000,
                                        0x7f0000100000, 0,              UINT64_MAX - 0xfff};
        for (int i = 0; i < 7; i++)
            if (g.ev[i].addr != want[i])
                fail_msg("version %llu, event %d: address 0x%llx, not 0x%llx", (unsigned long long)versions[v], i,
                         (unsigned long long)g.ev[i].addr, (unsigned long long)want[i]);
        sb_free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_address_steps),
        cmocka_unit_test(test_free_records),
        cmocka_unit_test(test_alloc_records),
        cmocka_unit_test(test_node_records),
        cmocka_unit_test(test_impossible_steps),
        cmocka_unit_test(test_again_records),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
