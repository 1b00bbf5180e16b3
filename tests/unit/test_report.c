/* Report output: the JSON fields tools rely on, the text summary line, human sizes,
 * folded stacks, cache memory kept apart from leaks, diffs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "report/report.h"
#include "model/suppress.h"
#include "stream_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define APP "/opt/app/bin/app"
#define TORCH "/opt/torch/lib/libc10_cuda.so"

static struct model *load_leaky(void)
{
    struct model *m = model_new(NULL);
    struct sb *b = sb_new();
    sb_hello(b, 42, APP, "RANK=2");
    sb_module(b, APP, 0x400000, 0, 0x10000);
    sb_module(b, TORCH, 0x7f0000000000ull, 0, 0x10000);
    sb_frame(b, 1, 0, 0x400100);                 /* main */
    sb_frame(b, 2, 1, 0x400200);                 /* site A */
    sb_frame(b, 3, 1, 0x400300);                 /* site B */
    sb_frame(b, 4, 3, 0x7f0000000500ull);        /* inside the caching allocator */
    sb_alloc(b, 1, 2, 0x1000, 4 << 20);
    sb_alloc(b, 2, 2, 0x2000, 100);
    sb_alloc(b, 3, 2, 0x3000, 5);
    sb_free_dev(b, 4, 2, 0x3000);
    sb_mark(b, 5, "iter1");
    sb_alloc(b, 6, 4, 0x4000, 1 << 30);          /* cache: through libc10_cuda */
    sb_mark(b, 7, "iter2");
    sb_exit(b, 8);
    struct model_stream *s = model_stream_open(m);
    assert_int_equal(model_stream_feed(s, b->buf, b->n), 0);
    assert_int_equal(model_stream_finish(s), 0);
    model_stream_close(s);
    sb_free(b);
    return m;
}

static char *run_report(struct model *m, const struct report_options *o, const char *format,
                        struct report_summary *sum)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    int rc = !strcmp(format, "json")     ? report_json(f, m, o, sum)
             : !strcmp(format, "folded") ? report_folded(f, m, o)
                                         : report_text(f, m, o, sum);
    assert_int_equal(rc, 0);
    fclose(f);
    return buf;
}

static void test_json_fields(void **state)
{
    (void)state;
    struct model *m = load_leaky();
    struct report_options o;
    report_options_init(&o);
    struct report_summary sum;
    char *js = run_report(m, &o, "json", &sum);
    assert_non_null(strstr(js, "{\"version\":1,\"culeak\":\"" CULEAK_VERSION "\","));
    assert_int_equal(sum.bytes, (4 << 20) + 100);
    assert_int_equal(sum.allocations, 2);
    assert_int_equal(sum.sites, 1);
    assert_int_equal(sum.cache_bytes, 1 << 30);
    assert_non_null(strstr(js, "\"leaks\":[{\"id\":"));
    assert_non_null(strstr(js, "\"bytes\":4194404,\"count\":2,\"kind\":\"device\""));
    assert_non_null(strstr(js, "\"site\":{\"function\":null,\"file\":null,\"line\":null,\"module\":\"" APP "\""));
    assert_non_null(strstr(js, "\"stack\":[{\"function\":null"));
    assert_non_null(strstr(js, "\"cache\":[{"));
    assert_non_null(strstr(js, "\"allocator\":\"pytorch\""));
    assert_non_null(strstr(js, "\"summary\":{\"bytes\":4194404,\"allocations\":2,\"sites\":1,"));
    assert_non_null(strstr(js, "\"rank\":2"));
    free(js);
    model_free(m);
}

