/* Growth-suspects benchmark (not a test): what a mark costs the model while every site
 * keeps live bytes and only a few change between marks, as in a training loop that marks
 * its iterations (and, with NVTX ranges around operators, many more marks of other
 * labels). Per mark: the time to feed the iterations with their marks, less the same
 * events without marks, over the number of marks, after 20 iterations of warm-up;
 * median and range of RUNS models. */
#include "model/model.h"
#include "stream_builder.h"
#include "model/suspects.h"
#include "xorshift.h"
#include "bench_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define RUNS 7
#define CHANGES 5 /* allocations and frees between two marks */
#define BASE 0x555500000000ull

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

/* The job's iterations, built part by part: CHANGES allocations and frees at random
 * stacks, and (with marks) `ops` marks of operator labels and one "iteration N" mark. */
struct job {
    int sites, ops, marks, it;
    uint64_t seq, addr, live[CHANGES], nmarks;
    size_t nlive;
};

static struct sb *iterations(struct job *j, int iters)
{
    static const char *const names[] = {"aten::mm", "aten::add", "aten::relu", "aten::softmax", "aten::cat",
                                        "aten::conv2d", "aten::layer_norm", "aten::dropout"};
    struct sb *b = sb_new();
    for (int end = j->it + iters; j->it < end; j->it++) {
        for (int op = 0; op <= j->ops; op++) {
            for (int c = 0; c < CHANGES; c++) {
                if (j->nlive == CHANGES || (j->nlive && next() % 2)) {
                    size_t k = next() % j->nlive;
                    sb_free_dev(b, j->seq++, 1, j->live[k]);
                    j->live[k] = j->live[--j->nlive];
                } else {
                    j->live[j->nlive++] = j->addr += 0x10000;
                    sb_alloc(b, j->seq++, 1 + next() % (uint64_t)j->sites, j->addr, 512 + next() % 4096);
                }
            }
            if (!j->marks)
                continue;
            char label[32];
            if (op < j->ops)
                snprintf(label, sizeof label, "%s", names[op % 8]);
            else
                snprintf(label, sizeof label, "iteration %d", j->it);
            sb_mark(b, j->seq++, label);
            j->nmarks++;
        }
    }
    return b;
}

static void feed(struct model_stream *st, const struct sb *b, int first)
{
    size_t skip = first ? 0 : CULEAK_MAGIC_LEN;
    if (model_stream_feed(st, b->buf + skip, b->n - skip) != 0)
        exit(1);
}

/* Seconds to feed the measured part, after the set-up and the warm-up iterations (in
 * which every series has its first mark, when it walks every site). */
static double feed_time(const struct sb *pre, const struct sb *warm, const struct sb *measured)
{
    struct model *m = model_new(NULL);
    struct model_stream *st = model_stream_open(m);
    feed(st, pre, 1);
    feed(st, warm, 0);
    double t0 = now();
    feed(st, measured, 0);
    double dt = now() - t0;
    model_stream_close(st);
    model_free(m);
    return dt;
}

static void scenario(int sites, int iters, int ops)
{
    struct sb *pre = setup(sites), *part[2][2];
    uint64_t nmarks = 0;
    for (int marks = 0; marks < 2; marks++) {
        struct job j = {.sites = sites, .ops = ops, .marks = marks, .seq = (uint64_t)sites + 1,
                        .addr = 0x7c0000000000ull};
        xorshift_reset(); /* the same events with and without marks */
        part[marks][0] = iterations(&j, 20);
        uint64_t before = j.nmarks;
        part[marks][1] = iterations(&j, iters);
        nmarks = j.nmarks - before;
    }
    double per[RUNS];
    for (int r = 0; r < RUNS; r++) {
        double with = feed_time(pre, part[1][0], part[1][1]), without = feed_time(pre, part[0][0], part[0][1]);
        per[r] = (with - without) / (double)nmarks;
    }
    qsort(per, RUNS, sizeof *per, cmp_double);
    printf("%6d live sites, %d changes between marks, %s: %.2f us per mark (%.2f to %.2f, %d runs of %llu marks)\n",
           sites, CHANGES, ops ? "8 operator marks + 1 iteration mark" : "1 mark per iteration",
           per[RUNS / 2] * 1e6, per[0] * 1e6, per[RUNS - 1] * 1e6, RUNS, (unsigned long long)nmarks);
    sb_free(pre);
    for (int i = 0; i < 4; i++)
        sb_free(part[i / 2][i % 2]);
}

int main(void)
{
    scenario(1000, 2000, 0);
    scenario(10000, 500, 0);
    scenario(10000, 200, 8);
    return 0;
}
