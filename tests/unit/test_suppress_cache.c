/* The model's cached suppression verdicts: tables built with model_query.supp (cached)
 * have the same rows as tables whose keep() matches every stack afresh, at the first
 * build and the later ones; a verdict changes when blocks are added, when other
 * suppressions are asked about (even at the same address), and when the module map of
 * the process changes (an address that was in no module is in the suppressed one now).
 * A verdict made for one process serves another only where the stack's frames are the
 * same modules and offsets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "model/model.h"
#include "stream_builder.h"
#include "model/suppress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define APP "/opt/app/bin/app"
#define LIB "/opt/app/lib/libother.so"
#define LIB_BASE 0x7f0000000000ull

static struct suppressions *parse_ok(struct suppressions *s, const char *text)
{
    if (!s)
        s = suppressions_new();
    char err[256] = "";
    if (suppressions_parse(s, text, "t.supp", err, sizeof err) != 0)
        fail_msg("parse: %s", err);
    return s;
}

static void feed(struct model_stream *st, struct sb *b, int first)
{
    size_t skip = first ? 0 : CULEAK_MAGIC_LEN; /* later parts continue the stream */
    assert_int_equal(model_stream_feed(st, b->buf + skip, b->n - skip), 0);
    sb_free(b);
}

/* One process: site A in the app (device and managed memory), site B at an address in
 * no module yet (libother is mapped by feed_lib), site C in the app below a libother
 * frame. Returns the open stream. */
static struct model_stream *app_process_pid(struct model *m, uint64_t pid)
{
    struct model_stream *st = model_stream_open(m);
    struct sb *b = sb_new();
    sb_hello(b, pid, APP, NULL);
    sb_module(b, APP, 0x400000, 0, 0x10000);
    sb_frame(b, 1, 0, 0x400100);              /* main */
    sb_frame(b, 2, 1, 0x400200);              /* A */
    sb_frame(b, 3, 1, LIB_BASE + 0x300);      /* B: in libother, once it is mapped */
    sb_frame(b, 4, 3, 0x400400);              /* C, called from libother */
    sb_alloc(b, 1, 2, 0x1000, 1000);
    sb_event(b, (struct sb_ev){.seq = 2, .dt = 1000, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CUDA_MALLOC_MANAGED,
                               .kind = CULEAK_KIND_MANAGED, .size = 50, .addr = 0x1800, .stack = 2});
    sb_alloc(b, 3, 3, 0x2000, 300);
    sb_alloc(b, 4, 3, 0x3000, 300);
    sb_alloc(b, 5, 4, 0x4000, 70);
    feed(st, b, 1);
    return st;
}

static struct model_stream *app_process(struct model *m) { return app_process_pid(m, 42); }

static void feed_lib(struct model_stream *st)
{
    struct sb *b = sb_new();
    sb_module(b, LIB, LIB_BASE, 0, 0x10000);
    feed(st, b, 0);
}

/* ---- the reference: every stack symbolized and matched again, nothing cached */

struct fresh {
    const struct suppressions *supp;
    int suppressed;
};

static int fresh_block(struct model *m, const struct suppressions *s, int proc, uint64_t stack, unsigned kind)
{
    struct model_frame f[64];
    size_t n = model_stack_frames(m, proc, stack, f, 64);
    size_t site = 0;
    while (site < n && f[site].skipped)
        site++;
    return suppressions_match(s, f, n, site == n ? 0 : site, kind);
}

static int fresh_keep(void *ctx, struct model *m, int proc, uint64_t stack, unsigned kind)
{
    const struct fresh *fr = ctx;
    return (fresh_block(m, fr->supp, proc, stack, kind) >= 0) == fr->suppressed;
}

