/* Model numbers from synthetic streams: per-site aggregation, kinds, FREE_ALL, failures,
 * unknown frees, peaks, snapshots and diffs, grouping, bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "model/model.h"
#include "stream_builder.h"
#include "model_fixture.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define APP "/opt/app/bin/app"
#define CUDART "/usr/lib/libcudart.so.12"
#define APP_BASE 0x555500000000ull
#define CUDART_BASE 0x7f0000000000ull
#define A(off) (APP_BASE + (off))
#define C(off) (CUDART_BASE + (off))

/* Site A (app+0x200) is reached by stacks 3 and 8, site B (app+0x300) by stack 5. */
static struct sb *standard_prefix(uint64_t pid, const char *env)
{
    struct sb *b = sb_new();
    sb_hello(b, pid, APP, env);
    sb_module(b, APP, APP_BASE, 0, 0x10000);
    sb_module(b, CUDART, CUDART_BASE, 0, 0x100000);
    sb_frame(b, 1, 0, A(0x100));
    sb_frame(b, 2, 1, A(0x200));
    sb_frame(b, 3, 2, C(0x50));
    sb_frame(b, 4, 1, A(0x300));
    sb_frame(b, 5, 4, C(0x50));
    sb_frame(b, 6, 0, A(0x900));
    sb_frame(b, 7, 6, A(0x200));
    sb_frame(b, 8, 7, C(0x50));
    return b;
}

static const struct model_row *row_with_text(const struct model_table *t, const char *needle)
{
    for (size_t i = 0; i < t->n; i++)
        if (strstr(t->rows[i].text, needle))
            return &t->rows[i];
    return NULL;
}

static void build_table(struct model *m, enum model_group g, enum model_source src, struct model_table *t)
{
    struct model_query q;
    model_query_init(&q);
    q.group = g;
    q.source = src;
    assert_int_equal(model_table_build(m, &q, t), 0);
}

static void test_site_aggregation(void **state)
{
    (void)state;
    struct sb *b = standard_prefix(100, NULL);
    sb_alloc(b, 1, 3, 0x1000, 100);
    sb_alloc(b, 2, 3, 0x2000, 100);
    sb_alloc(b, 3, 3, 0x3000, 100);
    sb_alloc(b, 4, 8, 0x4000, 50);
    sb_alloc(b, 5, 5, 0x5000, 1000);
    sb_alloc(b, 6, 5, 0x6000, 1000);
    sb_free_dev(b, 7, 3, 0x2000);
    sb_exit(b, 8);
    struct model *m = new_model();
    assert_int_equal(load(m, b), 0);

    struct model_table t;
    build_table(m, MODEL_GROUP_SITE, MODEL_SOURCE_NOW, &t);
    assert_int_equal(t.n, 2);
    /* sorted by live bytes: site B first */
    assert_true(strstr(t.rows[0].text, "app+0x300") != NULL);
    assert_int_equal(t.rows[0].live_bytes, 2000);
    assert_int_equal(t.rows[0].live_count, 2);
    const struct model_row *a = &t.rows[1];
    assert_true(strstr(a->text, "app+0x200") != NULL);
    assert_int_equal(a->live_bytes, 250);
    assert_int_equal(a->live_count, 3);
    assert_int_equal(a->allocs, 4);
    assert_int_equal(a->frees, 1);
    assert_int_equal(a->peak_bytes, 350);
    assert_int_equal(a->nstacks, 2);
    assert_int_equal(a->kinds, 1u << CULEAK_KIND_DEVICE);
    assert_string_equal(a->module, APP);

    uint64_t stacks[8];
    int procs[8];
    assert_int_equal(model_row_stacks(m, MODEL_GROUP_SITE, a->id, MODEL_ALL, stacks, procs, 8), 2);
    assert_true((stacks[0] == 3 && stacks[1] == 8) || (stacks[0] == 8 && stacks[1] == 3));
    assert_int_equal(model_stack_row(m, 0, 8, MODEL_GROUP_SITE), a->id);

    struct model_counter c;
    model_totals(m, 0, MODEL_ALL, CULEAK_KIND_DEVICE, &c);
    assert_int_equal(c.live_bytes, 2250);
    assert_int_equal(c.peak_bytes, 2350);
    assert_int_equal(c.allocs, 6);
    assert_int_equal(c.frees, 1);
    const struct model_process *p = model_process(m, 0);
    assert_int_equal(p->pid, 100);
    assert_true(p->exited);
    assert_int_equal(p->argc, 2);
    assert_string_equal(p->argv[1], "--flag");
    assert_string_equal(p->host, "testhost");
    model_table_free(&t);
    model_free(m);
    sb_free(b);
}

