/* HOLDER records: who holds a live block reaches the model, is kept by the block's stack
 * (an address inside a block counts; one in no live block, or in a freed one, is dropped)
 * and is grouped per row of a grouping: one answer per distinct chain, with its blocks and
 * bytes, most bytes first; a decoder without the record's callback skips it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "common/decode.h"
#include "model/model.h"
#include "stream_builder.h"
#include "model_fixture.h"

#include <string.h>

#define APP "/opt/app/bin/app"
#define APP_BASE 0x555500000000ull

static void sb_holder(struct sb *b, uint64_t addr, const char *words)
{
    sb_u(b, addr);
    sb_s(b, words);
    sb_end(b, CULEAK_REC_HOLDER);
}

/* A stream of process 100 of APP, with the trace nodes 1 (APP+0x100) and 2 (its
 * child, APP+0x200) the tests allocate from. */
static struct sb *app_stream(void)
{
    struct sb *b = sb_new();
    sb_hello(b, 100, APP, NULL);
    sb_module(b, APP, APP_BASE, 0, 0x10000);
    sb_frame(b, 1, 0, APP_BASE + 0x100);
    sb_frame(b, 2, 1, APP_BASE + 0x200);
    return b;
}

/* Two stacks: three blocks of 100 bytes from stack 2, one of 50 from stack 3, one freed. */
static struct sb *job(void)
{
    struct sb *b = app_stream();
    sb_frame(b, 3, 1, APP_BASE + 0x300);
    sb_alloc(b, 1, 2, 0x1000, 100);
    sb_alloc(b, 2, 2, 0x2000, 100);
    sb_alloc(b, 3, 2, 0x3000, 100);
    sb_alloc(b, 4, 3, 0x4000, 50);
    sb_alloc(b, 5, 3, 0x5000, 70);
    sb_free_dev(b, 6, 3, 0x5000);
    sb_holder(b, 0x1000, "global `grads` of a.py (list), an item");
    sb_holder(b, 0x2010, "global `grads` of a.py (list), an item"); /* inside its block */
    sb_holder(b, 0x3000, "local `x` of f at a.py:3");
    sb_holder(b, 0x4000, "lru_cache of `table`, a cached result");
    sb_holder(b, 0x5000, "global `gone` of a.py"); /* freed: nothing to say it of */
    sb_holder(b, 0x9000, "global `nowhere` of a.py");
    return b;
}

static void test_holders_per_row(void **state)
{
    (void)state;
    struct model *m = new_model();
    struct sb *b = job();
    assert_int_equal(load(m, b), MODEL_FEED_OK);
    struct model_holders h[4];
    size_t n = model_row_holders(m, MODEL_GROUP_STACK, model_stack_row(m, 0, 2, MODEL_GROUP_STACK), h, 4);
    assert_int_equal(n, 2);
    assert_string_equal(h[0].words, "global `grads` of a.py (list), an item");
    assert_int_equal(h[0].blocks, 2);
    assert_int_equal(h[0].bytes, 200);
    assert_string_equal(h[1].words, "local `x` of f at a.py:3");
    assert_int_equal(h[1].blocks, 1);
    n = model_row_holders(m, MODEL_GROUP_STACK, model_stack_row(m, 0, 3, MODEL_GROUP_STACK), h, 4);
    assert_int_equal(n, 1);
    assert_string_equal(h[0].words, "lru_cache of `table`, a cached result");
    assert_int_equal(h[0].bytes, 50);
    n = model_row_holders(m, MODEL_GROUP_COUNT, 0, h, 4); /* every block's */
    assert_int_equal(n, 3);
    n = model_row_holders(m, MODEL_GROUP_COUNT, 0, h, 1); /* no more than asked */
    assert_int_equal(n, 1);
    sb_free(b);
    model_free(m);
}

/* Walks at marks: each ends with an address-0 record naming its kind; a row's holders are
 * its process's latest walk's, and the walks at marks where they changed are listed. */
