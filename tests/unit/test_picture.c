/* Pictures (picture.h, report --format html): moments kept at marks and ticks and thinned
 * when full, per-stack values that add up, the frame tree, merged small stacks, several
 * processes, and the page's embedded data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "report/picture.h"
#include "report/report.h"
#include "stream_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define APP "/opt/app/bin/app"
#define MIB (1u << 20)

static void feed(struct model *m, struct sb *b)
{
    struct model_stream *s = model_stream_open(m);
    assert_int_equal(model_stream_feed(s, b->buf, b->n), 0);
    assert_int_equal(model_stream_finish(s), 0);
    model_stream_close(s);
    sb_free(b);
}

/* Stack 2 grows 1 MiB per iteration, stack 3 allocates and frees in each one, stack 4
 * holds 5 MiB from the start; a mark ends each of `iterations`. */
static struct sb *job(uint64_t pid, int iterations)
{
    struct sb *b = sb_new();
    sb_hello(b, pid, APP, NULL);
    sb_module(b, APP, 0x400000, 0, 0x10000);
    sb_frame(b, 1, 0, 0x400100); /* main */
    sb_frame(b, 2, 1, 0x400200);
    sb_frame(b, 3, 1, 0x400300);
    sb_frame(b, 4, 1, 0x400400);
    uint64_t seq = 1;
    sb_alloc(b, seq++, 4, 0x900000, 5 * MIB);
    for (int i = 1; i <= iterations; i++) {
        sb_alloc(b, seq++, 2, 0x100000 + (uint64_t)i * 0x1000, MIB);
        sb_alloc(b, seq++, 3, 0x800000, 3 * MIB);
        sb_free_dev(b, seq++, 3, 0x800000);
        char label[32];
        snprintf(label, sizeof label, "iteration %d", i);
        sb_mark(b, seq++, label);
    }
    sb_exit(b, seq);
    return b;
}

static const struct picture_value *value_of(const struct picture *p, const struct picture_moment *mo, uint64_t stack)
{
    for (size_t k = 0; k < mo->n; k++)
        if (p->stacks[p->values[mo->first + k].key].stack == stack)
            return &p->values[mo->first + k];
    return NULL;
}

static const struct picture_moment *find_moment(const struct picture *p, int proc, enum picture_moment_kind kind,
                                                const char *label)
{
    for (size_t i = 0; i < p->nmoments; i++) {
        const struct picture_moment *mo = &p->moments[i];
        if (mo->proc == proc && mo->kind == kind && (!label || (mo->label && !strcmp(mo->label, label))))
            return mo;
    }
    return NULL;
}

static void test_moments_at_marks(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    model_keep_moments(m, 64, 0);
    feed(m, job(10, 5));
    struct picture p;
    assert_int_equal(picture_build(m, NULL, &p), 0);
    for (int i = 1; i <= 5; i++) {
        char label[32];
        snprintf(label, sizeof label, "iteration %d", i);
        const struct picture_moment *mo = find_moment(&p, 0, PICTURE_MARK, label);
        assert_non_null(mo);
        assert_int_equal(value_of(&p, mo, 2)->bytes, (uint64_t)i * MIB);
        assert_int_equal(value_of(&p, mo, 2)->count, (uint64_t)i);
        assert_int_equal(value_of(&p, mo, 4)->bytes, 5 * MIB);
        assert_null(value_of(&p, mo, 3)); /* freed before each mark */
        assert_int_equal(mo->bytes, (uint64_t)(i + 5) * MIB);
    }
    const struct picture_moment *peak = find_moment(&p, 0, PICTURE_PEAK, NULL);
    assert_int_equal(peak->bytes, 13 * MIB); /* 4 grown + 5 held + 3 churned, inside iteration 5 */
    assert_int_equal(value_of(&p, peak, 3)->bytes, 3 * MIB);
    const struct picture_moment *leaks = find_moment(&p, 0, PICTURE_LEAKS, NULL);
    assert_int_equal(leaks->bytes, 10 * MIB);
    assert_non_null(find_moment(&p, 0, PICTURE_END, NULL));
    for (size_t i = 1; i < p.nmoments; i++) /* in time order */
        assert_true(p.moments[i - 1].t_ns <= p.moments[i].t_ns);
    picture_free(&p);
    model_free(m);
}