static void test_kinds_apart_and_reservations(void **state)
{
    (void)state;
    struct sb *b = standard_prefix(1, NULL);
    sb_alloc(b, 1, 3, 0x1000, 100);
    sb_event(b, (struct sb_ev){.seq = 2, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CUDA_MALLOC_MANAGED,
                               .kind = CULEAK_KIND_MANAGED, .size = 500, .addr = 0x9000, .stack = 3});
    sb_event(b, (struct sb_ev){.seq = 3, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CUDA_MALLOC_HOST,
                               .kind = CULEAK_KIND_HOST_PINNED, .size = 300, .addr = 0x1000, .stack = 5});
    sb_event(b, (struct sb_ev){.seq = 4, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CU_MEM_ADDRESS_RESERVE,
                               .kind = CULEAK_KIND_ADDRESS_RESERVE, .size = 1ull << 30, .addr = 0x1000, .stack = 5});
    sb_event(b, (struct sb_ev){.seq = 5, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CU_MEM_MAP,
                               .kind = CULEAK_KIND_VMM_MAPPED, .size = 1 << 20, .addr = 0x1000, .stack = 5});
    /* cudaFree of the managed pointer: device and managed pointers share one space */
    sb_event(b, (struct sb_ev){.seq = 6, .op = CULEAK_OP_FREE, .api = CULEAK_API_CUDA_FREE,
                               .kind = CULEAK_KIND_DEVICE, .addr = 0x9000, .stack = 3});
    struct model *m = new_model();
    assert_int_equal(load(m, b), 0);
    struct model_counter c;
    model_totals(m, MODEL_ALL, MODEL_ALL, MODEL_KIND_DEVICE_MEMORY, &c);
    assert_int_equal(c.live_bytes, 100);
    assert_int_equal(c.peak_bytes, 600);
    model_totals(m, 0, MODEL_ALL, CULEAK_KIND_HOST_PINNED, &c);
    assert_int_equal(c.live_bytes, 300);
    model_totals(m, 0, MODEL_ALL, CULEAK_KIND_ADDRESS_RESERVE, &c);
    assert_int_equal(c.live_bytes, 1ull << 30);
    model_totals(m, 0, MODEL_ALL, CULEAK_KIND_MANAGED, &c);
    assert_int_equal(c.live_bytes, 0);
    assert_int_equal(c.frees, 1);
    /* the default table holds memory only: the reservation and the mapping are not in it */
    struct model_table t;
    build_table(m, MODEL_GROUP_SITE, MODEL_SOURCE_NOW, &t);
    assert_int_equal(t.total_bytes, 400);
    const struct model_row *bsite = row_with_text(&t, "app+0x300");
    assert_non_null(bsite);
    assert_int_equal(bsite->kinds, 1u << CULEAK_KIND_HOST_PINNED);
    model_table_free(&t);
    struct model_query q;
    model_query_init(&q);
    q.kinds = 1u << CULEAK_KIND_ADDRESS_RESERVE;
    assert_int_equal(model_table_build(m, &q, &t), 0);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.rows[0].live_bytes, 1ull << 30);
    model_table_free(&t);
    model_free(m);
    sb_free(b);
}

static void test_free_all_leaks_at_reset(void **state)
{
    (void)state;
    struct sb *b = standard_prefix(1, NULL);
    sb_event(b, (struct sb_ev){.seq = 1, .op = CULEAK_OP_ALLOC, .kind = CULEAK_KIND_DEVICE, .device = 0,
                               .ctx = 0xc0, .size = 100, .addr = 0x1000, .stack = 3});
    sb_event(b, (struct sb_ev){.seq = 2, .op = CULEAK_OP_ALLOC, .kind = CULEAK_KIND_DEVICE, .device = 0,
                               .ctx = 0xc1, .size = 200, .addr = 0x2000, .stack = 3});
    sb_event(b, (struct sb_ev){.seq = 3, .op = CULEAK_OP_ALLOC, .kind = CULEAK_KIND_DEVICE, .device = 1,
                               .ctx = 0xd0, .size = 400, .addr = 0x3000, .stack = 5});
    /* destroy context c0 of device 0: only the first allocation ends */
    sb_event(b, (struct sb_ev){.seq = 4, .op = CULEAK_OP_FREE_ALL, .api = CULEAK_API_CU_CTX_DESTROY, .device = 0,
                               .ctx = 0xc0});
    struct model *m = new_model();
    assert_int_equal(load(m, b), 0);
    struct model_counter c;
    model_totals(m, 0, 0, CULEAK_KIND_DEVICE, &c);
    assert_int_equal(c.live_bytes, 200);
    assert_int_equal(c.reset_bytes, 100);
    assert_int_equal(c.reset_count, 1);
    sb_free(b);

    /* device reset (ctx 0): everything of device 0 ends */
    b = sb_new();
    sb_event(b, (struct sb_ev){.seq = 5, .op = CULEAK_OP_FREE_ALL, .api = CULEAK_API_CUDA_DEVICE_RESET, .device = 0});
    struct model *m2 = new_model();
    struct sb *full = standard_prefix(1, NULL);
    sb_event(full, (struct sb_ev){.seq = 1, .op = CULEAK_OP_ALLOC, .kind = CULEAK_KIND_DEVICE, .device = 0,
                                  .ctx = 0xc0, .size = 100, .addr = 0x1000, .stack = 3});
    sb_event(full, (struct sb_ev){.seq = 2, .op = CULEAK_OP_ALLOC, .kind = CULEAK_KIND_DEVICE, .device = 0,
                                  .ctx = 0xc1, .size = 200, .addr = 0x2000, .stack = 3});
    sb_event(full, (struct sb_ev){.seq = 3, .op = CULEAK_OP_ALLOC, .kind = CULEAK_KIND_DEVICE, .device = 1,
                                  .ctx = 0xd0, .size = 400, .addr = 0x3000, .stack = 5});
    sb_raw(full, b->buf + CULEAK_MAGIC_LEN, b->n - CULEAK_MAGIC_LEN);
    assert_int_equal(load(m2, full), 0);
    model_totals(m2, 0, 0, CULEAK_KIND_DEVICE, &c);
    assert_int_equal(c.live_bytes, 0);
    assert_int_equal(c.reset_bytes, 300);
    model_totals(m2, 0, 1, CULEAK_KIND_DEVICE, &c);
    assert_int_equal(c.live_bytes, 400);
    /* the leak report counts memory ended by a reset */
    struct model_table t;
    build_table(m2, MODEL_GROUP_SITE, MODEL_SOURCE_LEAKS, &t);
    const struct model_row *a = row_with_text(&t, "app+0x200");
    assert_non_null(a);
    assert_int_equal(a->live_bytes, 300);
    assert_int_equal(a->reset_count, 2);
    assert_int_equal(t.total_bytes, 700);
    model_table_free(&t);
    build_table(m2, MODEL_GROUP_SITE, MODEL_SOURCE_NOW, &t);
    assert_int_equal(t.total_bytes, 400);
    model_table_free(&t);
    int devs[4];
    assert_int_equal(model_devices(m2, 0, devs, 4), 2);
    assert_int_equal(devs[0], 0);
    assert_int_equal(devs[1], 1);
    model_free(m);
    model_free(m2);
    sb_free(b);
    sb_free(full);
}

