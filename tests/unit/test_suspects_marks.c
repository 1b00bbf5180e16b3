/* Growth suspects at scale and with many labels: a mark sums only the sites that changed
 * since the series' last mark, and the verdicts equal those of summing every site at
 * every mark (random jobs, checked after every mark); the patterns followed prefer the
 * job's counted iterations over operator names and one-off labels seen first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "model/model_internal.h"
#include "stream_builder.h"
#include "model/suspects.h"

#include <stdio.h>
#include <string.h>

#define APP "/opt/app/bin/app"
#define CUDART "/usr/lib/libcudart.so.12"
#define APP_BASE 0x555500000000ull
#define CUDART_BASE 0x7f0000000000ull
#define SITES 12
#define STACKS 40 /* over SITES sites: stack i (frame 2i+2) calls cudart from site i % SITES */

static uint64_t rng;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static struct model *new_model(int walk_all)
{
    struct model_options o = {.no_default_skips = 1, .skip_modules = "libcudart*"};
    struct model *m = model_new(&o);
    assert_non_null(m);
    m->growth_walk_all = walk_all;
    return m;
}

static struct sb *prefix(uint64_t pid)
{
    struct sb *b = sb_new();
    sb_hello(b, pid, APP, NULL);
    sb_module(b, APP, APP_BASE, 0, 0x10000);
    sb_module(b, CUDART, CUDART_BASE, 0, 0x100000);
    for (uint64_t i = 0; i < STACKS; i++) {
        sb_frame(b, 2 * i + 1, 0, APP_BASE + 0x100 + 0x10 * (i % SITES));
        sb_frame(b, 2 * i + 2, 2 * i + 1, CUDART_BASE + 0x50 + i);
    }
    return b;
}

static void mark(struct sb *b, uint64_t seq, const char *label)
{
    sb_u(b, seq);
    sb_u(b, 1000 + next() % 1000000);
    sb_u(b, 7);
    sb_s(b, label);
    sb_u(b, 0);
    sb_end(b, CULEAK_REC_MARK);
}

/* The records built since the last call, to both models; the next part starts empty. */
static void feed(struct model_stream *a, struct model_stream *b, struct sb *sb)
{
    assert_int_equal(model_stream_feed(a, sb->buf + CULEAK_MAGIC_LEN, sb->n - CULEAK_MAGIC_LEN), 0);
    assert_int_equal(model_stream_feed(b, sb->buf + CULEAK_MAGIC_LEN, sb->n - CULEAK_MAGIC_LEN), 0);
    sb->n = CULEAK_MAGIC_LEN;
}

static void same_suspects(struct model *a, struct model *b)
{
    struct model_suspects x, y;
    assert_int_equal(model_suspects(a, MODEL_ALL, 0, &x), 0);
    assert_int_equal(model_suspects(b, MODEL_ALL, 0, &y), 0);
    assert_int_equal(x.n, y.n);
    for (size_t i = 0; i < x.n; i++) {
        const struct model_suspect *p = &x.v[i], *q = &y.v[i];
        assert_int_equal(p->proc, q->proc);
        assert_int_equal(p->site, q->site);
        assert_int_equal(p->kind, q->kind);
        assert_int_equal(p->stack, q->stack);
        assert_string_equal(p->series, q->series);
        assert_int_equal(p->intervals, q->intervals);
        assert_int_equal(p->rises, q->rises);
        assert_int_equal(p->marks, q->marks);
        assert_string_equal(p->last_label, q->last_label);
        assert_int_equal(p->live_bytes, q->live_bytes);
        assert_int_equal(p->window_bytes, q->window_bytes);
        assert_int_equal(p->per_mark, q->per_mark);
        assert_string_equal(p->since_label, q->since_label);
        assert_int_equal(p->since_seq, q->since_seq);
        assert_int_equal(p->since_bytes, q->since_bytes);
        assert_int_equal(p->since_marks, q->since_marks);
        assert_true(p->interval_s == q->interval_s);
    }
    model_suspects_free(&x);
    model_suspects_free(&y);
}

