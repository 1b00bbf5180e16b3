/* The model on pool blocks and Python sites: a Python site is the first line outside
 * installed packages, shown with the innermost library line ("via"); my_code makes an
 * installed package the program's own; a site's blocks and its segment are rows apart and
 * never added together; blocks live at exit are not leaks; diffs count blocks apart. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "model/model.h"
#include "report/report.h"
#include "model/suspects.h"
#include "stream_builder.h"
#include "model_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRAIN "/home/me/train.py"
#define LIB "/opt/venv/lib/python3.12/site-packages/zoo/layers.py"
#define LIB_OUTER "/opt/venv/lib/python3.12/site-packages/zoo/model.py"
#define TORCH "/opt/venv/lib/python3.12/site-packages/torch/nn/functional.py"

static void sb_pyframe(struct sb *b, uint64_t id, const char *file, const char *fn, uint64_t line)
{
    sb_u(b, id);
    sb_s(b, file);
    sb_s(b, fn);
    sb_u(b, line);
    sb_u(b, 1);
    sb_end(b, CULEAK_REC_PYFRAME);
}

static void ev(struct sb *b, uint64_t seq, unsigned op, unsigned kind, uint64_t addr, uint64_t size, uint64_t stack)
{
    unsigned api = kind == CULEAK_KIND_BLOCK ? (op == CULEAK_OP_ALLOC ? CULEAK_API_TORCH_BLOCK_ALLOC
                                                                       : CULEAK_API_TORCH_BLOCK_FREE)
                                             : (op == CULEAK_OP_ALLOC ? CULEAK_API_CUDA_MALLOC : CULEAK_API_CUDA_FREE);
    sb_event(b, (struct sb_ev){.seq = seq, .dt = 1000, .op = op, .api = api, .kind = kind, .size = size,
                               .addr = addr, .stack = stack});
}

static void feed_job(struct model *m, uint64_t pid);

/* One stack: torch's functional.py:10 <- zoo/layers.py:7 <- zoo/model.py:20 <- train.py:13
 * (innermost first). A 2 MiB segment, then a 4 KiB block per iteration, marks around them. */
static struct model *blocks_model(const char *my_code)
{
    struct model_options o = {.my_code = my_code};
    struct model *m = model_new(&o);
    assert_non_null(m);
    const char *marks[] = {"iteration 0", "iteration 1", "iteration 3"};
    for (int i = 0; i < 3; i++)
        assert_int_equal(model_snapshot_at_mark(m, marks[i], marks[i]), 0);
    feed_job(m, 100);
    return m;
}

/* The job of blocks_model() as process pid. */
static void feed_job(struct model *m, uint64_t pid)
{
    struct sb *b = sb_new();
    sb_hello(b, pid, "/usr/bin/python3", NULL);
    sb_pyframe(b, 1, TORCH, "linear", 10);
    sb_pyframe(b, 2, LIB, "Layer.forward", 7);
    sb_pyframe(b, 3, LIB_OUTER, "Model.forward", 20);
    sb_pyframe(b, 4, TRAIN, "<module>", 13);
    sb_frame(b, 1, 0, CULEAK_PYFRAME_TAG | 4);
    sb_frame(b, 2, 1, CULEAK_PYFRAME_TAG | 3);
    sb_frame(b, 3, 2, CULEAK_PYFRAME_TAG | 2);
    sb_frame(b, 4, 3, CULEAK_PYFRAME_TAG | 1);
    uint64_t seq = 1;
    sb_mark(b, seq++, "iteration 0");
    ev(b, seq++, CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE, 0x100000, 2 << 20, 4);
    for (int i = 0; i < 4; i++) {
        ev(b, seq++, CULEAK_OP_ALLOC, CULEAK_KIND_BLOCK, 0x100000 + 4096 * (uint64_t)i, 4096, 4);
        char label[32];
        snprintf(label, sizeof label, "iteration %d", i + 1);
        sb_mark(b, seq++, label);
    }
    sb_exit(b, seq);
    feed_all(m, b);
}

/* Rows that need texts only (the console's frames) keep the via line, by site and by
 * stack, before the names are resolved (none yet) and after. */