static void test_failures_and_bad_frees(void **state)
{
    (void)state;
    struct sb *b = standard_prefix(1, NULL);
    sb_alloc(b, 1, 5, 0x1000, 700);
    sb_event(b, (struct sb_ev){.seq = 2, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CUDA_MALLOC,
                               .kind = CULEAK_KIND_DEVICE, .size = 1ull << 40, .result = 2, .stack = 3});
    sb_free_dev(b, 3, 3, 0xdead);            /* unknown */
    sb_event(b, (struct sb_ev){.seq = 4, .op = CULEAK_OP_FREE, .api = CULEAK_API_CUDA_FREE,
                               .kind = CULEAK_KIND_DEVICE, .addr = 0x1000, .result = 1, .stack = 3});
    sb_free_dev(b, 5, 3, 0);                 /* cudaFree(0): not a free */
    sb_alloc(b, 6, 3, 0x1000, 10);           /* same address while live: the old one ends */
    struct model *m = new_model();
    assert_int_equal(load(m, b), 0);
    const struct model_process *p = model_process(m, 0);
    assert_int_equal(p->failed_allocs, 1);
    assert_int_equal(p->unknown_frees, 1);
    assert_int_equal(p->failed_frees, 1);
    assert_int_equal(p->replaced, 1);
    size_t nf;
    const struct model_failure *f = model_failures(m, &nf);
    assert_int_equal(nf, 1);
    assert_int_equal(f[0].size, 1ull << 40);
    assert_int_equal(f[0].stack, 3);
    assert_true(f[0].has_state);
    struct model_query q;
    model_query_init(&q);
    q.source = MODEL_SOURCE_FAILURE;
    q.failure = 0;
    q.only_live = 1;
    struct model_table t;
    assert_int_equal(model_table_build(m, &q, &t), 0);
    assert_int_equal(t.n, 1); /* at the failure only site B's 700 bytes were live */
    assert_int_equal(t.rows[0].live_bytes, 700);
    model_table_free(&t);
    build_table(m, MODEL_GROUP_SITE, MODEL_SOURCE_NOW, &t);
    const struct model_row *a = row_with_text(&t, "app+0x200");
    assert_non_null(a);
    assert_int_equal(a->failed, 1);
    assert_int_equal(a->failed_bytes, 1ull << 40);
    assert_int_equal(a->live_bytes, 10);
    assert_int_equal(t.total_bytes, 10);
    model_table_free(&t);
    model_free(m);
    sb_free(b);
}