static void test_text_summary(void **state)
{
    (void)state;
    struct model *m = load_leaky();
    struct report_options o;
    report_options_init(&o);
    char *txt = run_report(m, &o, "text", NULL);
    assert_non_null(strstr(txt, "LEAKED 4.0 MiB (4194404 bytes) in 2 allocations (device) from app+0x200"));
    assert_non_null(strstr(txt, "CACHED 1.0 GiB (1073741824 bytes) in 1 allocation (device)"));
    assert_non_null(strstr(txt, "LEAK SUMMARY: 4194404 bytes leaked in 2 allocations from 1 call sites\n"));
    assert_non_null(strstr(txt, "CACHE SUMMARY: 1073741824 bytes in 1 allocations"));
    assert_non_null(strstr(txt, "process 42 (rank 2)"));
    free(txt);
    /* what was live at the peak: everything, since nothing was freed after it */
    o.what = REPORT_PEAK;
    txt = run_report(m, &o, "text", NULL);
    assert_non_null(strstr(txt, "LIVE SUMMARY (at the peak): 1077936228 bytes in 3 allocations"));
    free(txt);
    char b[64];
    report_format_bytes(b, sizeof b, 100);
    assert_string_equal(b, "100 bytes");
    report_format_bytes(b, sizeof b, 1536);
    assert_string_equal(b, "1.5 KiB (1536 bytes)");
    report_format_kinds(b, sizeof b, 1u << CULEAK_KIND_DEVICE | 1u << CULEAK_KIND_HOST_PINNED);
    assert_string_equal(b, "device+pinned");
    model_free(m);
}

static void test_folded(void **state)
{
    (void)state;
    struct model *m = load_leaky();
    struct report_options o;
    report_options_init(&o);
    char *fo = run_report(m, &o, "folded", NULL);
    /* root first, leaf last, weighted by bytes */
    assert_non_null(strstr(fo, "app+0x100;app+0x200 4194404\n"));
    assert_non_null(strstr(fo, "app+0x100;app+0x300;libc10_cuda.so+0x500;[pytorch cache] 1073741824\n"));
    free(fo);
    model_free(m);
}

/* Pinned memory of the frameworks' host pools is theirs, known by module where names are
 * missing: libtorch_cuda asking the runtime itself (its caching host allocator), CuPy's
 * pinned_memory module; not libtorch_cuda through cuDNN, nor device memory of libtorch_cuda. */
static void test_pinned_pools_cached(void **state)
{
    (void)state;
    static const char *const mods[] = {
        APP, "/opt/torch/lib/libtorch_cuda.so", "/opt/nvidia/cudnn/lib/libcudnn.so.9",
        "/opt/nvidia/cuda_runtime/lib/libcudart.so.13",
        "/opt/sp/cupy/cuda/pinned_memory.cpython-312-x86_64-linux-gnu.so",
    };
    struct model *m = model_new(NULL);
    struct sb *b = sb_new();
    sb_hello(b, 42, APP, NULL);
    for (uint64_t i = 0; i < 5; i++)
        sb_module(b, mods[i], 0x10000000 * (i + 1), 0, 0x10000);
    sb_frame(b, 1, 0, 0x10000100);  /* main */
    sb_frame(b, 2, 1, 0x20000100);  /* libtorch_cuda */
    sb_frame(b, 3, 2, 0x40000100);  /* libcudart, called by libtorch_cuda */
    sb_frame(b, 4, 2, 0x30000100);  /* libcudnn, called by libtorch_cuda */
    sb_frame(b, 5, 4, 0x40000200);  /* libcudart, called by libcudnn */
    sb_frame(b, 6, 1, 0x50000100);  /* CuPy's pinned_memory */
    uint64_t seq = 1;
    const struct { uint64_t stack, kind, api, size; } ev[] = {
        {3, CULEAK_KIND_HOST_PINNED, CULEAK_API_CUDA_HOST_ALLOC, 4},     /* torch's host cache */
        {3, CULEAK_KIND_DEVICE, CULEAK_API_CUDA_MALLOC, 1000},           /* not pinned: a leak */
        {5, CULEAK_KIND_HOST_PINNED, CULEAK_API_CUDA_HOST_ALLOC, 16},    /* cuDNN's: a leak */
        {6, CULEAK_KIND_HOST_PINNED, CULEAK_API_CU_MEM_HOST_ALLOC, 512}, /* CuPy's pinned pool */
    };
    for (size_t i = 0; i < sizeof ev / sizeof *ev; i++)
        sb_event(b, (struct sb_ev){.seq = seq++, .dt = 1000, .op = CULEAK_OP_ALLOC, .api = ev[i].api,
                                   .kind = ev[i].kind, .size = ev[i].size, .addr = 0x1000 * (i + 1),
                                   .stack = ev[i].stack});
    sb_exit(b, seq);
    struct model_stream *s = model_stream_open(m);
    assert_int_equal(model_stream_feed(s, b->buf, b->n), 0);
    assert_int_equal(model_stream_finish(s), 0);
    model_stream_close(s);
    sb_free(b);
    struct report_options o;
    report_options_init(&o);
    o.group = MODEL_GROUP_STACK;
    struct report_summary sum;
    char *txt = run_report(m, &o, "text", &sum);
    assert_int_equal(sum.bytes, 1016);
    assert_int_equal(sum.allocations, 2);
    assert_int_equal(sum.cache_bytes, 516);
    /* every stack's site is the app's frame: the others are looked through */
    assert_non_null(strstr(txt, "\nLEAKED 1000 bytes in 1 allocation (device) from app+0x100 [pid 42]\n"));
    assert_non_null(strstr(txt, "\nLEAKED 16 bytes in 1 allocation (pinned) from app+0x100 [pid 42]\n"));
    assert_non_null(strstr(txt, "\nCACHED 4 bytes in 1 allocation (pinned) from app+0x100 [held by the pytorch caching "
                                "allocator]"));
    assert_non_null(strstr(txt, "\nCACHED 512 bytes in 1 allocation (pinned) from app+0x100 [held by the cupy caching "
                                "allocator]"));
    free(txt);
    model_free(m);
}

