/* Growth-suspects benchmark (not a test): what a mark costs the model while every site
 * keeps live bytes and only a few change between marks, as in a training loop that marks
 * its iterations (and, with NVTX ranges around operators, many more marks of other
 * labels). Per mark: the time to feed the iterations with their marks, less the same
 * events without marks, over the number of marks; median and range of RUNS models. */
#include "model.h"
#include "stream_builder.h"
#include "suspects.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define RUNS 5
#define CHANGES 5 /* allocations and frees between two marks */
#define BASE 0x555500000000ull

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One process whose `sites` stacks (one site each) all hold a block. */
static struct sb *setup(int sites)
{
    struct sb *b = sb_new();
    sb_hello(b, 1, "/nonexistent/bench_app", NULL);
    sb_module(b, "/nonexistent/bench_app", BASE, 0, 0x1000000);
    for (int i = 1; i <= sites; i++)
        sb_frame(b, (uint64_t)i, 0, BASE + 0x10 * (uint64_t)i);
    for (int i = 1; i <= sites; i++)
        sb_alloc(b, (uint64_t)i, (uint64_t)i, 0x700000000000ull + (uint64_t)i * 0x100000, 4096);
    return b;
}

/* `iters` iterations over the sites: CHANGES allocations and frees at random stacks, and
 * (with marks) one "iteration N" mark after `ops` marks of operator labels. */
static struct sb *iterations(int sites, int iters, int ops, int marks, uint64_t *nmarks)
{
    static const char *const names[] = {"aten::mm", "aten::add", "aten::relu", "aten::softmax", "aten::cat",
                                        "aten::conv2d", "aten::layer_norm", "aten::dropout"};
    struct sb *b = sb_new();
    uint64_t seq = (uint64_t)sites + 1, addr = 0x7c0000000000ull, live[CHANGES];
    size_t nlive = 0;
    *nmarks = 0;
    rng = 88172645463325252ull;
    for (int it = 0; it < iters; it++) {
        for (int op = 0; op <= ops; op++) {
            for (int c = 0; c < CHANGES; c++) {
                if (nlive == CHANGES || (nlive && next() % 2)) {
                    size_t k = next() % nlive;
                    sb_free_dev(b, seq++, 1, live[k]);
                    live[k] = live[--nlive];
                } else {
                    live[nlive++] = addr += 0x10000;
                    sb_alloc(b, seq++, 1 + next() % (uint64_t)sites, addr, 512 + next() % 4096);
                }
            }
            if (!marks)
                continue;
            char label[32];
            if (op < ops)
                snprintf(label, sizeof label, "%s", names[op % 8]);
            else
                snprintf(label, sizeof label, "iteration %d", it);
            sb_mark(b, seq++, label);
            (*nmarks)++;
        }
    }
    return b;
}

static double feed_time(const struct sb *pre, const struct sb *iters, size_t *nsuspects)
{
    struct model *m = model_new(NULL);
    struct model_stream *st = model_stream_open(m);
    if (model_stream_feed(st, pre->buf, pre->n) != 0)
        exit(1);
    double t0 = now();
    if (model_stream_feed(st, iters->buf + CULEAK_MAGIC_LEN, iters->n - CULEAK_MAGIC_LEN) != 0)
        exit(1);
    double dt = now() - t0;
    struct model_suspects s;
    if (model_suspects(m, MODEL_ALL, 0, &s) == 0) {
        *nsuspects = s.n;
        model_suspects_free(&s);
    }
    model_stream_close(st);
    model_free(m);
    return dt;
}

static void scenario(int sites, int iters, int ops)
{
    struct sb *pre = setup(sites);
    uint64_t nmarks, none;
    struct sb *with = iterations(sites, iters, ops, 1, &nmarks), *without = iterations(sites, iters, ops, 0, &none);
    double per[RUNS];
    size_t nsusp = 0;
    for (int r = 0; r < RUNS; r++) {
        double a = feed_time(pre, with, &nsusp), b = feed_time(pre, without, &nsusp);
        per[r] = (a - b) / (double)nmarks;
    }
    qsort(per, RUNS, sizeof *per, cmp_double);
    printf("%6d live sites, %d changes between marks, %s: %.2f us per mark (%.2f to %.2f, %d runs; %llu marks)\n",
           sites, CHANGES, ops ? "8 operator marks + 1 iteration mark" : "1 mark per iteration",
           per[RUNS / 2] * 1e6, per[0] * 1e6, per[RUNS - 1] * 1e6, RUNS, (unsigned long long)nmarks);
    sb_free(pre);
    sb_free(with);
    sb_free(without);
}

int main(void)
{
    scenario(1000, 2000, 0);
    scenario(10000, 500, 0);
    scenario(10000, 100, 8);
    return 0;
}