static void test_peak_attribution(void **state)
{
    (void)state;
    struct sb *b = standard_prefix(1, NULL);
    sb_alloc(b, 1, 3, 0x1000, 100);
    sb_alloc(b, 2, 5, 0x2000, 200);  /* peak: A 100 + B 200 */
    sb_free_dev(b, 3, 5, 0x2000);
    sb_alloc(b, 4, 3, 0x3000, 50);   /* A 150: below the peak */
    sb_alloc(b, 5, 3, 0x4000, 40);   /* 190: still below */
    struct model *m = new_model();
    assert_int_equal(load(m, b), 0);
    struct model_table t;
    build_table(m, MODEL_GROUP_SITE, MODEL_SOURCE_PEAK, &t);
    assert_int_equal(t.total_bytes, 300);
    assert_int_equal(row_with_text(&t, "app+0x200")->live_bytes, 100);
    assert_int_equal(row_with_text(&t, "app+0x300")->live_bytes, 200);
    model_table_free(&t);
    struct model_counter c;
    model_totals(m, 0, MODEL_ALL, MODEL_KIND_DEVICE_MEMORY, &c);
    assert_int_equal(c.peak_bytes, 300);
    assert_int_equal(c.peak_seq, 2);
    assert_int_equal(c.live_bytes, 190);
    model_free(m);
    sb_free(b);
}

static void test_snapshots_and_diffs(void **state)
{
    (void)state;
    struct model *m = new_model();
    assert_int_equal(model_snapshot_at_mark(m, "iter1", "a"), 0);
    assert_int_equal(model_snapshot_at_mark(m, "iter2", "b"), 0);
    assert_int_equal(model_snapshot_at_mark(m, "3", "after3"), 0);
    struct sb *b = standard_prefix(1, NULL);
    sb_alloc(b, 1, 3, 0x1000, 100);
    sb_mark(b, 2, "iter1");
    sb_alloc(b, 3, 5, 0x2000, 200);
    sb_alloc(b, 4, 8, 0x3000, 10);
    sb_free_dev(b, 5, 3, 0x1000);
    sb_mark(b, 6, "iter2");
    sb_alloc(b, 7, 5, 0x4000, 1000);
    assert_int_equal(load(m, b), 0);
    assert_int_equal(model_snapshot_count(m), 3);
    size_t nmarks;
    const struct model_mark *mk = model_marks(m, 0, &nmarks);
    assert_int_equal(nmarks, 2);
    assert_string_equal(mk[1].label, "iter2");
    assert_int_equal(mk[0].live_bytes, 100);

    struct model_query q;
    model_query_init(&q);
    struct model_diff d;
    assert_int_equal(model_diff(m, "a", "b", &q, &d), 0);
    assert_int_equal(d.n, 2);
    assert_true(strstr(d.rows[0].text, "app+0x300") != NULL); /* +200 first */
    assert_int_equal(d.rows[0].delta_bytes, 200);
    assert_true(strstr(d.rows[1].text, "app+0x200") != NULL); /* 100 -> 10 */
    assert_int_equal(d.rows[1].delta_bytes, -90);
    assert_int_equal(d.rows[1].bytes_a, 100);
    assert_int_equal(d.rows[1].bytes_b, 10);
    assert_int_equal(d.new_count, 2);       /* made after iter1, live at iter2 (and now) */
    assert_int_equal(d.new_bytes, 210);
    assert_int_equal(d.nnew, 2);
    assert_int_equal(d.news[0].stack, 5);
    assert_int_equal(d.news[0].bytes, 200);
    model_diff_free(&d);

    assert_int_equal(model_diff(m, "a", NULL, &q, &d), 0);
    assert_int_equal(d.rows[0].delta_bytes, 1200);
    assert_int_equal(d.new_bytes, 1210);
    model_diff_free(&d);

    /* after event 3: 100 + 200 live */
    q.source = MODEL_SOURCE_SNAPSHOT;
    q.snapshot = "after3";
    struct model_table t;
    assert_int_equal(model_table_build(m, &q, &t), 0);
    assert_int_equal(t.total_bytes, 300);
    model_table_free(&t);
    assert_int_equal(model_diff(m, "nope", NULL, &q, &d), -1);
    assert_int_equal(model_snapshot_take(m, "now"), 0);
    assert_int_equal(model_diff(m, "now", NULL, &q, &d), 0);
    assert_int_equal(d.n, 0);
    assert_int_equal(d.new_count, 0);
    model_diff_free(&d);
    model_snapshot_drop(m, "now");
    assert_int_equal(model_snapshot_find(m, "now"), -1);
    model_free(m);
    sb_free(b);
}

/* A snapshot copied from another, and one taken over from a model of the same stream
 * loaded only up to an earlier point (the console's positions in recordings). */