static void test_moments_thinned_when_full(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    model_keep_moments(m, 4, 1000000000000ull); /* ticks never come: marks only */
    feed(m, job(10, 10));
    struct model_moment mm[8];
    size_t n = model_moments(m, 0, mm, 8);
    assert_int_equal(n, 4);
    assert_string_equal(mm[3].label, "iteration 10"); /* the newest stays */
    for (size_t i = 1; i < n; i++)
        assert_true(mm[i - 1].t_ns < mm[i].t_ns);
    /* every other one dropped twice over: the oldest kept is no longer iteration 1 */
    assert_string_not_equal(mm[0].label, "iteration 1");
    model_free(m);
}

/* Moments are bounded in items too: a job with many live stacks keeps fewer moments. */
static void test_moments_bounded_in_items(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    model_keep_moments(m, 64, 1000000000000ull);
    model_limit_moment_items(m, 5); /* each mark of job() holds 2 live stacks */
    feed(m, job(10, 9));
    struct model_moment mm[64];
    size_t n = model_moments(m, 0, mm, 64);
    assert_true(n >= 2 && n * 2 <= 5 + 1); /* 2 moments of 2 items: within the bound */
    assert_string_equal(mm[n - 1].label, "iteration 9");
    model_free(m);
}

static void test_ticks_without_marks(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    model_keep_moments(m, 16, 5000); /* a tick every 5 us of process time: events are 1 us apart */
    struct sb *b = sb_new();
    sb_hello(b, 7, APP, NULL);
    sb_module(b, APP, 0x400000, 0, 0x10000);
    sb_frame(b, 1, 0, 0x400100);
    for (uint64_t i = 1; i <= 40; i++)
        sb_alloc(b, i, 1, 0x100000 + i * 0x1000, 4096);
    sb_exit(b, 41);
    feed(m, b);
    struct model_moment mm[16];
    size_t n = model_moments(m, 0, mm, 16);
    assert_true(n >= 3 && n <= 16);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(mm[i].kind, MODEL_MOMENT_TICK);
    model_free(m);
}

/* After a pause longer than many ticks, the next tick counts from the moment taken: one
 * moment for the pause, then one per tick, never one at every event to catch up. */
static void test_ticks_after_a_pause(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    model_keep_moments(m, 64, 5000); /* a tick every 5 us; events 1 us apart */
    struct sb *b = sb_new();
    sb_hello(b, 7, APP, NULL);
    sb_module(b, APP, 0x400000, 0, 0x10000);
    sb_frame(b, 1, 0, 0x400100);
    uint64_t seq = 1;
    for (int i = 0; i < 10; i++, seq++)
        sb_alloc(b, seq, 1, 0x100000 + seq * 0x1000, 4096);
    sb_event(b, (struct sb_ev){.seq = seq, .dt = 1000000, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CUDA_MALLOC,
                               .kind = CULEAK_KIND_DEVICE, .size = 4096, .addr = 0x100000 + seq * 0x1000, .stack = 1});
    for (seq++; seq < 32; seq++)
        sb_alloc(b, seq, 1, 0x100000 + seq * 0x1000, 4096);
    sb_exit(b, seq);
    feed(m, b);
    struct model_moment mm[64];
    size_t n = model_moments(m, 0, mm, 64);
    assert_true(n >= 3 && n < 64);
    for (size_t i = 1; i < n; i++)
        if (mm[i].t_ns - mm[i - 1].t_ns < 5000)
            fail_msg("moments %zu and %zu are %llu ns apart, less than a tick", i - 1, i,
                     (unsigned long long)(mm[i].t_ns - mm[i - 1].t_ns));
    model_free(m);
}

/* A label marked at every iteration ("step") that a snapshot waits for: only its first
 * mark's moment is pinned; the later ones are thinned like any other, the newest kept. */