static void test_diff_between_marks(void **state)
{
    (void)state;
    /* snapshots armed before the stream, as `culeak report --diff` does */
    struct model *loaded = model_new(NULL);
    model_snapshot_at_mark(loaded, "iter1", "iter1");
    model_snapshot_at_mark(loaded, "iter2", "iter2");
    struct sb *b = sb_new();
    sb_hello(b, 42, APP, NULL);
    sb_module(b, APP, 0x400000, 0, 0x10000);
    sb_frame(b, 1, 0, 0x400200);
    sb_alloc(b, 1, 1, 0x1000, 10);
    sb_mark(b, 2, "iter1");
    sb_alloc(b, 3, 1, 0x2000, 20);
    sb_mark(b, 4, "iter2");
    struct model_stream *s = model_stream_open(loaded);
    assert_int_equal(model_stream_feed(s, b->buf, b->n), 0);
    model_stream_close(s);
    struct report_options o;
    report_options_init(&o);
    o.what = REPORT_DIFF;
    o.diff_a = "iter1";
    o.diff_b = "iter2";
    char *txt = run_report(loaded, &o, "text", NULL);
    assert_non_null(strstr(txt, "iter1 -> iter2: +20 bytes live"));
    assert_non_null(strstr(txt, "+20 bytes (10 -> 30 bytes, 1 -> 2 allocations) app+0x200"));
    assert_non_null(strstr(txt, "made after iter1 and still live at iter2: 20 bytes in 1 allocations"));
    free(txt);
    char *js = run_report(loaded, &o, "json", NULL);
    assert_non_null(strstr(js, "\"diff\":{\"a\":\"iter1\",\"b\":\"iter2\",\"delta_bytes\":20,"));
    assert_non_null(strstr(js, "\"new\":{\"bytes\":20,\"count\":1,"));
    free(js);
    o.diff_a = "missing";
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(report_text(f, loaded, &o, NULL), -1);
    fclose(f);
    free(buf);
    model_free(loaded);
    sb_free(b);
}

/* One rank of a job running APP: an allocation at the site before mark iter1 and one
 * between iter1 and iter2. A rank that frees both neither leaks nor grows. */
static void feed_rank(struct model *m, uint64_t pid, const char *rank_env, int frees, int reach_iter2, int stop)
{
    struct sb *b = sb_new();
    sb_hello(b, pid, APP, rank_env);
    sb_module(b, APP, 0x400000, 0, 0x10000);
    sb_frame(b, 1, 0, 0x400100); /* main */
    sb_frame(b, 2, 1, 0x400200); /* the site, the same in every rank */
    sb_alloc(b, 1, 2, 0x1000, 10);
    sb_mark(b, 2, "iter1");
    sb_alloc(b, 3, 2, 0x2000, 20);
    if (frees)
        sb_free_dev(b, 4, 2, 0x2000);
    if (reach_iter2) {
        sb_mark(b, 5, "iter2");
        if (frees)
            sb_free_dev(b, 6, 2, 0x1000);
        sb_exit(b, 7);
    }
    struct model_stream *s = model_stream_open(m);
    int rc = model_stream_feed(s, b->buf, b->n);
    assert_int_equal(rc, stop && reach_iter2 ? MODEL_FEED_STOPPED : MODEL_FEED_OK);
    if (rc == MODEL_FEED_OK)
        assert_int_equal(model_stream_finish(s), 0);
    model_stream_close(s);
    sb_free(b);
}

