/* The model on a stream of a process culeak attached to: the shim's inventory sends what
 * was live before the attach as "before-attach" allocations without a stack. They are one
 * row, "(before attach)", apart from the call sites, under every grouping; they count in
 * the live totals; a free ends them like any allocation; an address the stream already
 * holds live (an allocation made after the attach, seen again by the inventory) is not
 * counted twice. PyTorch's caching allocator's own account (its blocks; its segments,
 * with the pool in the auxiliary value) makes a segment the inventory found first that
 * pool's reserved memory, and the blocks its allocated memory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "model/model.h"
#include "report/report.h"
#include "stream_builder.h"
#include "model_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void before(struct sb *b, uint64_t seq, uint64_t addr, uint64_t size)
{
    sb_event(b, (struct sb_ev){.seq = seq, .dt = 1000, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_BEFORE_ATTACH,
                               .kind = CULEAK_KIND_DEVICE, .size = size, .addr = addr, .device = 0});
}

/* The pool's own account of a before-attach segment (a caching allocator's snapshot). */
static void claimed(struct sb *b, uint64_t seq, uint64_t addr, uint64_t size)
{
    sb_event(b, (struct sb_ev){.seq = seq, .dt = 1000, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_BEFORE_ATTACH,
                               .kind = CULEAK_KIND_DEVICE, .size = size, .addr = addr, .aux = CULEAK_POOL_TORCH});
}

/* /usr/bin/app's stream: its module and one call site (FRAME 1). */
static struct sb *app_stream(void)
{
    struct sb *b = sb_new();
    sb_hello(b, 100, "/usr/bin/app", NULL);
    sb_module(b, "/usr/bin/app", 0x400000, 0, 0x10000);
    sb_frame(b, 1, 0, 0x401000);
    return b;
}

/* Snapshots at "iteration 0" ... "iteration n-1", as report --diff arms them. */
static void arm_iterations(struct model *m, int n)
{
    for (int i = 0; i < n; i++) {
        char label[32];
        snprintf(label, sizeof label, "iteration %d", i);
        assert_int_equal(model_snapshot_at_mark(m, label, label), 0);
    }
}

/* Before the attach: 0x1000 (4096) and 0x3000 (8192); after it, at one call site:
 * 0x9000 (1000), which the inventory reports again; then 0x3000 is freed. */
static struct model *attached_model(void)
{
    struct model *m = new_model();
    struct sb *b = app_stream();
    sb_alloc(b, 1, 1, 0x9000, 1000);
    before(b, 2, 0x1000, 4096);
    before(b, 3, 0x3000, 8192);
    before(b, 4, 0x9000, 1000);
    sb_free_dev(b, 5, 0, 0x3000);
    feed_all(m, b);
    return m;
}

static const struct model_row *row_named(const struct model_table *t, const char *text)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].text && strcmp(t->rows[i].text, text) == 0)
            return &t->rows[i];
    return NULL;
}

static void test_before_attach_is_one_row(void **state)
{
    (void)state;
    struct model *m = attached_model();
    for (int g = 0; g < MODEL_GROUP_COUNT; g++) {
        struct model_query q;
        model_query_init(&q);
        q.group = (enum model_group)g;
        struct model_table t;
        assert_int_equal(model_table_build(m, &q, &t), 0);
        uint64_t total = 0;
        for (size_t i = 0; i < t.n; i++)
            total += t.rows[i].live_bytes;
        assert_int_equal(total, 4096 + 1000); /* 0x3000 freed, 0x9000 once */
        if (g != MODEL_GROUP_STACK) { /* its own row by site, function, file and module */
            const struct model_row *r = row_named(&t, "(before attach)");
            assert_non_null(r);
            assert_int_equal(r->live_bytes, 4096);
            assert_int_equal(r->live_count, 1);
        }
        if (g == MODEL_GROUP_SITE || g == MODEL_GROUP_FUNCTION) {
            const struct model_row *r = row_named(&t, "(before attach)");
            assert_int_equal(r->allocs, 2);
            assert_int_equal(r->frees, 1);
            /* the inventory's thread (7, not the process's 100) made none of them */
            assert_int_equal(r->threads, 0);
        }
        model_table_free(&t);
    }
    model_free(m);
}