static struct sb *steps(int n)
{
    struct sb *b = sb_new();
    sb_hello(b, 7, APP, NULL);
    sb_module(b, APP, 0x400000, 0, 0x10000);
    sb_frame(b, 1, 0, 0x400100);
    uint64_t seq = 1;
    for (int i = 0; i < n; i++) {
        sb_alloc(b, seq++, 1, 0x100000 + (uint64_t)i * 0x1000, 4096);
        sb_mark(b, seq++, "step");
    }
    sb_exit(b, seq);
    return b;
}

static void test_only_the_first_armed_mark_pinned(void **state)
{
    (void)state;
    struct model *all = model_new(NULL), *m = model_new(NULL);
    model_keep_moments(all, 64, 1000000000000ull); /* marks only, none thinned */
    model_keep_moments(m, 4, 1000000000000ull);
    assert_int_equal(model_snapshot_at_mark(m, "step", "A"), 0);
    feed(all, steps(10));
    feed(m, steps(10));
    struct model_moment every[64], mm[8];
    assert_int_equal(model_moments(all, 0, every, 64), 10);
    size_t n = model_moments(m, 0, mm, 8);
    assert_int_equal(n, 4);
    assert_int_equal(mm[0].t_ns, every[0].t_ns); /* the first: pinned */
    assert_int_equal(mm[3].t_ns, every[9].t_ns); /* the newest */
    /* thinned like any other: the newest marks kept, not the oldest */
    assert_int_equal(mm[2].t_ns, every[8].t_ns);
    model_free(all);
    model_free(m);
}

/* Pinned moments where thinning would keep every one: the oldest unpinned goes. */
static void test_thinning_around_pinned_moments(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    model_keep_moments(m, 4, 1000000000000ull);
    assert_int_equal(model_snapshot_at_mark(m, "A", "A"), 0);
    assert_int_equal(model_snapshot_at_mark(m, "C", "C"), 0);
    struct sb *b = sb_new();
    sb_hello(b, 7, APP, NULL);
    sb_module(b, APP, 0x400000, 0, 0x10000);
    sb_frame(b, 1, 0, 0x400100);
    const char *labels[] = {"A", "x", "C", "y", "z"};
    uint64_t seq = 1;
    for (int i = 0; i < 5; i++) {
        sb_alloc(b, seq++, 1, 0x100000 + (uint64_t)i * 0x1000, 4096);
        sb_mark(b, seq++, labels[i]);
    }
    sb_exit(b, seq);
    feed(m, b);
    struct model_moment mm[8];
    assert_int_equal(model_moments(m, 0, mm, 8), 4);
    const char *want[] = {"A", "C", "y", "z"};
    for (int i = 0; i < 4; i++)
        assert_string_equal(mm[i].label, want[i]);
    model_free(m);
}

/* Each stack's leaf leads to the root; values add up to the moment's bytes. */
static void test_frame_tree(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    model_keep_moments(m, 64, 0);
    feed(m, job(10, 3));
    struct picture p;
    assert_int_equal(picture_build(m, NULL, &p), 0);
    assert_int_equal(p.nstacks, 3);
    assert_true(p.nnodes >= 5); /* root, main, three sites */
    uint32_t main_node = UINT32_MAX;
    for (size_t i = 0; i < p.nstacks; i++) {
        uint32_t leaf = p.stacks[i].leaf;
        assert_true(p.nodes[leaf].site);
        uint32_t parent = p.nodes[leaf].parent;
        if (main_node == UINT32_MAX)
            main_node = parent;
        assert_int_equal(parent, main_node); /* the three sites share main's node */
        assert_int_equal(p.nodes[main_node].parent, 0);
        assert_non_null(strstr(p.sites[p.stacks[i].site].text, "app"));
    }
    for (size_t i = 0; i < p.nmoments; i++) {
        const struct picture_moment *mo = &p.moments[i];
        uint64_t sum = 0, site_sum = 0;
        for (size_t k = 0; k < mo->n; k++)
            sum += p.values[mo->first + k].bytes;
        for (size_t k = 0; k < mo->site_n; k++)
            site_sum += p.values[mo->site_first + k].bytes;
        assert_true(mo->has_stacks);
        assert_int_equal(sum, mo->bytes);
        assert_int_equal(site_sum, mo->bytes);
        assert_int_equal(mo->site_n, mo->n); /* here each stack is its own site */
    }
    picture_free(&p);
    model_free(m);
}