static void build(struct model *m, const struct suppressions *s, int suppressed, enum model_group g, int cached,
                  struct model_table *t)
{
    static struct fresh fr;
    struct model_query q;
    model_query_init(&q);
    q.group = g;
    q.source = MODEL_SOURCE_LEAKS;
    q.only_live = 1;
    q.sort = MODEL_FIELD_ID;
    q.ascending = 1;
    if (cached) {
        q.supp = s;
        q.suppressed = suppressed;
    } else {
        fr = (struct fresh){s, suppressed};
        q.keep = fresh_keep;
        q.keep_ctx = &fr;
    }
    assert_int_equal(model_table_build(m, &q, t), 0);
}

/* Cached and fresh tables agree, for every grouping, both ways round, twice over (the
 * second build reads the verdicts the first kept); and so do single verdicts. Returns
 * the live bytes of the table of what is left (site grouping). */
static uint64_t same_as_fresh(struct model *m, const struct suppressions *s)
{
    uint64_t left = 0;
    for (int round = 0; round < 2; round++)
        for (int g = 0; g < MODEL_GROUP_COUNT; g++)
            for (int suppressed = 0; suppressed < 2; suppressed++) {
                struct model_table a, b;
                build(m, s, suppressed, (enum model_group)g, 1, &a);
                build(m, s, suppressed, (enum model_group)g, 0, &b);
                assert_int_equal(a.n, b.n);
                for (size_t i = 0; i < a.n; i++) {
                    assert_int_equal(a.rows[i].id, b.rows[i].id);
                    assert_int_equal(a.rows[i].live_bytes, b.rows[i].live_bytes);
                    assert_int_equal(a.rows[i].live_count, b.rows[i].live_count);
                    assert_int_equal(a.rows[i].stack, b.rows[i].stack);
                }
                if (g == MODEL_GROUP_SITE && !suppressed)
                    left = a.total_bytes;
                model_table_free(&a);
                model_table_free(&b);
            }
    for (uint64_t stack = 1; stack <= 4; stack++)
        for (unsigned kind = 0; kind < CULEAK_KIND_COUNT; kind++)
            assert_int_equal(model_stack_suppression(m, s, 0, stack, kind), fresh_block(m, s, 0, stack, kind));
    return left;
}

static void test_cached_rows_equal_fresh(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    struct model_stream *st = app_process(m);
    feed_lib(st);
    struct suppressions *s = parse_ok(NULL, "{\n lib\n culeak:Leak\n obj:*/libother.so\n}\n"
                                            "{\n managed in the app\n culeak:Leak\n match-leak-kinds: managed\n"
                                            " obj:*/app\n ...\n}\n"
                                            "{\n nothing\n culeak:Leak\n obj:*/nowhere.so\n}\n");
    /* B (600) and A's managed 50 suppressed: A's device 1000 and C's 70 left */
    assert_int_equal(same_as_fresh(m, s), 1070);
    assert_int_equal(model_stack_suppression(m, s, 0, 3, CULEAK_KIND_DEVICE), 0);
    assert_int_equal(model_stack_suppression(m, s, 0, 2, CULEAK_KIND_MANAGED), 1);
    assert_int_equal(model_stack_suppression(m, s, 0, 2, CULEAK_KIND_DEVICE), -1);
    /* a stack with no allocation of that kind is judged all the same */
    assert_int_equal(model_stack_suppression(m, s, 0, 4, CULEAK_KIND_MANAGED), 1);
    assert_int_equal(model_stack_suppression(m, s, 7, 2, CULEAK_KIND_DEVICE), -1); /* no such process */
    suppressions_free(s);
    model_stream_close(st);
    model_free(m);
}

static void test_new_blocks_are_seen(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    struct model_stream *st = app_process(m);
    feed_lib(st);
    struct suppressions *s = parse_ok(NULL, "{\n lib\n culeak:Leak\n obj:*/libother.so\n}\n");
    assert_int_equal(same_as_fresh(m, s), 1120);
    parse_ok(s, "{\n the app\n culeak:Leak\n obj:*/app\n}\n"); /* A and C now */
    assert_int_equal(same_as_fresh(m, s), 0);
    assert_int_equal(model_stack_suppression(m, s, 0, 2, CULEAK_KIND_DEVICE), 1);
    suppressions_free(s);
    /* other suppressions, likely at the same address: verdicts of their own */
    s = parse_ok(NULL, "{\n nothing\n culeak:Leak\n obj:*/nowhere.so\n}\n");
    assert_int_equal(same_as_fresh(m, s), 1720);
    suppressions_free(s);
    model_stream_close(st);
    model_free(m);
}