/* The text from `from` up to the next "\n==== " section (or the end), copied. */
static char *section(const char *txt, const char *from)
{
    const char *a = strstr(txt, from);
    assert_non_null(a);
    const char *e = strstr(a + 1, "\n==== ");
    size_t n = e ? (size_t)(e - a) : strlen(a);
    char *out = malloc(n + 1);
    assert_non_null(out);
    memcpy(out, a, n);
    out[n] = 0;
    return out;
}

static void test_ranks_kept_apart(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    feed_rank(m, 100, "RANK=0", 1, 1, 0);
    feed_rank(m, 101, "RANK=1", 0, 1, 0);
    struct report_options o;
    report_options_init(&o);
    struct report_summary sum;
    char *txt = run_report(m, &o, "text", &sum);
    assert_int_equal(sum.bytes, 30);
    assert_int_equal(sum.allocations, 2);
    assert_int_equal(sum.sites, 1);
    char *s0 = section(txt, "\n==== process 100 (rank 0): ");
    char *s1 = section(txt, "\n==== process 101 (rank 1): ");
    assert_non_null(strstr(s0, "nothing leaked"));
    assert_null(strstr(s0, "LEAKED"));
    assert_non_null(strstr(s1, "30 bytes leaked in 2 allocations\n"));
    assert_non_null(strstr(s1, "LEAKED 30 bytes in 2 allocations (device) from app+0x200\n"));
    assert_non_null(strstr(txt, "LEAK SUMMARY: 30 bytes leaked in 2 allocations from 1 call sites\n"
                                "  process 100 (rank 0): 0 bytes leaked in 0 allocations from 0 call sites\n"
                                "  process 101 (rank 1): 30 bytes leaked in 2 allocations from 1 call sites\n"));
    free(s0);
    free(s1);
    free(txt);

    char *js = run_report(m, &o, "json", NULL);
    const char *leaks = strstr(js, "\"leaks\":["), *cache = strstr(js, "],\"cache\":[");
    assert_non_null(leaks);
    assert_non_null(cache);
    char *rows = strndup(leaks, (size_t)(cache - leaks));
    assert_non_null(strstr(rows, "\"bytes\":30,\"count\":2,"));
    assert_non_null(strstr(rows, "\"pid\":101,\"rank\":1,"));
    assert_null(strstr(rows, "\"pid\":100"));
    free(rows);
    assert_non_null(strstr(js, "\"summary\":{\"bytes\":30,\"allocations\":2,\"sites\":1,"));
    assert_non_null(strstr(js, "\"per_process\":[{\"pid\":100,\"rank\":0,\"bytes\":0,\"allocations\":0,\"sites\":0,"));
    assert_non_null(strstr(js, "},{\"pid\":101,\"rank\":1,\"bytes\":30,\"allocations\":2,\"sites\":1,"));
    free(js);

    char *fo = run_report(m, &o, "folded", NULL);
    assert_string_equal(fo, "process 101 (rank 1);app+0x100;app+0x200 30\n");
    free(fo);

    /* --merge-processes: one row per site over every process, as one process reads */
    o.merge_processes = 1;
    txt = run_report(m, &o, "text", NULL);
    assert_null(strstr(txt, "\n===="));
    assert_non_null(strstr(txt, "LEAKED 30 bytes in 2 allocations (device) from app+0x200\n"));
    const char *tail = "\nLEAK SUMMARY: 30 bytes leaked in 2 allocations from 1 call sites\n";
    assert_true(strlen(txt) > strlen(tail));
    assert_string_equal(txt + strlen(txt) - strlen(tail), tail); /* no per-process lines */
    free(txt);
    model_free(m);
}

/* One process of feed_fields: `leaks` blocks of `size` at site A; `resets` blocks of
 * `reset_size` at site A or B ended by destroying their context (leaked); `cached`
 * blocks of `cache_size` through the caching allocator's module; `managed` blocks of
 * `managed_size` of managed memory at site C (which a suppression leaves out). */
struct fields_proc {
    uint64_t pid;
    const char *env;
    int leaks, resets, reset_at_b, cached, managed;
    uint64_t size, reset_size, cache_size, managed_size;
};