/* Stacks are kept at an even spread of the marks, the newest and the named ones; every
 * moment keeps its bytes per site. */
static void test_stacks_at_some_moments(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    model_keep_moments(m, 64, 1000000000000ull);
    feed(m, job(10, 9));
    struct picture p;
    struct picture_options o = {.stack_moments = 3, .labels = {"iteration 2", NULL}};
    assert_int_equal(picture_build(m, &o, &p), 0);
    int with = 0;
    for (int i = 1; i <= 9; i++) {
        char label[32];
        snprintf(label, sizeof label, "iteration %d", i);
        const struct picture_moment *mo = find_moment(&p, 0, PICTURE_MARK, label);
        assert_non_null(mo);
        with += mo->has_stacks;
        if (i == 9 || i == 2)
            assert_true(mo->has_stacks);
        if (!mo->has_stacks)
            assert_int_equal(mo->n, 0);
        assert_int_equal(mo->site_n, 2); /* the grown and the held site */
        assert_int_equal(mo->bytes, (uint64_t)(i + 5) * MIB);
    }
    assert_int_equal(with, 4); /* three spread, one named */
    assert_true(find_moment(&p, 0, PICTURE_PEAK, NULL)->has_stacks);
    picture_free(&p);
    model_free(m);
}

/* A pool's blocks (tensors) lie inside a segment the pool holds: counted apart, never
 * added to the memory, never leaks. */
static void test_pool_blocks_apart(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    model_keep_moments(m, 64, 0);
    struct sb *b = sb_new();
    sb_hello(b, 12, APP, NULL);
    sb_module(b, APP, 0x400000, 0, 0x10000);
    sb_frame(b, 1, 0, 0x400100);
    sb_frame(b, 2, 1, 0x400200); /* the segment */
    sb_frame(b, 3, 1, 0x400300); /* the tensors */
    sb_alloc(b, 1, 2, 0x10000000, 2 * MIB);
    for (uint64_t i = 0; i < 3; i++)
        sb_event(b, (struct sb_ev){.seq = 2 + i, .dt = 1000, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_TORCH_BLOCK_ALLOC,
                                   .kind = CULEAK_KIND_BLOCK, .size = 4096, .addr = 0x10000000 + i * 4096, .stack = 3});
    sb_mark(b, 5, "iteration 1");
    sb_exit(b, 6);
    feed(m, b);
    struct picture p;
    assert_int_equal(picture_build(m, NULL, &p), 0);
    const struct picture_moment *mark = find_moment(&p, 0, PICTURE_MARK, "iteration 1");
    assert_int_equal(mark->bytes, 2 * MIB);
    assert_int_equal(mark->pool_bytes, 3 * 4096);
    assert_int_equal(value_of(&p, mark, 3)->bytes, 3 * 4096);
    for (size_t i = 0; i < p.nstacks; i++) {
        assert_int_equal(p.stacks[i].pool, p.stacks[i].stack == 3);
        assert_int_equal(p.sites[p.stacks[i].site].pool, p.stacks[i].pool);
    }
    const struct picture_moment *leaks = find_moment(&p, 0, PICTURE_LEAKS, NULL);
    assert_int_equal(leaks->bytes, 2 * MIB);
    assert_int_equal(leaks->pool_bytes, 0);
    assert_null(value_of(&p, leaks, 3));
    picture_free(&p);
    model_free(m);
}