static void test_before_attach_pool_account(void **state)
{
    (void)state;
    struct model *m = new_model();
    struct sb *b = sb_new();
    sb_hello(b, 100, "/usr/bin/python3", NULL);
    before(b, 1, 0x200000, 2 << 20);  /* the inventory: the allocator's segment */
    before(b, 2, 0x900000, 8192);     /* and memory of no pool */
    claimed(b, 3, 0x200000, 2 << 20);
    claimed(b, 4, 0x800000000, 4 << 20);
    for (int i = 0; i < 3; i++)
        sb_event(b, (struct sb_ev){.seq = 5 + (uint64_t)i, .dt = 1000, .op = CULEAK_OP_ALLOC,
                                   .api = CULEAK_API_BEFORE_ATTACH, .kind = CULEAK_KIND_BLOCK, .size = 65536,
                                   .addr = 0x200000 + (uint64_t)i * 65536});
    feed_all(m, b);
    struct model_memory mm;
    model_memory_now(m, MODEL_ALL, &mm);
    assert_int_equal(mm.pools, 1u << MODEL_CACHE_PYTORCH);
    assert_int_equal(mm.allocated_bytes, 3 * 65536);
    assert_int_equal(mm.allocated_blocks, 3);
    assert_int_equal(mm.reserved_bytes, (2 << 20) + (4 << 20)); /* the one found first counted once */
    assert_int_equal(mm.reserved_segments, 2);
    assert_int_equal(mm.other_bytes, 8192);
    assert_int_equal(mm.other_count, 1);
    model_free(m);
}

/* The process ends with what was live before the attach still live: nothing culeak saw
 * made, so not judged a leak. The leak report lists it apart ("NOT JUDGED", and an
 * "ATTACH SUMMARY" line; JSON's "before_attach" and summary words), the LEAK SUMMARY (and
 * so check's exit status) counts only the leak made after the attach, a before-attach
 * segment of PyTorch's pool is its cache as before, and no suppression is written for it. */
static void test_before_attach_not_a_leak(void **state)
{
    (void)state;
    struct model *m = new_model();
    struct sb *b = app_stream();
    before(b, 1, 0x1000, 4096);
    before(b, 2, 0x3000, 8192);
    claimed(b, 3, 0x200000, 2 << 20);
    sb_alloc(b, 4, 1, 0x9000, 1000);
    sb_exit(b, 5);
    feed_all(m, b);

    struct report_options o;
    report_options_init(&o);
    struct report_summary s;
    assert_int_equal(report_summarize(m, &o, &s), 0);
    assert_int_equal(s.bytes, 1000);
    assert_int_equal(s.allocations, 1);
    assert_int_equal(s.sites, 1);
    assert_int_equal(s.before_bytes, 4096 + 8192);
    assert_int_equal(s.before_allocations, 2);

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(report_text(f, m, &o, &s), 0);
    fclose(f);
    assert_non_null(strstr(buf, "\nNOT JUDGED 12.0 KiB (12288 bytes) in 2 allocations (device) from (before attach)\n"));
    assert_null(strstr(buf, "LEAKED 12.0 KiB"));
    assert_non_null(strstr(buf, "\nCACHED 2.0 MiB (2097152 bytes) in 1 segment (device): pytorch caching allocator"));
    assert_non_null(strstr(buf, "\nLEAK SUMMARY: 1000 bytes leaked in 1 allocations from 1 call sites\n"));
    assert_non_null(strstr(buf, "\nATTACH SUMMARY: 12288 bytes in 2 allocations live since before culeak attached"));
    free(buf);

    f = open_memstream(&buf, &len);
    assert_int_equal(report_json(f, m, &o, &s), 0);
    fclose(f);
    assert_non_null(strstr(buf, "\"before_attach_bytes\":12288,\"before_attach_allocations\":2"));
    const char *list = strstr(buf, "\"before_attach\":[{");
    assert_non_null(list);
    assert_non_null(strstr(list, "\"bytes\":12288,\"count\":2"));
    const char *leaks = strstr(buf, "\"leaks\":[");
    assert_non_null(leaks);
    assert_true(strstr(leaks, "\"bytes\":1000,") < strstr(leaks, "],"));
    free(buf);

    f = open_memstream(&buf, &len);
    assert_int_equal(report_suppressions(f, m, &o), 0);
    fclose(f);
    assert_null(strstr(buf, "before attach"));
    free(buf);
    model_free(m);
}