static void test_texts_only_rows_keep_via_line(void **state)
{
    (void)state;
    struct model *m = blocks_model(NULL);
    for (int resolved = 0; resolved < 2; resolved++) {
        for (int g = 0; g < 2; g++) {
            struct model_query q;
            model_query_init(&q);
            q.group = g ? MODEL_GROUP_STACK : MODEL_GROUP_SITE;
            q.lazy_names = 1;
            q.texts_only = 1;
            struct model_table t;
            assert_int_equal(model_table_build(m, &q, &t), 0);
            assert_int_equal(t.n, 2);
            for (size_t i = 0; i < t.n; i++) {
                assert_int_equal(t.rows[i].named, resolved);
                assert_true((strstr(t.rows[i].text, "train.py:13, via zoo/layers.py:7") != NULL) == resolved);
                if (resolved)
                    assert_string_equal(t.rows[i].via, "zoo/layers.py:7");
                assert_null(t.rows[i].function);
            }
            model_table_free(&t);
        }
        model_resolve_names(m, SIZE_MAX, 0);
    }
    model_free(m);
}

static void test_user_line_via_library_line(void **state)
{
    (void)state;
    struct model *m = blocks_model(NULL);
    struct model_query q;
    model_query_init(&q);
    struct model_table t;
    assert_int_equal(model_table_build(m, &q, &t), 0);
    assert_int_equal(t.n, 2); /* the segment and the blocks: rows apart, one site */
    for (size_t i = 0; i < t.n; i++) {
        assert_string_equal(t.rows[i].file, TRAIN);
        assert_int_equal(t.rows[i].line, 13);
        /* the innermost library line; torch's own line is not a "via" */
        assert_string_equal(t.rows[i].via, "zoo/layers.py:7");
        assert_non_null(strstr(t.rows[i].text, "train.py:13, via zoo/layers.py:7"));
        assert_int_equal(t.rows[i].id, t.rows[0].id);
    }
    int blocks = t.rows[0].kinds == 1u << CULEAK_KIND_BLOCK ? 0 : 1, seg = !blocks;
    assert_int_equal(t.rows[blocks].kinds, 1u << CULEAK_KIND_BLOCK);
    assert_int_equal(t.rows[blocks].live_bytes, 4 * 4096);
    assert_int_equal(t.rows[seg].live_bytes, 2 << 20);
    assert_int_equal(t.total_bytes, 2 << 20); /* the blocks lie inside the segment */
    model_table_free(&t);
    model_free(m);
}

static void test_my_code_makes_the_library_line_the_site(void **state)
{
    (void)state;
    struct model *m = blocks_model("/opt/venv/lib/python3.12/site-packages/zoo/layers");
    struct model_query q;
    model_query_init(&q);
    struct model_table t;
    assert_int_equal(model_table_build(m, &q, &t), 0);
    assert_true(t.n > 0);
    assert_string_equal(t.rows[0].file, LIB);
    assert_int_equal(t.rows[0].line, 7);
    assert_null(t.rows[0].via);
    model_table_free(&t);
    model_free(m);
}

static void test_blocks_are_not_leaks(void **state)
{
    (void)state;
    struct model *m = blocks_model(NULL);
    struct model_query q;
    model_query_init(&q);
    q.source = MODEL_SOURCE_LEAKS;
    struct model_table t;
    assert_int_equal(model_table_build(m, &q, &t), 0);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.rows[0].kinds, 1u << CULEAK_KIND_DEVICE);
    model_table_free(&t);
    model_free(m);
}

static void test_diff_counts_blocks_apart(void **state)
{
    (void)state;
    struct model *m = blocks_model(NULL);
    struct model_query q;
    model_query_init(&q);
    struct model_diff d;
    /* two more blocks, nothing else */
    assert_int_equal(model_diff(m, "iteration 1", "iteration 3", &q, &d), 0);
    assert_int_equal(d.n, 1);
    assert_true(d.rows[0].blocks);
    assert_int_equal(d.rows[0].delta_bytes, 2 * 4096);
    assert_string_equal(d.rows[0].via, "zoo/layers.py:7");
    assert_int_equal(d.delta_bytes, 0);
    assert_int_equal(d.delta_block_bytes, 2 * 4096);
    model_diff_free(&d);
    /* from before the segment: the segment's row and the blocks' row, each counted once */
    assert_int_equal(model_diff(m, "iteration 0", "iteration 3", &q, &d), 0);
    assert_int_equal(d.n, 2);
    assert_int_equal(d.delta_bytes, 2 << 20);
    assert_int_equal(d.delta_block_bytes, 3 * 4096);
    assert_int_equal(d.new_bytes, 2 << 20);
    assert_int_equal(d.new_count, 1);
    assert_int_equal(d.new_block_bytes, 3 * 4096);
    assert_int_equal(d.new_block_count, 3);
    assert_int_not_equal(d.rows[0].blocks, d.rows[1].blocks);
    model_diff_free(&d);
    model_free(m);
}