static void test_snapshot_copy_and_import(void **state)
{
    (void)state;
    struct model *m = new_model(), *early = new_model(), *other = new_model();
    assert_int_equal(model_snapshot_at_mark(m, "iter1", "iter1"), 0);
    struct sb *b = standard_prefix(1, NULL);
    sb_alloc(b, 1, 3, 0x1000, 100);
    sb_mark(b, 2, "iter1");
    assert_int_equal(load(early, b), 0); /* the stream up to iter1 */
    sb_alloc(b, 3, 5, 0x2000, 200);
    sb_alloc(b, 4, 8, 0x3000, 10);
    assert_int_equal(load(m, b), 0);
    struct model_query q;
    model_query_init(&q);
    q.source = MODEL_SOURCE_SNAPSHOT;
    struct model_table t;
    assert_int_equal(model_snapshot_copy(m, "iter1", "mine"), 0);
    assert_int_equal(model_snapshot_copy(m, "nope", "x"), -1);
    q.snapshot = "mine";
    assert_int_equal(model_table_build(m, &q, &t), 0);
    assert_int_equal(t.total_bytes, 100);
    model_table_free(&t);
    assert_int_equal(model_snapshot_import(m, "@early", early), 0);
    q.snapshot = "@early";
    assert_int_equal(model_table_build(m, &q, &t), 0);
    assert_int_equal(t.total_bytes, 100);
    model_table_free(&t);
    struct model_diff d;
    model_query_init(&q);
    assert_int_equal(model_diff(m, "@early", NULL, &q, &d), 0);
    assert_int_equal(d.new_bytes, 210); /* made after the early state, live now */
    model_diff_free(&d);
    /* a model of another process is no prefix of m */
    struct sb *o = standard_prefix(2, NULL);
    sb_alloc(o, 1, 3, 0x1000, 100);
    assert_int_equal(load(other, o), 0);
    assert_int_equal(model_snapshot_import(m, "@other", other), -1);
    model_free(m);
    model_free(early);
    model_free(other);
    sb_free(b);
    sb_free(o);
}

/* A snapshot of a model of the same recording loaded up to a mark, adopted by name. */
static void test_snapshot_adopt(void **state)
{
    (void)state;
    struct model *m = new_model(), *cut = new_model();
    struct sb *b = standard_prefix(1, NULL);
    sb_alloc(b, 1, 3, 0x1000, 100);
    sb_mark(b, 2, "iteration 1");
    sb_alloc(b, 3, 5, 0x2000, 200);
    sb_mark(b, 4, "iteration 2");
    sb_alloc(b, 5, 8, 0x3000, 10);
    assert_int_equal(load(m, b), 0);
    assert_int_equal(model_snapshot_at_mark(cut, "iteration 2", "iteration 2"), 0);
    model_stop_at_mark(cut, "iteration 2");
    assert_int_equal(load(cut, b), MODEL_FEED_STOPPED);
    assert_int_equal(model_snapshot_adopt(m, "it2", cut, "nope"), -1);
    assert_int_equal(model_snapshot_adopt(m, "it2", cut, "iteration 2"), 0);
    struct model_query q;
    model_query_init(&q);
    q.source = MODEL_SOURCE_SNAPSHOT;
    q.snapshot = "it2";
    struct model_table t;
    assert_int_equal(model_table_build(m, &q, &t), 0);
    assert_int_equal(t.total_bytes, 300);
    model_table_free(&t);
    model_free(m);
    model_free(cut);
    sb_free(b);
}

/* The same recording read twice is one process, counted once, and said so; a process
 * with the same pid started again (exec) is another one. */
static void test_same_process_twice(void **state)
{
    (void)state;
    struct model *m = new_model();
    struct sb *b = standard_prefix(7, NULL);
    sb_alloc(b, 1, 3, 0x1000, 100);
    char path[] = "/tmp/culeak-twice-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, b->buf, b->n), (ssize_t)b->n);
    close(fd);
    char err[512] = "";
    assert_int_equal(model_load_file(m, path, err, sizeof err), 0);
    assert_int_equal(model_load_file(m, path, err, sizeof err), 1);
    assert_non_null(strstr(err, "process 7 on testhost is in an earlier recording too: read once"));
    assert_int_equal(model_process_count(m), 1);
    struct model_counter c;
    model_totals(m, MODEL_ALL, MODEL_ALL, MODEL_KIND_DEVICE_MEMORY, &c);
    assert_int_equal(c.live_bytes, 100);
    assert_int_equal(c.allocs, 1);
    struct sb *again = sb_new();
    sb_hello_at(again, 7, APP, NULL, 5000, 9000000);
    sb_module(again, APP, APP_BASE, 0, 0x10000);
    sb_frame(again, 1, 0, A(0x200));
    sb_alloc(again, 1, 1, 0x1000, 30);
    assert_int_equal(load(m, again), 0);
    assert_int_equal(model_process_count(m), 2);
    unlink(path);
    model_free(m);
    sb_free(b);
    sb_free(again);
}

/* Two runs of one program (its recording opened with an earlier one's): 30 leaked in
 * the first, 200 at the peak of the second, never live together: the peak of all, of
 * the device and of the site is 200, not 230. Two processes that overlap still add up. */
static void load_run(struct model *m, uint64_t pid, uint64_t realtime, uint64_t keep, uint64_t peak)
{
    struct sb *b = sb_new();
    sb_hello_at(b, pid, APP, NULL, realtime, 1000000);
    sb_module(b, APP, APP_BASE, 0, 0x10000);
    sb_frame(b, 1, 0, A(0x200));
    sb_alloc(b, 1, 1, 0x1000, keep);
    sb_alloc(b, 2, 1, 0x2000, peak - keep);
    sb_free_dev(b, 3, 1, 0x2000);
    sb_exit(b, 4);
    assert_int_equal(load(m, b), 0);
    sb_free(b);
}