static void test_small_stacks_merged(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    model_keep_moments(m, 64, 0);
    feed(m, job(10, 3));
    struct picture p;
    struct picture_options o = {.max_stacks = 1};
    assert_int_equal(picture_build(m, &o, &p), 0);
    assert_int_equal(p.nstacks, 2); /* the biggest (5 MiB held) and the other two merged */
    assert_int_equal(p.stacks[0].stack, 4);
    assert_int_equal(p.stacks[1].stack, UINT64_MAX);
    const struct picture_moment *leaks = find_moment(&p, 0, PICTURE_LEAKS, NULL);
    assert_int_equal(leaks->bytes, 8 * MIB); /* unchanged by merging */
    /* at the peak both merged stacks held memory: one value holds the two */
    const struct picture_moment *peak = find_moment(&p, 0, PICTURE_PEAK, NULL);
    assert_int_equal(peak->n, 2);
    assert_int_equal(value_of(&p, peak, UINT64_MAX)->bytes, 6 * MIB);
    picture_free(&p);
    model_free(m);
}

static void test_processes_apart(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    model_keep_moments(m, 64, 0);
    feed(m, job(10, 2));
    feed(m, job(11, 4));
    struct picture p;
    assert_int_equal(picture_build(m, NULL, &p), 0);
    assert_int_equal(p.nstacks, 6); /* the same stack ids, one set per process */
    assert_int_equal(find_moment(&p, 0, PICTURE_LEAKS, NULL)->bytes, 7 * MIB);
    assert_int_equal(find_moment(&p, 1, PICTURE_LEAKS, NULL)->bytes, 9 * MIB);
    uint32_t roots[2] = {UINT32_MAX, UINT32_MAX};
    for (size_t i = 0; i < p.nstacks; i++) { /* each process's stacks hang under its own root */
        uint32_t k = p.stacks[i].leaf;
        while (p.nodes[k].parent != 0)
            k = p.nodes[k].parent;
        int proc = p.stacks[i].proc;
        if (roots[proc] == UINT32_MAX)
            roots[proc] = k;
        assert_int_equal(roots[proc], k);
    }
    assert_int_not_equal(roots[0], roots[1]);
    assert_non_null(strstr(p.names[p.nodes[roots[1]].name], "process 11"));
    picture_free(&p);
    model_free(m);
}

/* One stack with two kinds of memory (device and managed: two units) is one value of
 * each moment, their sum, the first value of the moment as the others. */
static void test_values_of_a_stack_summed(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    model_keep_moments(m, 64, 0);
    struct sb *b = sb_new();
    sb_hello(b, 10, APP, NULL);
    sb_module(b, APP, 0x400000, 0, 0x10000);
    sb_frame(b, 1, 0, 0x400100);
    sb_frame(b, 2, 1, 0x400200);
    sb_frame(b, 3, 1, 0x400300);
    sb_alloc(b, 1, 3, 0x900000, 5 * MIB);
    sb_event(b, (struct sb_ev){.seq = 2, .dt = 1000, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CUDA_MALLOC_MANAGED,
                               .kind = CULEAK_KIND_MANAGED, .size = MIB, .addr = 0xa00000, .stack = 3});
    sb_alloc(b, 3, 2, 0xb00000, 2 * MIB);
    sb_mark(b, 4, "m");
    sb_exit(b, 5);
    feed(m, b);
    struct picture p;
    assert_int_equal(picture_build(m, NULL, &p), 0);
    const struct picture_moment *mo = find_moment(&p, 0, PICTURE_MARK, "m");
    assert_non_null(mo);
    assert_int_equal(mo->n, 2); /* stacks 3 and 2 */
    const struct picture_value *v = value_of(&p, mo, 3);
    assert_non_null(v);
    assert_int_equal(v->bytes, 6 * MIB);
    assert_int_equal(v->count, 2);
    assert_int_equal(value_of(&p, mo, 2)->bytes, 2 * MIB);
    picture_free(&p);
    model_free(m);
}

/* job()'s stream on `devices` devices (stack 2's allocations on the last one), then a
 * failed allocation of 7 MiB 1 us after the last mark, then the EXIT. */