#define C10 "/opt/venv/lib/python3.12/site-packages/torch/lib/libc10_cuda.so"
#define C10_BASE 0x7f0000000000ull

/* A process whose segment is taken inside libc10_cuda (the caching allocator) below the
 * user's line: with blocks (tensor tracking on) a 2 MiB segment at iteration 0 and a 4 KiB
 * block at each of `steps` iterations (with segment_each, a segment more at each); without,
 * the segments alone. */
static struct model *load_pool(int blocks, int steps, int segment_each)
{
    struct model *m = model_new(NULL);
    assert_non_null(m);
    const char *marks[] = {"iteration 0", "iteration 1", "iteration 3"};
    for (int i = 0; i < 3; i++)
        assert_int_equal(model_snapshot_at_mark(m, marks[i], marks[i]), 0);
    struct sb *b = sb_new();
    sb_hello(b, 100, "/usr/bin/python3", NULL);
    sb_module(b, C10, C10_BASE, 0, 0x10000);
    sb_pyframe(b, 4, TRAIN, "<module>", 13);
    sb_frame(b, 1, 0, CULEAK_PYFRAME_TAG | 4);
    sb_frame(b, 2, 1, C10_BASE + 0x1234); /* the segment: inside the allocator */
    uint64_t seq = 1;
    sb_mark(b, seq++, "iteration 0");
    ev(b, seq++, CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE, 0x100000, 2 << 20, 2);
    for (int i = 0; i < steps; i++) {
        if (segment_each && i) /* a segment more for each block */
            ev(b, seq++, CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE, 0x10000000 + ((uint64_t)i << 21), 2 << 20, 2);
        if (blocks)
            ev(b, seq++, CULEAK_OP_ALLOC, CULEAK_KIND_BLOCK, 0x100000 + 4096 * (uint64_t)i, 4096, 1);
        char label[32];
        snprintf(label, sizeof label, "iteration %d", i + 1);
        sb_mark(b, seq++, label);
    }
    sb_exit(b, seq);
    feed_all(m, b);
    return m;
}

/* One row per cause: the blocks at the user's line, the segment the pool took for them as
 * the pool's own row (never a second row at that line), in tables of every source and in
 * diffs; totals as torch.cuda.memory_allocated() and memory_reserved() read them. */