static void test_runs_apart(void **state)
{
    (void)state;
    const uint64_t s = 1000000000ull;
    for (int together = 0; together < 2; together++) {
        struct model *m = new_model();
        load_run(m, 100, 1 * s, 30, 30);                        /* ends about 5 us after its start */
        load_run(m, 200, together ? 1 * s + 2000 : 60 * s, 0, 200); /* a minute later, or during it */
        struct model_counter c;
        model_totals(m, MODEL_ALL, MODEL_ALL, MODEL_KIND_DEVICE_MEMORY, &c);
        assert_int_equal(c.live_bytes, 30);
        assert_int_equal(c.peak_bytes, together ? 230 : 200);
        model_totals(m, MODEL_ALL, 0, MODEL_KIND_DEVICE_MEMORY, &c);
        assert_int_equal(c.peak_bytes, together ? 230 : 200);
        struct model_table t;
        build_table(m, MODEL_GROUP_SITE, MODEL_SOURCE_NOW, &t);
        assert_int_equal(t.n, 1);
        assert_int_equal(t.rows[0].live_bytes, 30);
        assert_int_equal(t.rows[0].peak_bytes, together ? 230 : 200);
        model_table_free(&t);
        model_free(m);
    }
}

static void test_grouping(void **state)
{
    (void)state;
    struct sb *b = standard_prefix(1, NULL);
    sb_alloc(b, 1, 3, 0x1000, 100);
    sb_alloc(b, 2, 8, 0x2000, 50);
    sb_alloc(b, 3, 5, 0x3000, 1);
    struct model *m = new_model();
    assert_int_equal(load(m, b), 0);
    struct model_table t;
    build_table(m, MODEL_GROUP_MODULE, MODEL_SOURCE_NOW, &t);
    assert_int_equal(t.n, 1);
    assert_string_equal(t.rows[0].text, APP);
    assert_int_equal(t.rows[0].live_bytes, 151);
    model_table_free(&t);
    build_table(m, MODEL_GROUP_STACK, MODEL_SOURCE_NOW, &t);
    assert_int_equal(t.n, 3);
    assert_int_equal(t.rows[0].stack, 3);
    assert_int_equal(t.rows[0].proc, 0);
    assert_int_equal(t.rows[2].stack, 5);
    model_table_free(&t);
    /* a text filter and sorting by another field */
    struct model_query q;
    model_query_init(&q);
    q.filter = "APP+0x3";
    assert_int_equal(model_table_build(m, &q, &t), 0);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.rows[0].live_bytes, 1);
    model_table_free(&t);
    q.filter = NULL;
    q.sort = MODEL_FIELD_LIVE_BYTES;
    q.ascending = 1;
    assert_int_equal(model_table_build(m, &q, &t), 0);
    assert_int_equal(t.rows[0].live_bytes, 1);
    model_table_sort(&t, MODEL_FIELD_ALLOCS, 0);
    assert_int_equal(t.rows[0].allocs, 2);
    model_table_free(&t);
    /* ids are stable: the same site keeps its id across rebuilds */
    uint32_t id = model_stack_row(m, 0, 3, MODEL_GROUP_FUNCTION);
    assert_int_equal(model_stack_row(m, 0, 8, MODEL_GROUP_FUNCTION), id);
    assert_int_equal(model_group_by_name("file"), MODEL_GROUP_FILE);
    assert_int_equal(model_field_by_name("peak_bytes"), MODEL_FIELD_PEAK_BYTES);
    model_free(m);
    sb_free(b);
}

static void test_processes_share_sites(void **state)
{
    (void)state;
    struct model *m = new_model();
    struct sb *b0 = standard_prefix(10, "RANK=0");
    sb_alloc(b0, 1, 3, 0x1000, 100);
    /* rank 1: the same binary at another load address */
    struct sb *b1 = sb_new();
    sb_hello(b1, 11, APP, "OMPI_COMM_WORLD_RANK=1");
    sb_module(b1, APP, 0x560000000000ull, 0, 0x10000);
    sb_frame(b1, 1, 0, 0x560000000000ull + 0x200);
    sb_alloc(b1, 1, 1, 0x1000, 30);
    assert_int_equal(load(m, b0), 0);
    assert_int_equal(load(m, b1), 0);
    assert_int_equal(model_process_count(m), 2);
    assert_int_equal(model_process(m, 0)->rank, 0);
    assert_int_equal(model_process(m, 1)->rank, 1);
    struct model_table t;
    build_table(m, MODEL_GROUP_SITE, MODEL_SOURCE_NOW, &t);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.rows[0].live_bytes, 130);
    uint64_t stacks[4];
    int procs[4];
    assert_int_equal(model_row_stacks(m, MODEL_GROUP_SITE, t.rows[0].id, 1, stacks, procs, 4), 1);
    assert_int_equal(stacks[0], 1);
    assert_int_equal(procs[0], 1);
    model_table_free(&t);
    struct model_query q;
    model_query_init(&q);
    q.proc = 1;
    assert_int_equal(model_table_build(m, &q, &t), 0);
    assert_int_equal(t.total_bytes, 30);
    model_table_free(&t);
    model_free(m);
    sb_free(b0);
    sb_free(b1);
}