static struct sb *job_failing(uint64_t pid, int iterations, int devices)
{
    struct sb *b = sb_new();
    sb_hello(b, pid, APP, NULL);
    sb_module(b, APP, 0x400000, 0, 0x10000);
    sb_frame(b, 1, 0, 0x400100);
    sb_frame(b, 2, 1, 0x400200);
    sb_frame(b, 3, 1, 0x400300);
    sb_frame(b, 4, 1, 0x400400);
    uint64_t seq = 1;
    sb_alloc(b, seq++, 4, 0x900000, 5 * MIB);
    for (int i = 1; i <= iterations; i++) {
        sb_event(b, (struct sb_ev){.seq = seq++, .dt = 1000, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CUDA_MALLOC,
                                   .kind = CULEAK_KIND_DEVICE, .size = MIB, .addr = 0x100000 + (uint64_t)i * 0x1000,
                                   .stack = 2, .device = devices - 1});
        sb_alloc(b, seq++, 3, 0x800000, 3 * MIB);
        sb_free_dev(b, seq++, 3, 0x800000);
        char label[32];
        snprintf(label, sizeof label, "iteration %d", i);
        sb_mark(b, seq++, label);
    }
    sb_event(b, (struct sb_ev){.seq = seq++, .dt = 1000, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CUDA_MALLOC,
                               .kind = CULEAK_KIND_DEVICE, .size = 7 * MIB, .result = 2, .stack = 3});
    sb_exit(b, seq);
    return b;
}

/* The page of model m: its embedded data (a copy, NUL-terminated) in *data. */
static char *page_of(struct model *m, char **data)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct report_options o;
    report_options_init(&o);
    assert_int_equal(report_html(f, m, &o), 0);
    fclose(f);
    const char *d = strstr(buf, "id=\"culeak-data\">");
    assert_non_null(d);
    d += strlen("id=\"culeak-data\">");
    const char *end = strstr(d, "</script>");
    assert_non_null(end);
    *data = strndup(d, (size_t)(end - d));
    return buf;
}

static void has(const char *data, const char *want)
{
    if (!strstr(data, want))
        fail_msg("the page's data has no %s in:\n%s", want, data);
}

/* The page of m (report_html with o, NULL: the leak report), as a string to free. */
static char *page_with(struct model *m, const struct report_options *o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct report_options def;
    report_options_init(&def);
    assert_int_equal(report_html(f, m, o ? o : &def), 0);
    fclose(f);
    return buf;
}

/* The numbers of array `key` of the page's first series of process proc and all devices:
 * how many, up to max into out. */
static size_t series_numbers(const char *page, int proc, const char *key, double *out, size_t max)
{
    char head[64], name[32];
    snprintf(head, sizeof head, "{\"proc\":%d,\"device\":-1,", proc);
    const char *p = strstr(page, "\"series\":[");
    assert_non_null(p);
    p = strstr(p, head);
    assert_non_null(p);
    snprintf(name, sizeof name, "\"%s\":[", key);
    p = strstr(p, name);
    assert_non_null(p);
    p += strlen(name);
    size_t n = 0;
    while (*p != ']') {
        char *end;
        double v = strtod(p, &end);
        assert_true(end != p);
        if (n < max)
            out[n] = v;
        n++;
        p = *end == ',' ? end + 1 : end;
    }
    return n;
}

/* A run shorter than a millisecond is drawn as it was: a ramp of 400 allocations of
 * 512 KiB (0 to 200 MiB) is 400 steps up, each at its own time, and 4 KiB allocated and
 * freed at once is up then down again, not live for the whole run. */