static void test_pool_segments_are_the_pools_row(void **state)
{
    (void)state;
    struct model *m = load_pool(1, 4, 0);
    struct model_query q;
    model_query_init(&q);
    struct model_table t;
    assert_int_equal(model_table_build(m, &q, &t), 0);
    assert_int_equal(t.n, 2);
    const struct model_row *blk = t.rows[0].pool ? &t.rows[1] : &t.rows[0], *pool = t.rows[0].pool ? &t.rows[0] : &t.rows[1];
    assert_int_equal(blk->kinds, 1u << CULEAK_KIND_BLOCK);
    assert_int_equal(blk->pool, MODEL_CACHE_NONE);
    assert_string_equal(blk->text, "<module> at " TRAIN ":13");
    assert_int_equal(pool->pool, MODEL_CACHE_PYTORCH);
    assert_int_equal(pool->kinds, 1u << CULEAK_KIND_DEVICE);
    assert_string_equal(pool->text, "pytorch caching allocator: reserved");
    assert_int_equal(pool->live_bytes, 2 << 20);
    assert_int_not_equal(pool->id, blk->id);
    assert_int_equal(t.memory.pools, 1u << MODEL_CACHE_PYTORCH);
    assert_int_equal(t.memory.allocated_bytes, 4 * 4096);
    assert_int_equal(t.memory.allocated_blocks, 4);
    assert_int_equal(t.memory.reserved_bytes, 2 << 20);
    assert_int_equal(t.memory.reserved_segments, 1);
    assert_int_equal(t.memory.other_bytes, 0);
    assert_int_equal(t.total_bytes, 2 << 20); /* live: reserved + other */
    model_table_free(&t);
    struct model_memory now;
    model_memory_now(m, MODEL_ALL, &now);
    assert_int_equal(now.allocated_bytes, 4 * 4096);
    assert_int_equal(now.reserved_bytes, 2 << 20);
    /* by function, file, module and stack too: the segment is the pool's row */
    for (int g = MODEL_GROUP_FUNCTION; g < MODEL_GROUP_COUNT; g++) {
        q.group = (enum model_group)g;
        assert_int_equal(model_table_build(m, &q, &t), 0);
        assert_int_equal(t.n, 2);
        assert_int_equal(t.rows[0].pool + t.rows[1].pool, MODEL_CACHE_PYTORCH);
        assert_int_not_equal(t.rows[0].id, t.rows[1].id);
        model_table_free(&t);
    }
    /* at exit: the pool's cache, no site's */
    q.group = MODEL_GROUP_SITE;
    q.source = MODEL_SOURCE_LEAKS;
    assert_int_equal(model_table_build(m, &q, &t), 0);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.rows[0].pool, MODEL_CACHE_PYTORCH);
    assert_int_equal(t.rows[0].cache, MODEL_CACHE_PYTORCH);
    model_table_free(&t);
    /* the diff from before the segment: the blocks' row and the pool's, each side in
     * PyTorch's words, the segment made since counted as the pool's */
    model_query_init(&q);
    struct model_diff d;
    assert_int_equal(model_diff(m, "iteration 0", "iteration 3", &q, &d), 0);
    assert_int_equal(d.n, 2);
    assert_int_equal(d.rows[0].pool + d.rows[1].pool, MODEL_CACHE_PYTORCH);
    assert_int_equal(d.rows[0].blocks + d.rows[1].blocks, 1);
    assert_int_equal(d.a.pools, 1u << MODEL_CACHE_PYTORCH);
    assert_int_equal(d.a.allocated_bytes, 0);
    assert_int_equal(d.a.reserved_bytes, 0);
    assert_int_equal(d.b.allocated_bytes, 3 * 4096);
    assert_int_equal(d.b.allocated_blocks, 3);
    assert_int_equal(d.b.reserved_bytes, 2 << 20);
    assert_int_equal(d.b.reserved_segments, 1);
    assert_int_equal(d.b.other_bytes, 0);
    assert_int_equal(d.delta_bytes, (int64_t)(d.b.reserved_bytes + d.b.other_bytes));
    assert_int_equal(d.new_reserved_bytes, 2 << 20);
    assert_int_equal(d.new_reserved_count, 1);
    assert_int_equal(d.new_bytes, 0);
    assert_int_equal(d.nnew, 1);
    assert_true(d.news[0].blocks);
    model_diff_free(&d);
    model_free(m);
}

/* Without block events (tracking off, --no-pool) the segment is a site's row as before:
 * nothing says allocated or reserved. */
static void test_untracked_segments_stay_sites(void **state)
{
    (void)state;
    struct model *m = load_pool(0, 4, 0);
    struct model_query q;
    model_query_init(&q);
    struct model_table t;
    assert_int_equal(model_table_build(m, &q, &t), 0);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.rows[0].pool, MODEL_CACHE_NONE);
    assert_string_equal(t.rows[0].text, "<module> at " TRAIN ":13");
    assert_int_equal(t.memory.pools, 0);
    assert_int_equal(t.memory.reserved_bytes, 0);
    model_table_free(&t);
    struct model_diff d;
    assert_int_equal(model_diff(m, "iteration 0", "iteration 3", &q, &d), 0);
    assert_int_equal(d.n, 1);
    assert_int_equal(d.rows[0].pool, MODEL_CACHE_NONE);
    assert_int_equal(d.a.pools, 0);
    assert_int_equal(d.new_bytes, 2 << 20);
    assert_int_equal(d.new_reserved_bytes, 0);
    model_diff_free(&d);
    model_free(m);
}

/* The segments grow with the blocks at every mark: the blocks are the one suspect at the
 * user's line; without tracking the segments are. */