static void test_vmm_retain(void **state)
{
    (void)state;
    struct sb *b = standard_prefix(1, NULL);
    sb_event(b, (struct sb_ev){.seq = 1, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CU_MEM_CREATE,
                               .kind = CULEAK_KIND_VMM_PHYSICAL, .size = 4096, .addr = 0x77, .stack = 3});
    sb_event(b, (struct sb_ev){.seq = 2, .op = CULEAK_OP_RETAIN, .api = CULEAK_API_CU_MEM_RETAIN_ALLOCATION_HANDLE,
                               .kind = CULEAK_KIND_VMM_PHYSICAL, .addr = 0x77, .stack = 3});
    sb_event(b, (struct sb_ev){.seq = 3, .op = CULEAK_OP_FREE, .api = CULEAK_API_CU_MEM_RELEASE,
                               .kind = CULEAK_KIND_VMM_PHYSICAL, .addr = 0x77, .stack = 3});
    struct model *m = new_model();
    assert_int_equal(load(m, b), 0);
    struct model_counter c;
    model_totals(m, 0, MODEL_ALL, CULEAK_KIND_VMM_PHYSICAL, &c);
    assert_int_equal(c.live_bytes, 4096); /* one reference is left */
    sb_free(b);
    b = sb_new();
    sb_hello(b, 2, APP, NULL);
    sb_event(b, (struct sb_ev){.seq = 1, .op = CULEAK_OP_ALLOC, .kind = CULEAK_KIND_VMM_PHYSICAL, .size = 8,
                               .addr = 0x77});
    sb_event(b, (struct sb_ev){.seq = 2, .op = CULEAK_OP_FREE, .kind = CULEAK_KIND_VMM_PHYSICAL, .addr = 0x77});
    assert_int_equal(load(m, b), 0);
    model_totals(m, 1, MODEL_ALL, CULEAK_KIND_VMM_PHYSICAL, &c);
    assert_int_equal(c.live_bytes, 0);
    model_free(m);
    sb_free(b);
}

static void test_bad_input(void **state)
{
    (void)state;
    struct sb *b = standard_prefix(1, NULL);
    sb_frame(b, 1000000000, 0, 0x1);  /* absurd id: ignored */
    sb_frame(b, 9, 42, 0x1);          /* parent after child: ignored */
    sb_alloc(b, 1, 999, 0x1000, 5);   /* unknown stack: counted at the empty stack */
    sb_alloc(b, 2, 3, 0x2000, 7);
    size_t cut = b->n;
    sb_alloc(b, 3, 3, 0x3000, 11);
    struct model *m = new_model();
    struct model_stream *s = model_stream_open(m);
    /* cut inside the last record: everything before it is kept */
    assert_int_equal(model_stream_feed(s, b->buf, cut + 3), MODEL_FEED_OK);
    assert_int_equal(model_stream_finish(s), 1);
    assert_non_null(strstr(model_stream_error(s), "cut off at offset"));
    model_stream_close(s);
    const struct model_process *p = model_process(m, 0);
    assert_true(p->truncated);
    assert_int_equal(p->bad_frames, 2);
    assert_int_equal(p->bad_stacks, 1);
    assert_int_equal(p->events, 2);
    struct model_counter c;
    model_totals(m, 0, MODEL_ALL, CULEAK_KIND_DEVICE, &c);
    assert_int_equal(c.live_bytes, 12);
    struct model_table t;
    build_table(m, MODEL_GROUP_SITE, MODEL_SOURCE_NOW, &t);
    assert_non_null(row_with_text(&t, "(no stack)"));
    model_table_free(&t);

    /* corrupt: a record length beyond the limit */
    struct sb *bad = standard_prefix(2, NULL);
    size_t at = bad->n;
    uint8_t junk[] = {CULEAK_REC_EVENT, 0xff, 0xff, 0xff, 0xff, 0x7f};
    sb_raw(bad, junk, sizeof junk);
    s = model_stream_open(m);
    assert_int_equal(model_stream_feed(s, bad->buf, bad->n), MODEL_FEED_CORRUPT);
    char want[64];
    snprintf(want, sizeof want, "offset %zu", at);
    assert_non_null(strstr(model_stream_error(s), want));
    assert_true(model_process(m, 1)->corrupt);
    model_stream_close(s);

    /* newer format */
    struct sb *newer = sb_new();
    sb_u(newer, CULEAK_FORMAT_VERSION + 1);
    sb_end(newer, CULEAK_REC_HELLO);
    s = model_stream_open(m);
    assert_int_equal(model_stream_feed(s, newer->buf, newer->n), MODEL_FEED_CORRUPT);
    assert_non_null(strstr(model_stream_error(s), "newer"));
    model_stream_close(s);
    model_free(m);
    sb_free(b);
    sb_free(bad);
    sb_free(newer);
}