static void test_short_run_timeline_exact(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    model_keep_moments(m, 64, 0);
    struct sb *b = sb_new();
    sb_hello(b, 10, APP, NULL);
    sb_module(b, APP, 0x400000, 0, 0x10000);
    sb_frame(b, 1, 0, 0x400100);
    sb_frame(b, 2, 1, 0x400200);
    uint64_t seq = 1;
    sb_alloc(b, seq++, 2, 0x700000, 4096);
    sb_free_dev(b, seq++, 2, 0x700000);
    for (int i = 0; i < 400; i++)
        sb_alloc(b, seq++, 2, 0x1000000 + (uint64_t)i * 0x100000, 512 * 1024);
    sb_exit(b, seq);
    feed(m, b);
    char *page = page_with(m, NULL);
    static double t[4096], bytes[4096], mx[4096], mn[4096];
    size_t n = series_numbers(page, 0, "t", t, 4096);
    assert_int_equal(n, 402);
    assert_int_equal(series_numbers(page, 0, "bytes", bytes, 4096), n);
    assert_int_equal(series_numbers(page, 0, "max", mx, 4096), n);
    assert_int_equal(series_numbers(page, 0, "min", mn, 4096), n);
    assert_true(bytes[0] == 4096 && bytes[1] == 0); /* up, then down at once */
    assert_true(t[1] > t[0]);
    for (size_t i = 0; i < 400; i++) {
        double want = (double)(i + 1) * 512 * 1024;
        assert_true(bytes[2 + i] == want && mx[2 + i] == want && mn[2 + i] == want);
        assert_true(t[2 + i] > t[1 + i]); /* each step at its own time */
    }
    assert_true(bytes[401] == 200.0 * MIB);
    free(page);
    model_free(m);
}

/* report --format html --diff A B arms snapshots at A and B: their moments survive every
 * thinning (8 kept of 100 marks), so the page opens on A -> B, with both marks' stacks. */
static void test_diff_marks_never_thinned(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    model_keep_moments(m, 8, 0);
    model_snapshot_at_mark(m, "iteration 3", "iteration 3");
    model_snapshot_at_mark(m, "iteration 50", "iteration 50");
    feed(m, job(10, 100));
    struct report_options o;
    report_options_init(&o);
    o.what = REPORT_DIFF;
    o.diff_a = "iteration 3";
    o.diff_b = "iteration 50";
    char *page = page_with(m, &o);
    const char *moments = strstr(page, "\"moments\":[");
    assert_non_null(moments);
    const char *a = strstr(moments, "\"label\":\"iteration 3\",\"v\":[");
    const char *b = strstr(moments, "\"label\":\"iteration 50\",\"v\":[");
    assert_non_null(a);
    assert_non_null(b);
    assert_true(a < b);
    assert_non_null(strstr(page, "\"diff\":{\"a\":\"iteration 3\",\"b\":\"iteration 50\"}"));
    free(page);
    size_t n = model_moments(m, 0, NULL, 0);
    assert_true(n <= 8);
    model_free(m);
}

/* A parent that frees what it allocates and its forked child that leaks 3 MiB: the page's
 * header adds the processes up (3 MiB leaked in all) and it opens on the child. */
static void test_processes_added_up(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    model_keep_moments(m, 64, 0);
    for (int child = 0; child < 2; child++) {
        struct sb *b = sb_new();
        sb_hello_full(b, 10 + (uint64_t)child, child ? 10 : 1, APP, NULL, 1000, 1000000);
        sb_module(b, APP, 0x400000, 0, 0x10000);
        sb_frame(b, 1, 0, 0x400100);
        sb_frame(b, 2, 1, 0x400200);
        sb_alloc(b, 1, 2, 0x700000, 3 * MIB);
        if (!child)
            sb_free_dev(b, 2, 2, 0x700000);
        sb_exit(b, 3);
        feed(m, b);
    }
    char *page = page_with(m, NULL);
    char want[128];
    snprintf(want, sizeof want, "\"all\":{\"processes\":2,\"leaked\":%u,", 3 * MIB);
    assert_non_null(strstr(page, want));
    assert_non_null(strstr(page, "},\"open\":1,"));
    free(page);
    model_free(m);
}

/* The page: the data is in, with its numbers (times from the process's start in ms, bytes
 * at the marks and the moments, the peak, the failed allocation); nothing can end its
 * script element early, nothing is fetched. One device: one series, the total's. */