static void test_pool_segments_are_no_second_suspect(void **state)
{
    (void)state;
    for (int blocks = 1; blocks >= 0; blocks--) {
        struct model *m = load_pool(blocks, 8, 1);
        struct model_suspects sus;
        assert_int_equal(model_suspects(m, MODEL_ALL, 1, &sus), 0);
        assert_int_equal(sus.n, 1);
        assert_int_equal(sus.v[0].kind, blocks ? CULEAK_KIND_BLOCK : MODEL_KIND_DEVICE_MEMORY);
        assert_string_equal(sus.v[0].text, "<module> at " TRAIN ":13");
        model_suspects_free(&sus);
        model_free(m);
    }
}

/* A diff over several processes sums up, as the diff of one does, what the pools allocated
 * and reserved: each process's pool handed out 3 blocks of 4 KiB from iteration 0 to 3
 * (from a segment of its own stack: outside the pools, not reserved). */
static void test_diff_of_processes_says_pools(void **state)
{
    (void)state;
    struct model *m = blocks_model(NULL);
    feed_job(m, 101);
    struct report_options o;
    report_options_init(&o);
    o.what = REPORT_DIFF;
    o.diff_a = "iteration 0";
    o.diff_b = "iteration 3";
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(report_text(f, m, &o, NULL), 0);
    fclose(f);
    const char *sum = strstr(buf, "\nDIFF SUMMARY: ");
    assert_non_null(sum);
    assert_non_null(strstr(sum, "2 processes; the pools: allocated +24.0 KiB (24576 bytes), reserved +0 bytes\n"));
    free(buf);
    model_free(m);
}

/* Beside load_pool's process (its pool tracked): process 200 allocates at an address in
 * no module (JIT code), process 300 registers host memory from libtorch_cuda through the
 * CUDA runtime. The pools' figures of all processes are the tracked process's; the pool's
 * row is its own by module too, apart from the memory in no module; the host memory
 * libtorch_cuda registers through the runtime is its host cache at exit, not a leak. */
static void test_pool_rows_beside_other_processes(void **state)
{
    (void)state;
    struct model *m = load_pool(1, 4, 0);
    struct sb *b = sb_new();
    sb_hello(b, 200, "/usr/bin/jit", NULL);
    sb_frame(b, 1, 0, 0x1234); /* in no module */
    ev(b, 1, CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE, 0x900000, 1 << 20, 1);
    sb_exit(b, 2);
    feed_all(m, b);
    b = sb_new();
    sb_hello(b, 300, "/usr/bin/python3", NULL);
    sb_module(b, "/opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so", 0x7e0000000000ull, 0, 0x10000);
    sb_module(b, "/opt/venv/lib/python3.12/site-packages/nvidia/cuda_runtime/lib/libcudart.so.13", 0x7d0000000000ull,
              0, 0x10000);
    sb_frame(b, 1, 0, 0x7e0000000100ull);    /* libtorch_cuda */
    sb_frame(b, 2, 1, 0x7d0000000200ull);    /* libcudart, which asked the driver */
    sb_event(b, (struct sb_ev){.seq = 1, .dt = 1000, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CU_MEM_HOST_REGISTER,
                               .kind = CULEAK_KIND_HOST_REGISTERED, .size = 65536, .addr = 0xa00000, .stack = 2});
    sb_exit(b, 2);
    feed_all(m, b);
    struct model_memory now;
    model_memory_now(m, MODEL_ALL, &now);
    assert_int_equal(now.pools, 1u << MODEL_CACHE_PYTORCH);
    assert_int_equal(now.allocated_bytes, 4 * 4096);
    assert_int_equal(now.reserved_bytes, 2 << 20);
    struct model_query q;
    model_query_init(&q);
    q.group = MODEL_GROUP_MODULE;
    struct model_table t;
    assert_int_equal(model_table_build(m, &q, &t), 0);
    int pool_rows = 0, jit_bytes = 0;
    for (size_t i = 0; i < t.n; i++) {
        pool_rows += t.rows[i].pool == MODEL_CACHE_PYTORCH;
        if (t.rows[i].pool == MODEL_CACHE_PYTORCH)
            assert_int_equal(t.rows[i].live_bytes, 2 << 20);
        else if (t.rows[i].live_bytes == 1 << 20)
            jit_bytes++;
    }
    assert_int_equal(pool_rows, 1);
    assert_int_equal(jit_bytes, 1);
    model_table_free(&t);
    q.group = MODEL_GROUP_SITE;
    q.source = MODEL_SOURCE_LEAKS;
    q.proc = 2;
    assert_int_equal(model_table_build(m, &q, &t), 0);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.rows[0].cache, MODEL_CACHE_PYTORCH);
    model_table_free(&t);
    model_free(m);
}