static void test_timeline_and_stop(void **state)
{
    (void)state;
    struct model_options o = {.timeline_capacity = 8, .timeline_step_ns = 1000};
    struct model *m = model_new(&o);
    struct sb *b = standard_prefix(1, NULL);
    uint64_t seq = 1;
    for (int i = 0; i < 100; i++)
        sb_alloc(b, seq++, 3, 0x1000 + (uint64_t)i * 0x100, 10);
    sb_mark(b, seq++, "stop-here");
    sb_alloc(b, seq++, 3, 0x100000, 10);
    model_stop_at_mark(m, "stop-here");
    struct model_stream *s = model_stream_open(m);
    assert_int_equal(model_stream_feed(s, b->buf, b->n), MODEL_FEED_STOPPED);
    model_stream_close(s);
    struct model_sample samples[16];
    size_t n = model_timeline(m, 0, MODEL_ALL, samples, 16);
    assert_true(n >= 2 && n <= 8); /* 100 µs of samples folded into 8 intervals */
    assert_int_equal(samples[n - 1].live_bytes, 1000);
    assert_int_equal(samples[n - 1].max_bytes, 1000);
    assert_int_equal(samples[n - 1].events, 100);
    for (size_t i = 1; i < n; i++)
        assert_true(samples[i].t_ns > samples[i - 1].t_ns);
    assert_true(model_event_rate(m, 0, 0) > 0);
    assert_int_equal(model_timeline(m, 0, 0, NULL, 0), n); /* device 0 has its own series */
    model_free(m);
    sb_free(b);
}

/* Once in buckets, a change at the very start of the next interval opens that interval:
 * 4 samples of room, a step of 1 us: six allocations 1 us apart make buckets of 2 us, the
 * sixth the start of a bucket of its own. */
static void test_timeline_bucket_boundary(void **state)
{
    (void)state;
    struct model_options o = {.timeline_capacity = 4, .timeline_step_ns = 1000};
    struct model *m = model_new(&o);
    struct sb *b = standard_prefix(1, NULL);
    for (uint64_t i = 1; i <= 6; i++)
        sb_alloc(b, i, 3, 0x1000 * i, 10);
    assert_int_equal(load(m, b), MODEL_FEED_OK);
    struct model_sample s[8];
    size_t n = model_timeline(m, 0, MODEL_ALL, s, 8);
    assert_int_equal(n, 4);
    for (size_t i = 1; i < n; i++)
        assert_int_equal(s[i].t_ns, s[i - 1].t_ns + 2000);
    assert_int_equal(s[2].live_bytes, 50); /* the 4th and 5th allocations' bucket */
    assert_int_equal(s[3].live_bytes, 60); /* the 6th's own */
    model_free(m);
    sb_free(b);
}

/* A long series is thinned into time buckets that keep their extremes: a 1 MiB spike among
 * a hundred 4 KiB allocations freed at once is a bucket's most, the freed state its least. */
static void test_timeline_buckets_keep_extremes(void **state)
{
    (void)state;
    struct model_options o = {.timeline_capacity = 8, .timeline_step_ns = 1000};
    struct model *m = model_new(&o);
    struct sb *b = standard_prefix(1, NULL);
    uint64_t seq = 1;
    for (int i = 0; i < 100; i++) {
        sb_alloc(b, seq++, 3, 0x1000, i == 50 ? 1u << 20 : 4096);
        sb_free_dev(b, seq++, 3, 0x1000);
    }
    assert_int_equal(load(m, b), MODEL_FEED_OK);
    struct model_sample s[16];
    size_t n = model_timeline(m, 0, MODEL_ALL, s, 16);
    assert_true(n >= 2 && n <= 8);
    uint64_t most = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(s[i].min_bytes, 0);
        assert_true(s[i].max_bytes >= 4096);
        most = s[i].max_bytes > most ? s[i].max_bytes : most;
    }
    assert_int_equal(most, 1u << 20);
    assert_int_equal(s[n - 1].live_bytes, 0);
    model_free(m);
    sb_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_site_aggregation),
        cmocka_unit_test(test_timeline_buckets_keep_extremes),
        cmocka_unit_test(test_timeline_bucket_boundary),
        cmocka_unit_test(test_kinds_apart_and_reservations),
        cmocka_unit_test(test_free_all_leaks_at_reset),
        cmocka_unit_test(test_failures_and_bad_frees),
        cmocka_unit_test(test_peak_attribution),
        cmocka_unit_test(test_snapshots_and_diffs), cmocka_unit_test(test_snapshot_copy_and_import),
        cmocka_unit_test(test_snapshot_adopt), cmocka_unit_test(test_same_process_twice),
        cmocka_unit_test(test_runs_apart),
        cmocka_unit_test(test_grouping),
        cmocka_unit_test(test_processes_share_sites),
        cmocka_unit_test(test_vmm_retain),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_timeline_and_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