/* The inventory comes after the job's first marks (the job runs on while the shim looks
 * for what was live): its allocations were live at those marks, so a diff between two of
 * them holds only what the call site made between them, nothing "(before attach)", and
 * nothing made before the attach counts as made after the first mark. */
static void test_before_attach_live_at_earlier_marks(void **state)
{
    (void)state;
    struct model *m = new_model();
    struct sb *b = app_stream();
    sb_mark(b, 1, "iteration 0");
    sb_alloc(b, 2, 1, 0x9000, 1000);
    sb_mark(b, 3, "iteration 1");
    before(b, 4, 0x1000, 4096);
    before(b, 5, 0x3000, 8192);
    sb_alloc(b, 6, 1, 0xa000, 1000);
    sb_mark(b, 7, "iteration 2");
    arm_iterations(m, 3);
    feed_all(m, b);
    struct model_query q;
    model_query_init(&q);
    struct model_diff d;
    assert_int_equal(model_diff(m, "iteration 0", "iteration 2", &q, &d), 0);
    assert_int_equal(d.n, 1);
    assert_int_equal(d.rows[0].delta_bytes, 2000);
    assert_int_equal(d.delta_bytes, 2000);
    assert_int_equal(d.new_bytes, 2000);
    assert_int_equal(d.new_count, 2);
    model_diff_free(&d);
    assert_int_equal(model_diff(m, "iteration 1", "iteration 2", &q, &d), 0);
    assert_int_equal(d.n, 1);
    assert_int_equal(d.delta_bytes, 1000);
    assert_int_equal(d.new_count, 1);
    model_diff_free(&d);
    model_free(m);
}

/* The inventory's segment, which the caching allocator's snapshot then claims for its pool,
 * both after the first mark: at that mark too it is the pool's reserved memory, not memory
 * outside the pools (the busy job's diff said "reserved 0 bytes" at its first mark, and the
 * pool's whole segment as growth). */
static void test_before_attach_claimed_at_earlier_marks(void **state)
{
    (void)state;
    struct model *m = new_model();
    struct sb *b = sb_new();
    sb_hello(b, 100, "/usr/bin/python3", NULL);
    sb_mark(b, 1, "iteration 0");
    before(b, 2, 0x200000, 2 << 20);
    before(b, 3, 0x900000, 8192);
    claimed(b, 4, 0x200000, 2 << 20);
    sb_mark(b, 5, "iteration 1");
    arm_iterations(m, 2);
    feed_all(m, b);
    struct model_query q;
    model_query_init(&q);
    struct model_diff d;
    assert_int_equal(model_diff(m, "iteration 0", "iteration 1", &q, &d), 0);
    assert_int_equal(d.a.reserved_bytes, 2 << 20);
    assert_int_equal(d.a.other_bytes, 8192);
    assert_int_equal(d.b.reserved_bytes, 2 << 20);
    assert_int_equal(d.n, 0);
    model_diff_free(&d);
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_before_attach_is_one_row),
        cmocka_unit_test(test_before_attach_pool_account),
        cmocka_unit_test(test_before_attach_not_a_leak),
        cmocka_unit_test(test_before_attach_live_at_earlier_marks),
        cmocka_unit_test(test_before_attach_claimed_at_earlier_marks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