static void test_walks_at_marks(void **state)
{
    (void)state;
    struct model *m = new_model();
    struct sb *b = app_stream();
    sb_alloc(b, 1, 2, 0x1000, 100);
    sb_mark(b, 2, "iteration 0");
    sb_holder(b, 0x1000, "local `x` of f at a.py:3");
    sb_holder(b, 0, "mark");
    sb_alloc(b, 3, 2, 0x2000, 100);
    sb_mark(b, 4, "iteration 1");
    sb_holder(b, 0x1000, "global `grads` of a.py (list), an item");
    sb_holder(b, 0x2000, "global `grads` of a.py (list), an item");
    sb_holder(b, 0, "mark");
    sb_mark(b, 5, "iteration 2"); /* the same as at iteration 1: no change */
    sb_holder(b, 0x2000, "global `grads` of a.py (list), an item");
    sb_holder(b, 0x1000, "global `grads` of a.py (list), an item");
    sb_holder(b, 0, "mark");
    sb_holder(b, 0, "ask: not a Python process");
    assert_int_equal(load(m, b), MODEL_FEED_OK);
    size_t nw;
    const struct model_holder_walk *w = model_holder_walks(m, &nw);
    assert_int_equal(nw, 4);
    assert_string_equal(w[0].kind, "mark");
    assert_string_equal(w[0].mark, "iteration 0");
    assert_string_equal(w[0].why, "");
    assert_string_equal(w[3].kind, "ask");
    assert_string_equal(w[3].why, "not a Python process");
    uint32_t row = model_stack_row(m, 0, 2, MODEL_GROUP_STACK);
    struct model_holders h[4];
    size_t n = model_row_holders(m, MODEL_GROUP_STACK, row, h, 4); /* the latest walk's, folded */
    assert_int_equal(n, 1);
    assert_string_equal(h[0].words, "global `grads` of a.py (list), an item");
    assert_int_equal(h[0].blocks, 2);
    assert_int_equal(h[0].bytes, 200);
    n = model_row_holders_walk(m, MODEL_GROUP_STACK, row, 0, 0, h, 4);
    assert_int_equal(n, 1);
    assert_string_equal(h[0].words, "local `x` of f at a.py:3");
    const struct model_holder_walk *ch[4];
    size_t total;
    n = model_row_holder_changes(m, MODEL_GROUP_STACK, row, ch, 4, &total);
    assert_int_equal(total, 2);
    assert_int_equal(n, 2);
    assert_string_equal(ch[0]->mark, "iteration 0");
    assert_string_equal(ch[1]->mark, "iteration 1");
    n = model_row_holder_changes(m, MODEL_GROUP_STACK, row, ch, 1, &total); /* the latest only */
    assert_int_equal(total, 2);
    assert_int_equal(n, 1);
    assert_string_equal(ch[0]->mark, "iteration 1");
    sb_free(b);
    model_free(m);
}

/* A row whose blocks were freed after a walk: the later walk of every tensor says nothing
 * of it, so nothing holds it (an old walk's answer is not shown as today's). */
static void test_freed_row_holds_nothing(void **state)
{
    (void)state;
    struct model *m = new_model();
    struct sb *b = app_stream();
    sb_frame(b, 3, 1, APP_BASE + 0x300);
    sb_alloc(b, 1, 2, 0x1000, 100);
    sb_alloc(b, 2, 3, 0x2000, 100);
    sb_holder(b, 0x1000, "global `a` of a.py");
    sb_holder(b, 0x2000, "global `b` of a.py");
    sb_holder(b, 0, "mark");
    sb_free_dev(b, 3, 2, 0x1000);
    sb_holder(b, 0x2000, "global `b` of a.py");
    sb_holder(b, 0, "mark");
    assert_int_equal(load(m, b), MODEL_FEED_OK);
    struct model_holders h[4];
    assert_int_equal(model_row_holders(m, MODEL_GROUP_STACK, model_stack_row(m, 0, 2, MODEL_GROUP_STACK), h, 4), 0);
    assert_int_equal(model_row_holders(m, MODEL_GROUP_STACK, model_stack_row(m, 0, 3, MODEL_GROUP_STACK), h, 4), 1);
    sb_free(b);
    model_free(m);
}

static int count_events(void *ctx, const struct culeak_event *e)
{
    (void)e;
    ++*(int *)ctx;
    return 0;
}

static void test_decoder_without_callback_skips_it(void **state)
{
    (void)state;
    struct sb *b = job();
    int events = 0;
    struct culeak_sink sink = {.ctx = &events, .event = count_events};
    struct culeak_decoder d;
    culeak_decoder_init(&d, &sink, 1);
    assert_int_equal(culeak_decoder_feed(&d, b->buf, b->n), 0);
    assert_int_equal(events, 6);
    sb_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_holders_per_row),
        cmocka_unit_test(test_decoder_without_callback_skips_it),
        cmocka_unit_test(test_walks_at_marks),
        cmocka_unit_test(test_freed_row_holds_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