static void feed_fields(struct model *m, const struct fields_proc *fp)
{
    struct sb *b = sb_new();
    sb_hello(b, fp->pid, APP, fp->env);
    sb_module(b, APP, 0x400000, 0, 0x10000);
    sb_module(b, TORCH, 0x7f0000000000ull, 0, 0x10000);
    sb_frame(b, 1, 0, 0x400100);          /* main */
    sb_frame(b, 2, 1, 0x400200);          /* site A */
    sb_frame(b, 3, 1, 0x400300);          /* site B */
    sb_frame(b, 4, 1, 0x7f0000000500ull); /* inside the caching allocator */
    sb_frame(b, 5, 1, 0x400400);          /* site C */
    uint64_t seq = 1, addr = 0x100000;
    for (int i = 0; i < fp->leaks; i++, addr += 0x10000)
        sb_alloc(b, seq++, 2, addr, fp->size);
    for (int i = 0; i < fp->resets; i++, addr += 0x10000)
        sb_event(b, (struct sb_ev){.seq = seq++, .dt = 1000, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CUDA_MALLOC,
                                   .kind = CULEAK_KIND_DEVICE, .ctx = 0xc0, .size = fp->reset_size, .addr = addr,
                                   .stack = fp->reset_at_b ? 3 : 2});
    sb_event(b, (struct sb_ev){.seq = seq++, .op = CULEAK_OP_FREE_ALL, .api = CULEAK_API_CU_CTX_DESTROY, .ctx = 0xc0});
    for (int i = 0; i < fp->cached; i++, addr += 0x10000)
        sb_alloc(b, seq++, 4, addr, fp->cache_size);
    for (int i = 0; i < fp->managed; i++, addr += 0x10000)
        sb_event(b, (struct sb_ev){.seq = seq++, .dt = 1000, .op = CULEAK_OP_ALLOC,
                                   .api = CULEAK_API_CUDA_MALLOC_MANAGED, .kind = CULEAK_KIND_MANAGED,
                                   .size = fp->managed_size, .addr = addr, .stack = 5});
    sb_exit(b, seq);
    struct model_stream *s = model_stream_open(m);
    assert_int_equal(model_stream_feed(s, b->buf, b->n), 0);
    assert_int_equal(model_stream_finish(s), 0);
    model_stream_close(s);
    sb_free(b);
}

/* Every field of the JSON summary, per process and in total, with values that all differ
 * (so a swapped field, a count printed for bytes, or one process standing in for the
 * sum shows). */
static void test_json_summary_every_field(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    /* rank 0: 5 x 1000 leaked at A, 3 x 100 reset at B, 4 x 4096 cached, 7 x 11 managed at C */
    feed_fields(m, &(struct fields_proc){100, "RANK=0", 5, 3, 1, 4, 7, 1000, 100, 4096, 11});
    /* rank 1: 10 x 2000 leaked and 5 x 30 reset at A, 6 x 65536 cached, 9 x 13 managed at C */
    feed_fields(m, &(struct fields_proc){101, "RANK=1", 10, 5, 0, 6, 9, 2000, 30, 65536, 13});
    const char *p0 = "{\"pid\":100,\"rank\":0,\"bytes\":5300,\"allocations\":8,\"sites\":2,\"reset_bytes\":300,"
                     "\"reset_allocations\":3,\"cache_bytes\":16384,\"cache_allocations\":4}";
    const char *p1 = "{\"pid\":101,\"rank\":1,\"bytes\":20150,\"allocations\":15,\"sites\":1,\"reset_bytes\":150,"
                     "\"reset_allocations\":5,\"cache_bytes\":393216,\"cache_allocations\":6}";
    const char *total = "\"summary\":{\"bytes\":25450,\"allocations\":23,\"sites\":2,\"reset_bytes\":450,"
                        "\"reset_allocations\":8,\"cache_bytes\":409600,\"cache_allocations\":10,"
                        "\"suppressed\":{\"bytes\":194,\"allocations\":16,\"sites\":1,\"used\":[{\"name\":"
                        "\"managed-at-C\",\"file\":\"t.supp\",\"line\":2,\"bytes\":194,\"allocations\":16}]},"
                        "\"held_by_libraries\":{\"bytes\":0,\"allocations\":0,\"sites\":0,\"used\":[]},"
                        "\"per_process\":[";
    struct report_options o;
    report_options_init(&o);
    struct suppressions *supp = suppressions_new();
    char err[256] = "";
    if (suppressions_parse(supp, "# site C's managed memory\n{\n  managed-at-C\n  culeak:Leak\n"
                                 "  match-leak-kinds: managed\n  obj:" APP "\n}\n", "t.supp", err, sizeof err) != 0)
        fail_msg("suppressions: %s", err);
    o.supp = supp;
    for (int merge = 0; merge < 2; merge++) {
        o.merge_processes = merge;
        struct report_summary sum;
        char *js = run_report(m, &o, "json", &sum);
        const char *at = strstr(js, total);
        if (!at)
            fail_msg("merge %d: summary is not %s...: %s", merge, total, strstr(js, "\"summary\""));
        char want[1024];
        snprintf(want, sizeof want, "%s%s,%s]}}\n", total, p0, p1);
        assert_string_equal(at, want);
        assert_true(sum.bytes == 25450 && sum.allocations == 23 && sum.sites == 2 && sum.reset_bytes == 450 &&
                    sum.reset_allocations == 8 && sum.cache_bytes == 409600 && sum.cache_allocations == 10);
        free(js);
        char *txt = run_report(m, &o, "text", NULL);
        assert_non_null(strstr(txt, "LEAK SUMMARY: 25450 bytes leaked in 23 allocations from 2 call sites\n"));
        free(txt);
    }
    suppressions_free(supp);
    model_free(m);
}

