/* Two runs compared (compare.h): the rows that changed most come first and the unchanged
 * last; a site with the same bytes in more allocations has grown; the run's total less the
 * baseline's is the summary's difference; in a peak report a site's blocks and its device
 * memory are rows apart, and the pool's reserved row is no call site. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "report/compare.h"
#include "model/model.h"
#include "report/report.h"
#include "stream_builder.h"
#include "model_fixture.h"

#include <string.h>

#define TRAIN "/home/me/train.py"
#define C10 "/opt/venv/lib/python3.12/site-packages/torch/lib/libc10_cuda.so"
#define C10_BASE 0x7f0000000000ull

static void sb_pyframe(struct sb *b, uint64_t id, const char *fn, uint64_t line)
{
    sb_u(b, id);
    sb_s(b, TRAIN);
    sb_s(b, fn);
    sb_u(b, line);
    sb_u(b, 1);
    sb_end(b, CULEAK_REC_PYFRAME);
}

static void ev(struct sb *b, uint64_t seq, unsigned kind, uint64_t addr, uint64_t size, uint64_t stack)
{
    unsigned api = kind == CULEAK_KIND_BLOCK ? CULEAK_API_TORCH_BLOCK_ALLOC : CULEAK_API_CUDA_MALLOC;
    sb_event(b, (struct sb_ev){.seq = seq, .dt = 1000, .op = CULEAK_OP_ALLOC, .api = api, .kind = kind,
                               .size = size, .addr = addr, .stack = stack});
}

static struct model *model_of(struct sb *b)
{
    struct model *m = model_new(NULL);
    assert_non_null(m);
    feed_all(m, b);
    return m;
}

/* Python sites of train.py: grow (line 20), step (30) and split (40), each leaking: grow
 * grow_n blocks of 8 KiB, step step_n of 1 KiB, split one 4 KiB allocation, or (split_two)
 * two of 2 KiB. */
static struct model *leaking_run(int grow_n, int step_n, int split_two)
{
    struct sb *b = sb_new();
    sb_hello(b, 100, "/usr/bin/python3", NULL);
    sb_pyframe(b, 5, "grow", 20);
    sb_pyframe(b, 6, "step", 30);
    sb_pyframe(b, 7, "split", 40);
    sb_frame(b, 1, 0, CULEAK_PYFRAME_TAG | 5);
    sb_frame(b, 2, 0, CULEAK_PYFRAME_TAG | 6);
    sb_frame(b, 3, 0, CULEAK_PYFRAME_TAG | 7);
    uint64_t seq = 1, addr = 0x100000;
    for (int i = 0; i < grow_n; i++, addr += 0x10000)
        ev(b, seq++, CULEAK_KIND_DEVICE, addr, 8192, 1);
    for (int i = 0; i < step_n; i++, addr += 0x10000)
        ev(b, seq++, CULEAK_KIND_DEVICE, addr, 1024, 2);
    for (int i = 0; i < (split_two ? 2 : 1); i++, addr += 0x10000)
        ev(b, seq++, CULEAK_KIND_DEVICE, addr, split_two ? 2048 : 4096, 3);
    sb_exit(b, seq);
    return model_of(b);
}

static const struct compare_row *row_of(const struct compare *c, const char *function, int blocks)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->rows[i].function && !strcmp(c->rows[i].function, function) && c->rows[i].blocks == blocks)
            return &c->rows[i];
    return NULL;
}

static void test_leaks_compared(void **state)
{
    (void)state;
    struct model *a = leaking_run(1, 1, 0), *b = leaking_run(2, 2, 1);
    struct report_options o;
    report_options_init(&o);
    struct compare c;
    assert_int_equal(compare_runs(a, b, &o, &c), 0);
    assert_int_equal(c.n, 3);
    /* most growth first */
    assert_string_equal(c.rows[0].function, "grow");
    assert_int_equal(c.rows[0].delta_bytes, 8192);
    assert_string_equal(c.rows[1].function, "step");
    assert_int_equal(c.rows[1].delta_bytes, 1024);
    /* the same bytes in one allocation more: grown */
    const struct compare_row *split = row_of(&c, "split", 0);
    assert_non_null(split);
    assert_int_equal(split->delta_bytes, 0);
    assert_int_equal(split->delta_count, 1);
    assert_int_equal(split->change, COMPARE_GROWN);
    assert_int_equal(c.changes[COMPARE_GROWN], 3);
    assert_int_equal(c.changes[COMPARE_SAME], 0);
    assert_int_equal(c.delta_bytes, 8192 + 1024);
    assert_int_equal(c.delta_count, 3);
    compare_free(&c);
    /* the other way round: shrunk, the summary's difference negative */
    assert_int_equal(compare_runs(b, a, &o, &c), 0);
    assert_int_equal(c.changes[COMPARE_SHRUNK], 3);
    assert_string_equal(c.rows[0].function, "split"); /* the least shrink first */
    assert_string_equal(c.rows[1].function, "step");
    assert_string_equal(c.rows[2].function, "grow");
    assert_int_equal(c.delta_bytes, -(8192 + 1024));
    compare_free(&c);
    /* a run against itself: every row the same, listed last */
    assert_int_equal(compare_runs(a, a, &o, &c), 0);
    assert_int_equal(c.changes[COMPARE_SAME], 3);
    compare_free(&c);
    model_free(a);
    model_free(b);
}

/* A PyTorch process (its pool tracked): a 2 MiB segment taken inside libc10_cuda, `blocks`
 * blocks of 4 KiB at train.py:13 and, at that same line, 64 KiB of device memory of its own. */
static struct model *pool_run(int blocks)
{
    struct sb *b = sb_new();
    sb_hello(b, 100, "/usr/bin/python3", NULL);
    sb_module(b, C10, C10_BASE, 0, 0x10000);
    sb_pyframe(b, 4, "<module>", 13);
    sb_frame(b, 1, 0, CULEAK_PYFRAME_TAG | 4);
    sb_frame(b, 2, 1, C10_BASE + 0x1234);
    uint64_t seq = 1;
    ev(b, seq++, CULEAK_KIND_DEVICE, 0x100000, 2 << 20, 2);
    for (int i = 0; i < blocks; i++)
        ev(b, seq++, CULEAK_KIND_BLOCK, 0x100000 + 4096 * (uint64_t)i, 4096, 1);
    ev(b, seq++, CULEAK_KIND_DEVICE, 0x10000000, 65536, 1);
    sb_exit(b, seq);
    return model_of(b);
}

static void test_peak_blocks_apart(void **state)
{
    (void)state;
    struct model *a = pool_run(1), *b = pool_run(3);
    struct report_options o;
    report_options_init(&o);
    o.what = REPORT_PEAK;
    struct compare c;
    assert_int_equal(compare_runs(a, b, &o, &c), 0);
    for (size_t i = 0; i < c.n; i++)
        assert_null(strstr(c.rows[i].text, "reserved")); /* the pool's row: no call site */
    assert_int_equal(c.n, 2);
    const struct compare_row *blk = row_of(&c, "<module>", 1), *dev = row_of(&c, "<module>", 0);
    assert_non_null(blk);
    assert_non_null(dev);
    assert_int_equal(blk->change, COMPARE_GROWN);
    assert_int_equal(blk->delta_bytes, 2 * 4096);
    assert_int_equal(dev->change, COMPARE_SAME);
    assert_int_equal(dev->side[1].bytes, 65536);
    assert_true(blk < dev); /* the unchanged row last */
    compare_free(&c);
    model_free(a);
    model_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leaks_compared),
        cmocka_unit_test(test_peak_blocks_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