/* Random jobs: allocations (device, managed, pinned) that mostly stay, frees of random
 * live ones, a site that goes quiet for many marks and comes back, marks of a dozen
 * patterns (more than are followed, so patterns are swapped too) in random order. The
 * same records go to a model keeping dirty lists and one summing everything at each
 * mark; their suspects are compared after every mark. */
static void test_dirty_sites_equal_full_walk(void **state)
{
    (void)state;
    static const char *const labels[] = {"iteration %d", "forward", "backward", "step %d of epoch 1",
                                         "aten::mm, seq = %d", "optimizer", "loss %d", "eval",
                                         "warmup", "save", "data %d", "sync"};
    static const unsigned kinds[] = {CULEAK_KIND_DEVICE, CULEAK_KIND_MANAGED, CULEAK_KIND_HOST_PINNED};
    for (uint64_t seed = 1; seed <= 6; seed++) {
        rng = 0x9e3779b97f4a7c15ull * seed;
        struct model *dirty = new_model(0), *full = new_model(1);
        struct model_stream *sd = model_stream_open(dirty), *sf = model_stream_open(full);
        struct sb *b = prefix(100 + seed);
        assert_int_equal(model_stream_feed(sd, b->buf, b->n), 0);
        assert_int_equal(model_stream_feed(sf, b->buf, b->n), 0);
        b->n = CULEAK_MAGIC_LEN;
        uint64_t seq = 0, addr = 0x7000000000ull, live[512], counters[12] = {0};
        unsigned live_kind[512];
        size_t nlive = 0, nsuspects = 0;
        struct model_suspects x;
        for (int it = 0; it < 150; it++) {
            int quiet = it >= 40 && it < 70; /* only stack 0 moves: most sites stay still */
            int changes = 1 + (int)(next() % 6);
            for (int c = 0; c < changes; c++) {
                if (nlive && (nlive == 512 || next() % 3 == 0)) {
                    size_t k = next() % nlive;
                    sb_event(b, (struct sb_ev){.seq = ++seq, .dt = 1000, .op = CULEAK_OP_FREE,
                                               .api = CULEAK_API_CUDA_FREE, .kind = live_kind[k], .addr = live[k]});
                    live[k] = live[--nlive];
                    live_kind[k] = live_kind[nlive];
                } else {
                    unsigned kind = kinds[next() % 3];
                    uint64_t stack = quiet ? 2 : 2 * (next() % STACKS) + 2;
                    live_kind[nlive] = kind;
                    live[nlive++] = addr += 0x10000;
                    sb_event(b, (struct sb_ev){.seq = ++seq, .dt = 1000, .op = CULEAK_OP_ALLOC,
                                               .api = CULEAK_API_CUDA_MALLOC, .kind = kind,
                                               .size = 256 * (1 + next() % 64), .addr = addr, .stack = stack});
                }
            }
            /* the early marks are rarer patterns, the later ones all of them */
            size_t li = next() % (it < 20 ? 4 : 12);
            char label[64];
            snprintf(label, sizeof label, labels[li], (int)(li == 4 ? (counters[li] += 3 + next() % 5) : counters[li]++));
            mark(b, ++seq, label);
            feed(sd, sf, b);
            same_suspects(dirty, full);
            nsuspects += model_suspects(dirty, MODEL_ALL, 0, &x) == 0 ? x.n : 0;
            model_suspects_free(&x);
        }
        assert_true(nsuspects > 0); /* the comparisons were not between empty lists */
        sb_free(b);
        model_stream_close(sd);
        model_stream_close(sf);
        model_free(dirty);
        model_free(full);
    }
}

/* 12 iterations: before each iteration mark, the labels of `before` (all of them, each
 * iteration), with site GROW keeping 4 KiB an iteration throughout. */
static struct model_suspects job_with(struct model **mp, const char *const *before, size_t nbefore, int once)
{
    struct model *m = new_model(0);
    struct sb *b = prefix(100);
    uint64_t seq = 0, addr = 0x7000000000ull;
    rng = 42;
    for (int i = 0; i < 12; i++) {
        for (size_t k = 0; k < nbefore; k++) {
            if (once && i > 0)
                break;
            char label[64];
            snprintf(label, sizeof label, before[k], 1000 + 7 * (i * (int)nbefore + (int)k));
            mark(b, ++seq, label);
        }
        sb_alloc(b, ++seq, 2, addr += 0x10000, 4096);
        char label[32];
        snprintf(label, sizeof label, "iteration %d", i);
        mark(b, ++seq, label);
    }
    struct model_stream *st = model_stream_open(m);
    assert_int_equal(model_stream_feed(st, b->buf, b->n), 0);
    model_stream_close(st);
    struct model_suspects s;
    assert_int_equal(model_suspects(m, MODEL_ALL, 0, &s), 0);
    sb_free(b);
    *mp = m; /* the suspects' strings are the model's */
    return s;
}