static void test_diff_per_rank(void **state)
{
    (void)state;
    /* as `culeak report --diff iter1 iter2 r0 r1 r2` does: snapshots armed, every stream
     * stopped at iter2; rank 2 never got there */
    struct model *m = model_new(NULL);
    model_snapshot_at_mark(m, "iter1", "iter1");
    model_snapshot_at_mark(m, "iter2", "iter2");
    model_stop_at_mark(m, "iter2");
    feed_rank(m, 100, "RANK=0", 1, 1, 1);
    feed_rank(m, 101, "RANK=1", 0, 1, 1);
    feed_rank(m, 102, "RANK=2", 0, 0, 1);
    struct report_options o;
    report_options_init(&o);
    o.what = REPORT_DIFF;
    o.diff_a = "iter1";
    o.diff_b = "iter2";
    o.diff_b_is_now = 1;
    char *txt = run_report(m, &o, "text", NULL);
    /* stopped at iter2 on purpose: not "no exit seen"; rank 2 did stop without an exit */
    assert_non_null(strstr(txt, "culeak: process 100 (rank 0) on testhost: " APP " --flag [read up to mark 'iter2']\n"));
    assert_non_null(strstr(txt, "culeak: process 101 (rank 1) on testhost: " APP " --flag [read up to mark 'iter2']\n"));
    assert_non_null(strstr(txt, "culeak: process 102 (rank 2) on testhost: " APP " --flag [no exit seen"));
    char *s0 = section(txt, "\n==== process 100 (rank 0)\n");
    char *s1 = section(txt, "\n==== process 101 (rank 1)\n");
    assert_non_null(strstr(s0, "iter1 -> iter2: +0 bytes live\n"));
    assert_non_null(strstr(s0, "made after iter1 and still live at iter2: 0 bytes in 0 allocations"));
    assert_null(strstr(s0, "+20"));
    assert_non_null(strstr(s1, "iter1 -> iter2: +20 bytes live\n"));
    assert_non_null(strstr(s1, "  +20 bytes (10 -> 30 bytes, 1 -> 2 allocations) app+0x200\n"));
    assert_non_null(strstr(s1, "made after iter1 and still live at iter2: 20 bytes in 1 allocations"));
    assert_non_null(strstr(s1, "20 bytes in 1 allocation [pid 101]"));
    assert_non_null(strstr(txt, "\n==== process 102 (rank 2): no mark 'iter2': left out of the diff\n"));
    assert_non_null(strstr(txt, "DIFF SUMMARY: iter1 -> iter2, each process between its own marks: +20 bytes live;"));
    assert_non_null(strstr(txt, "3 processes, 1 without both marks (left out)\n"));
    free(s0);
    free(s1);
    free(txt);

    char *js = run_report(m, &o, "json", NULL);
    assert_non_null(strstr(js, "\"diff\":{\"a\":\"iter1\",\"b\":\"iter2\",\"delta_bytes\":20,\"sites\":[{"));
    const char *sites = strstr(js, "\"sites\":["), *news = strstr(js, "],\"new\":{");
    assert_non_null(sites);
    assert_non_null(news);
    char *rows = strndup(sites, (size_t)(news - sites));
    assert_non_null(strstr(rows, "\"delta_bytes\":20,\"delta_count\":1,"));
    assert_non_null(strstr(rows, "\"pid\":101,\"rank\":1,"));
    assert_null(strstr(rows, "\"pid\":100"));
    assert_null(strstr(rows, "\"pid\":102"));
    free(rows);
    assert_non_null(strstr(js, "\"new\":{\"bytes\":20,\"count\":1,\"stacks\":[{\"pid\":101,\"rank\":1,"));
    assert_non_null(strstr(js, "{\"pid\":100,\"rank\":0,\"has_a\":true,\"has_b\":true,\"delta_bytes\":0,"));
    assert_non_null(strstr(js, "{\"pid\":101,\"rank\":1,\"has_a\":true,\"has_b\":true,\"delta_bytes\":20,"));
    assert_non_null(strstr(js, "{\"pid\":102,\"rank\":2,\"has_a\":true,\"has_b\":false,"));
    free(js);
    model_free(m);
}