/* One process, two caching allocators: PyTorch's reports its blocks, CuPy's does not (its
 * segment taken inside cupy/cuda/memory). Only PyTorch's segment is a pool's reserved
 * memory; CuPy's stays at its call site, memory outside the pools. */
static void test_untracked_pool_beside_a_tracked_one(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    assert_non_null(m);
    struct sb *b = sb_new();
    sb_hello(b, 100, "/usr/bin/python3", NULL);
    sb_module(b, C10, C10_BASE, 0, 0x10000);
    sb_module(b, "/opt/venv/lib/python3.12/site-packages/cupy/cuda/memory.cpython-312-x86_64-linux-gnu.so",
              0x7e0000000000ull, 0, 0x10000);
    sb_pyframe(b, 4, TRAIN, "<module>", 13);
    sb_frame(b, 1, 0, CULEAK_PYFRAME_TAG | 4);
    sb_frame(b, 2, 1, C10_BASE + 0x1234);        /* PyTorch's segment */
    sb_frame(b, 3, 1, 0x7e0000000100ull);        /* CuPy's */
    ev(b, 1, CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE, 0x100000, 2 << 20, 2);
    ev(b, 2, CULEAK_OP_ALLOC, CULEAK_KIND_BLOCK, 0x100000, 4096, 1);
    ev(b, 3, CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE, 0x800000, 1 << 20, 3);
    sb_exit(b, 4);
    feed_all(m, b);
    struct model_memory now;
    model_memory_now(m, MODEL_ALL, &now);
    assert_int_equal(now.pools, 1u << MODEL_CACHE_PYTORCH);
    assert_int_equal(now.reserved_bytes, 2 << 20);
    assert_int_equal(now.reserved_segments, 1);
    assert_int_equal(now.other_bytes, 1 << 20);
    struct model_query q;
    model_query_init(&q);
    struct model_table t;
    assert_int_equal(model_table_build(m, &q, &t), 0);
    int cupy_rows = 0;
    for (size_t i = 0; i < t.n; i++)
        if (t.rows[i].live_bytes == 1 << 20) {
            cupy_rows++;
            assert_int_equal(t.rows[i].pool, MODEL_CACHE_NONE);
        }
    assert_int_equal(cupy_rows, 1);
    model_table_free(&t);
    model_free(m);
}

/* CuPy's pool reporting its blocks: CuPy's pool is the one tracked, not PyTorch's. */
static void test_cupy_blocks_track_cupys_pool(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    assert_non_null(m);
    struct sb *b = sb_new();
    sb_hello(b, 100, "/usr/bin/python3", NULL);
    sb_pyframe(b, 4, TRAIN, "<module>", 13);
    sb_frame(b, 1, 0, CULEAK_PYFRAME_TAG | 4);
    sb_event(b, (struct sb_ev){.seq = 1, .dt = 1000, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CUPY_BLOCK_ALLOC,
                               .kind = CULEAK_KIND_BLOCK, .size = 4096, .addr = 0x100000, .stack = 1});
    sb_exit(b, 2);
    feed_all(m, b);
    struct model_memory now;
    model_memory_now(m, MODEL_ALL, &now);
    assert_int_equal(now.pools, 1u << MODEL_CACHE_CUPY);
    assert_int_equal(now.allocated_bytes, 4096);
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diff_of_processes_says_pools),
        cmocka_unit_test(test_user_line_via_library_line),
        cmocka_unit_test(test_texts_only_rows_keep_via_line),
        cmocka_unit_test(test_my_code_makes_the_library_line_the_site),
        cmocka_unit_test(test_blocks_are_not_leaks),
        cmocka_unit_test(test_diff_counts_blocks_apart),
        cmocka_unit_test(test_pool_segments_are_the_pools_row),
        cmocka_unit_test(test_untracked_pool_beside_a_tracked_one),
        cmocka_unit_test(test_cupy_blocks_track_cupys_pool),
        cmocka_unit_test(test_pool_rows_beside_other_processes),
        cmocka_unit_test(test_untracked_segments_stay_sites),
        cmocka_unit_test(test_pool_segments_are_no_second_suspect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