static void test_iterations_win_over_operators(void **state)
{
    (void)state;
    /* eight operator ranges each iteration, before the first iteration mark: the
     * iterations take an operator's place at their second mark, counting up by one */
    static const char *const ops[] = {"aten::mm", "aten::add", "aten::relu", "aten::cat", "aten::mm, seq = %d",
                                      "aten::add, seq = %d", "aten::bmm, seq = %d", "aten::softmax, seq = %d"};
    struct model *m;
    struct model_suspects s = job_with(&m, ops, 8, 0);
    int iterations = 0;
    for (size_t i = 0; i < s.n; i++)
        if (!strcmp(s.v[i].series, "iteration #")) {
            iterations = 1;
            assert_int_equal(s.v[i].marks, 11); /* followed from "iteration 1" on */
            assert_int_equal(s.v[i].per_mark, 4096);
            assert_string_equal(s.v[i].last_label, "iteration 11");
        }
    assert_int_equal(s.n, 1);
    assert_true(iterations);
    model_suspects_free(&s);
    model_free(m);
    /* eight one-off labels first (set-up phases): the same */
    static const char *const once[] = {"load", "build", "compile %d", "warmup", "init", "seed", "plan", "fuse"};
    s = job_with(&m, once, 8, 1);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.v[0].series, "iteration #");
    assert_int_equal(s.v[0].marks, 11);
    model_suspects_free(&s);
    model_free(m);
    /* seven labels before it: room for all, the iterations followed from their first mark */
    s = job_with(&m, ops, 7, 0);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.v[0].series, "iteration #");
    assert_int_equal(s.v[0].marks, 12);
    model_suspects_free(&s);
    model_free(m);
}

/* Stacks 26 and 2 share a site: 26 keeps `held` bytes from the start, 2 grows 4 KiB an
 * iteration (and 26 too, first, with grow_both). Returns the suspect's member stack. */
static uint64_t member_stack(uint64_t held, int grow_both)
{
    struct model *m = new_model(0);
    struct sb *b = prefix(100);
    uint64_t seq = 0, addr = 0x7000000000ull;
    rng = 7;
    if (held)
        sb_alloc(b, ++seq, 26, addr += 0x100000, held);
    for (int i = 0; i < 12; i++) {
        if (grow_both)
            sb_alloc(b, ++seq, 26, addr += 0x10000, 4096);
        sb_alloc(b, ++seq, 2, addr += 0x10000, 4096);
        char label[32];
        snprintf(label, sizeof label, "iteration %d", i);
        mark(b, ++seq, label);
    }
    struct model_stream *st = model_stream_open(m);
    assert_int_equal(model_stream_feed(st, b->buf, b->n), 0);
    model_stream_close(st);
    struct model_suspects s;
    assert_int_equal(model_suspects(m, MODEL_ALL, 0, &s), 0);
    assert_int_equal(s.n, 1);
    uint64_t stack = s.v[0].stack;
    model_suspects_free(&s);
    sb_free(b);
    model_free(m);
    return stack;
}

static void test_member_stack_with_most_bytes(void **state)
{
    (void)state;
    /* 40 KiB held by 26 against 4 KiB, 8 KiB, ... 48 KiB from 2: 2 has the most at the end */
    assert_int_equal(member_stack(40960, 0), 2);
    assert_int_equal(member_stack(1 << 20, 0), 26);
    /* as many bytes in both: the stack seen first */
    assert_int_equal(member_stack(0, 1), 26);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dirty_sites_equal_full_walk),
        cmocka_unit_test(test_iterations_win_over_operators),
        cmocka_unit_test(test_member_stack_with_most_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