static void test_module_map_change_is_seen(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    struct model_stream *a = app_process(m), *b = app_process_pid(m, 43); /* two processes */
    struct suppressions *s = parse_ok(NULL, "{\n lib\n culeak:Leak\n obj:*/libother.so\n ...\n}\n");
    /* libother not mapped yet: B's frame is in no module, nothing is suppressed */
    assert_int_equal(same_as_fresh(m, s), 2 * 1720);
    assert_int_equal(model_stack_suppression(m, s, 1, 3, CULEAK_KIND_DEVICE), -1);
    feed_lib(b); /* the second process maps it: its B is suppressed, the first's is not */
    assert_int_equal(same_as_fresh(m, s), 1720 + 1120);
    assert_int_equal(model_stack_suppression(m, s, 1, 3, CULEAK_KIND_DEVICE), 0);
    assert_int_equal(model_stack_suppression(m, s, 0, 3, CULEAK_KIND_DEVICE), -1);
    /* a module mapped over the same range again changes nothing; a new one elsewhere is seen */
    feed_lib(b);
    feed_lib(a);
    assert_int_equal(same_as_fresh(m, s), 2 * 1120);
    suppressions_free(s);
    model_stream_close(a);
    model_stream_close(b);
    model_free(m);
}

/* Process pid whose stack 2 is main -> (offset 0x200 in libother), at other addresses
 * than app_process's main -> (offset 0x200 in the app). */
static struct model_stream *lib_process(struct model *m, uint64_t pid, uint64_t shift)
{
    struct model_stream *st = model_stream_open(m);
    struct sb *b = sb_new();
    sb_hello(b, pid, APP, NULL);
    sb_module(b, APP, 0x400000 + shift, 0, 0x10000);
    sb_module(b, LIB, LIB_BASE + shift, 0, 0x10000);
    sb_frame(b, 1, 0, 0x400100 + shift);
    sb_frame(b, 2, 1, LIB_BASE + shift + 0x200);
    sb_alloc(b, 1, 2, 0x1000, 1000);
    feed(st, b, 1);
    return st;
}

static void test_processes_share_by_frames(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    struct model_stream *a = app_process(m), *b = lib_process(m, 43, 0x100000), *c = lib_process(m, 44, 0x200000);
    feed_lib(a);
    struct suppressions *s = parse_ok(NULL, "{\n lib\n culeak:Leak\n obj:*/libother.so\n}\n");
    assert_int_equal(same_as_fresh(m, s), 1120); /* the first process's verdicts made first */
    assert_int_equal(model_stack_suppression(m, s, 0, 2, CULEAK_KIND_DEVICE), -1);
    assert_int_equal(model_stack_suppression(m, s, 1, 2, CULEAK_KIND_DEVICE), 0);
    assert_int_equal(model_stack_suppression(m, s, 2, 2, CULEAK_KIND_DEVICE), 0);
    struct model_table t;
    build(m, s, 0, MODEL_GROUP_SITE, 1, &t);
    assert_int_equal(t.total_bytes, 1120); /* both lib processes' 1000 suppressed */
    model_table_free(&t);
    suppressions_free(s);
    model_stream_close(a);
    model_stream_close(b);
    model_stream_close(c);
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cached_rows_equal_fresh),
        cmocka_unit_test(test_new_blocks_are_seen),
        cmocka_unit_test(test_module_map_change_is_seen),
        cmocka_unit_test(test_processes_share_by_frames),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