/* Threads and forks in reports: a parent leaking on its main thread, its forked child
 * leaking at one site from two threads and at another from one thread not its main one.
 * The text says the child's parent, the threads where they are not the main one; the JSON
 * has each row's thread. */
static void test_threads_and_children(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    for (uint64_t pid = 10; pid <= 11; pid++) {
        struct sb *b = sb_new();
        sb_hello_full(b, pid, pid == 11 ? 10 : 1, APP, NULL, 1000, 1000000);
        sb_module(b, APP, 0x400000, 0, 0x10000);
        sb_frame(b, 1, 0, 0x400100);
        sb_frame(b, 2, 1, 0x400200); /* site A */
        sb_frame(b, 3, 1, 0x400300); /* site B */
        sb_frame(b, 4, 1, 0x400400); /* site C */
        struct sb_ev e = {.dt = 1000, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CUDA_MALLOC,
                          .kind = CULEAK_KIND_DEVICE, .size = 64};
        if (pid == 10) {
            sb_event(b, (e.seq = 1, e.stack = 2, e.addr = 0x1000, e.tid = 10, e));
        } else {
            sb_event(b, (e.seq = 1, e.stack = 3, e.addr = 0x1000, e.tid = 20, e));
            sb_event(b, (e.seq = 2, e.stack = 3, e.addr = 0x2000, e.tid = 21, e));
            sb_event(b, (e.seq = 3, e.stack = 4, e.addr = 0x3000, e.tid = 30, e));
        }
        sb_exit(b, 9);
        struct model_stream *st = model_stream_open(m);
        assert_int_equal(model_stream_feed(st, b->buf, b->n), 0);
        assert_int_equal(model_stream_finish(st), 0);
        model_stream_close(st);
        sb_free(b);
    }
    struct report_options o;
    report_options_init(&o);
    char *text = run_report(m, &o, "text", NULL);
    assert_non_null(strstr(text, "culeak: process 11 on testhost: " APP " --flag [child of process 10]\n"));
    assert_non_null(strstr(text, "culeak: process 10 on testhost: " APP " --flag\n"));
    assert_non_null(strstr(text, "\n    allocated on several threads (the first: thread 20)\n"));
    assert_non_null(strstr(text, "\n    allocated on thread 30, not the main thread\n"));
    assert_null(strstr(text, "thread 10"));
    free(text);
    char *json = run_report(m, &o, "json", NULL);
    assert_non_null(strstr(json, "\"thread\":{\"tid\":10,\"main\":true,\"several\":false}"));
    assert_non_null(strstr(json, "\"thread\":{\"tid\":20,\"main\":false,\"several\":true}"));
    assert_non_null(strstr(json, "\"thread\":{\"tid\":30,\"main\":false,\"several\":false}"));
    free(json);
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_fields),
        cmocka_unit_test(test_threads_and_children),
        cmocka_unit_test(test_text_summary),
        cmocka_unit_test(test_folded),
        cmocka_unit_test(test_pinned_pools_cached),
        cmocka_unit_test(test_diff_between_marks),
        cmocka_unit_test(test_ranks_kept_apart),
        cmocka_unit_test(test_diff_per_rank),
        cmocka_unit_test(test_json_summary_every_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