static void test_page(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    model_keep_moments(m, 64, 0);
    feed(m, job_failing(10, 3, 1));
    char *data, *buf = page_of(m, &data);
    assert_non_null(strstr(buf, "<!DOCTYPE html>"));
    has(data, "\"version\":1");
    /* each event 1 us after the one before, from the start (the HELLO's time): mark i at
     * 0.001 + 0.004 i ms, its live bytes 5 MiB and i MiB */
    has(data, "\"marks\":[{\"proc\":0,\"t\":0.005,\"bytes\":6291456,\"label\":\"iteration 1\"},");
    has(data, "{\"proc\":0,\"t\":0.013,\"bytes\":8388608,\"label\":\"iteration 3\"}]");
    /* the moments: each mark's bytes and, by stack, 5 MiB at stack 4 and i MiB in i blocks
     * at stack 2; the peak at iteration 3's 3 MiB allocation: 5 + 3 + 3 MiB */
    has(data, "{\"proc\":0,\"kind\":\"mark\",\"t\":0.013,\"bytes\":8388608,\"pool_bytes\":0,"
              "\"held_bytes\":0,\"reserved_bytes\":0,\"label\":\"iteration 3\",\"v\":[0,5242880,1,1,3145728,3]");
    has(data, "{\"proc\":0,\"kind\":\"peak\",\"t\":0.011,\"bytes\":11534336,");
    has(data, "{\"proc\":0,\"kind\":\"leaks\",\"t\":0.015,\"bytes\":8388608,");
    /* the failed allocation, 1 us after the last mark */
    has(data, "\"failures\":[{\"proc\":0,\"t\":0.014,\"size\":7340032,\"device\":0,\"api\":\"cudaMalloc\"}]");
    /* one device: the total's series only */
    has(data, "\"series\":[{\"proc\":0,\"device\":-1,\"t\":[");
    assert_null(strstr(data, "\"device\":0,\"t\""));
    for (const char *c = data; *c; c++)
        assert_int_not_equal(*c, '<');
    assert_null(strstr(buf, "src="));
    assert_null(strstr(buf, "href="));
    assert_null(strstr(buf, "url("));
    assert_null(strstr(buf, "@import"));
    free(data);
    free(buf);
    model_free(m);
}

/* Two devices: the total's series, then one per device, each with its own bytes. */
static void test_page_series_per_device(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    model_keep_moments(m, 64, 0);
    feed(m, job_failing(10, 3, 2));
    char *data, *buf = page_of(m, &data);
    has(data, "\"series\":[{\"proc\":0,\"device\":-1,\"t\":[");
    has(data, "{\"proc\":0,\"device\":0,\"t\":[");
    has(data, "{\"proc\":0,\"device\":1,\"t\":[");
    /* device 1: stack 2's 1 MiB each iteration; device 0: stack 4's 5 MiB, with stack 3's
     * 3 MiB up and down each iteration (every change kept: a short run) */
    has(data, "\"device\":1,\"t\":[0.002,0.006,0.010],\"bytes\":[1048576,2097152,3145728],");
    has(data, "\"bytes\":[5242880,8388608,5242880,8388608,5242880,8388608,5242880],");
    assert_null(strstr(data, "\"device\":2,"));
    free(data);
    free(buf);
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_moments_at_marks),
        cmocka_unit_test(test_moments_thinned_when_full),
        cmocka_unit_test(test_moments_bounded_in_items),
        cmocka_unit_test(test_ticks_without_marks),
        cmocka_unit_test(test_ticks_after_a_pause),
        cmocka_unit_test(test_only_the_first_armed_mark_pinned),
        cmocka_unit_test(test_thinning_around_pinned_moments),
        cmocka_unit_test(test_frame_tree),
        cmocka_unit_test(test_stacks_at_some_moments),
        cmocka_unit_test(test_pool_blocks_apart),
        cmocka_unit_test(test_small_stacks_merged),
        cmocka_unit_test(test_processes_apart),
        cmocka_unit_test(test_values_of_a_stack_summed),
        cmocka_unit_test(test_page),
        cmocka_unit_test(test_page_series_per_device),
        cmocka_unit_test(test_short_run_timeline_exact),
        cmocka_unit_test(test_diff_marks_never_thinned),
        cmocka_unit_test(test_processes_added_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
