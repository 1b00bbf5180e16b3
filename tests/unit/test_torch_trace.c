/* The events report --format torch-snapshot collects (src/report/torch_trace.c): a run
 * of 40 marked iterations, each leaking one allocation and making and freeing another,
 * keeps about its window once the events pass compact_at; the snapshot then starts at the
 * mark 10 iterations before the last, and is the same as without compaction; the frees
 * after the last allocation (the exit's) are left out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "report/torch_snapshot.h"
#include "stream_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITERATIONS 40

static struct sb *run(void)
{
    struct sb *b = sb_new();
    sb_hello(b, 4242, "/bin/train", NULL);
    sb_module(b, "/bin/train", 0x400000, 0, 0x10000);
    sb_frame(b, 1, 0, 0x401000);
    sb_frame(b, 2, 0, 0x402000);
    uint64_t seq = 1;
    for (int i = 0; i < ITERATIONS; i++) {
        char label[32];
        snprintf(label, sizeof label, "iteration %d", i);
        sb_mark(b, seq++, label);
        sb_alloc(b, seq++, 1, 0x10000000 + (uint64_t)i * 0x1000, 4096);  /* kept */
        sb_alloc(b, seq++, 2, 0x20000000, 65536);                         /* churned */
        sb_free_dev(b, seq++, 2, 0x20000000);
    }
    for (int i = 0; i < ITERATIONS; i++) /* the exit frees what was kept */
        sb_free_dev(b, seq++, 0, 0x10000000 + (uint64_t)i * 0x1000);
    sb_exit(b, seq++);
    return b;
}

/* The snapshot of the run with compaction at compact_at events (0: never). */
static char *snapshot(size_t compact_at, size_t *len, struct torch_trace **out, struct model **mp)
{
    struct model *m = model_new(NULL);
    struct torch_trace *t = torch_trace_attach(m, NULL, NULL);
    assert_non_null(t);
    if (compact_at)
        t->compact_at = compact_at;
    struct sb *b = run();
    struct model_stream *s = model_stream_open(m);
    assert_int_equal(model_stream_feed(s, b->buf, b->n), MODEL_FEED_OK);
    model_stream_finish(s);
    model_stream_close(s);
    sb_free(b);
    struct report_options o;
    report_options_init(&o);
    o.torch_trace = t;
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    assert_int_equal(report_torch_snapshot(f, m, &o), 0);
    fclose(f);
    *out = t;
    *mp = m;
    return buf;
}

static void test_window_and_compaction(void **state)
{
    (void)state;
    struct torch_trace *t, *tc;
    struct model *m, *mc;
    size_t len, lenc;
    char *whole = snapshot(0, &len, &t, &m), *compacted = snapshot(16, &lenc, &tc, &mc);
    assert_int_equal(t->dropped, 0);
    assert_true(tc->dropped > 0);
    assert_true(tc->n < 16 + 4 * (TORCH_TRACE_RING + 1) + ITERATIONS); /* about the window */
    assert_string_equal(t->window_from, "iteration 29");
    assert_string_equal(tc->window_from, "iteration 29");
    /* 11 iterations: the kept and the churned allocations, each a segment and a block of
     * its own (memory PyTorch does not see), the churned one's free three entries; the
     * window ends at the last allocation: the last churned free is one of the exit's */
    assert_int_equal(t->entries, 11 * (2 + 2 + 3) - 3);
    assert_int_equal(t->exit_left_out, ITERATIONS + 1);
    assert_int_equal(t->segments, ITERATIONS + 1); /* the kept ones, and the last churned */
    assert_int_equal(len, lenc);
    assert_memory_equal(whole, compacted, len);
    free(whole);
    free(compacted);
    torch_trace_free(t);
    torch_trace_free(tc);
    model_free(m);
    model_free(mc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_and_compaction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
