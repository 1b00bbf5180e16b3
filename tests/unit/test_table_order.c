/* The table's fast paths against the straightforward ones: the radix sort of rows against
 * a comparison sort by the comparator that defines the order; a frame's rows (the model's
 * table unsorted and unnamed, kept while nothing changed) against rows made from scratch
 * with names, in every grouping, source, sort and mode; the model's generation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../src/console/row_order.h"
#include "../../src/console/ui.h"
#include "common/apis.h"
#include "stream_builder.h"
#include "model/view_support.h"
#include "xorshift.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const enum sort_field all_fields[] = {SORT_ID,     SORT_LIVE, SORT_COUNT, SORT_CHANGE, SORT_PEAK,
                                             SORT_ALLOCS, SORT_KIND, SORT_SITE,  SORT_MODULE};
#define NFIELDS (sizeof all_fields / sizeof *all_fields)


/* n rows with many ties: values from a few choices (wide = spans of 64 bits), every id
 * once, some ids twice (a site's blocks row beside its other row). */
static void random_rows(struct row *r, size_t n, int wide)
{
    static const char *const texts[] = {"a.cu:1", "a.cu:2", "b.cu:10", NULL, "b.cu:10"};
    static const char *const mods[] = {"/x/liba.so", "/x/libb.so", NULL};
    static const uint32_t kinds[] = {1u << CULEAK_KIND_DEVICE, 1u << CULEAK_KIND_MANAGED,
                                     1u << CULEAK_KIND_DEVICE | 1u << CULEAK_KIND_MANAGED};
    for (size_t i = 0; i < n; i++) {
        memset(&r[i], 0, sizeof r[i]);
        int twin = i > 0 && next() % 4 == 0 && r[i - 1].kinds != 1u << CULEAK_KIND_BLOCK;
        r[i].id = twin ? r[i - 1].id : (uint32_t)(i * 7 + 3);
        r[i].kinds = twin ? 1u << CULEAK_KIND_BLOCK : kinds[next() % 3];
        if (wide) {
            r[i].live = next() % 3 ? next() : next() % 4;
            r[i].change = (int64_t)(next() % 3 ? next() : (uint64_t)(int64_t)(next() % 5) - 2);
            if (next() % 8 == 0)
                r[i].change = next() % 2 ? INT64_MIN : INT64_MAX;
        } else {
            r[i].live = (next() % 5) << 20;
            r[i].change = (int64_t)(next() % 5) - 2;
        }
        r[i].count = next() % 4;
        r[i].peak = r[i].live + next() % 3;
        r[i].allocs = next() % 3;
        r[i].text = texts[next() % 5];
        r[i].module = mods[next() % 3];
        r[i].stack = i;
    }
    for (size_t i = n; i > 1; i--) { /* in no order */
        size_t j = next() % i;
        struct row t = r[i - 1];
        r[i - 1] = r[j];
        r[j] = t;
    }
}

static int ref_cmp(const void *a, const void *b, void *arg)
{
    const int *fr = arg;
    return row_order_cmp(a, b, (enum sort_field)fr[0], fr[1]);
}

/* Rows equal by the comparator are the same row: the order is total. */
static void assert_same_rows(const struct row *a, const struct row *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(a[i].id, b[i].id);
        assert_int_equal(a[i].kinds, b[i].kinds);
        assert_int_equal(a[i].stack, b[i].stack);
    }
}

static void test_radix_equals_comparison_sort(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 3, 17, 300, 5000};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = sizes[si];
        for (int wide = 0; wide < 2; wide++) {
            struct row *orig = calloc(n + 1, sizeof *orig), *want = calloc(n + 1, sizeof *want);
            assert_non_null(orig);
            assert_non_null(want);
            random_rows(orig, n, wide);
            for (size_t fi = 0; fi < NFIELDS; fi++) {
                for (int rev = 0; rev < 2; rev++) {
                    memcpy(want, orig, n * sizeof *orig);
                    int arg[2] = {(int)all_fields[fi], rev};
                    qsort_r(want, n, sizeof *want, ref_cmp, arg);
                    for (size_t i = 1; i < n; i++) /* a strict order: no two rows compare equal */
                        assert_true(row_order_cmp(&want[i - 1], &want[i], all_fields[fi], rev) < 0);
                    for (int multi = 0; multi < 2; multi++) { /* one packed key, or a pass per key */
                        struct row_sort_scratch s = {.multi_pass = multi};
                        size_t cap = n + 1;
                        struct row *got = malloc(cap * sizeof *got);
                        assert_non_null(got);
                        memcpy(got, orig, n * sizeof *orig);
                        rows_sort(&got, &cap, n, all_fields[fi], rev, &s);
                        assert_true(cap >= n);
                        assert_same_rows(got, want, n);
                        memcpy(got, orig, n * sizeof *orig); /* again, with the buffers kept */
                        rows_sort(&got, &cap, n, all_fields[fi], rev, &s);
                        assert_same_rows(got, want, n);
                        free(got);
                        row_sort_scratch_free(&s);
                    }
                }
            }
            free(orig);
            free(want);
        }
    }
}

/* A window of the order, found around a row of it (or from the start), against the same
 * places of a comparison sort; the other rows are all still there. */
static void test_window_equals_sorted_places(void **state)
{
    (void)state;
    static const size_t sizes[] = {1, 2, 3, 50, 3000};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = sizes[si];
        struct row *orig = calloc(n, sizeof *orig), *want = calloc(n, sizeof *want), *got = calloc(n, sizeof *got);
        assert_true(orig && want && got);
        random_rows(orig, n, si % 2);
        for (size_t fi = 0; fi < NFIELDS; fi++) {
            for (int rev = 0; rev < 2; rev++) {
                struct row_sort_scratch s = {0};
                assert_int_equal(rows_keys(orig, n, all_fields[fi], rev, &s), 0); /* text: the comparator */
                memcpy(want, orig, n * sizeof *orig);
                int arg[2] = {(int)all_fields[fi], rev};
                qsort_r(want, n, sizeof *want, ref_cmp, arg);
                for (int trial = 0; trial < 12; trial++) {
                    size_t lo = next() % n, hi = lo + 1 + next() % 20, rank = lo + next() % (hi - lo);
                    if (hi > n)
                        hi = n;
                    if (rank >= hi)
                        rank = hi - 1;
                    size_t at = n;
                    for (size_t i = 0; i < n; i++) /* the row of that place */
                        if (orig[i].id == want[rank].id && orig[i].kinds == want[rank].kinds)
                            at = i;
                    assert_true(at < n);
                    assert_int_equal(rows_keys(orig, n, all_fields[fi], rev, &s), 0);
                    if (trial % 4 == 3) { /* none: from the start */
                        at = n;
                        lo = 0;
                    } else
                        assert_int_equal(rows_rank(&s, n, at), rank);
                    memcpy(got, orig, n * sizeof *orig);
                    assert_int_equal(rows_keys(got, n, all_fields[fi], rev, &s), 0);
                    size_t first = rows_window(got, n, at, lo, hi, &s);
                    assert_int_equal(first, lo);
                    assert_same_rows(got + lo, want + lo, hi - lo);
                    uint64_t sum_got = 0, sum_want = 0; /* every row once: stacks are 0..n-1 */
                    for (size_t i = 0; i < n; i++) {
                        sum_got += got[i].stack * got[i].stack + 1;
                        sum_want += want[i].stack * want[i].stack + 1;
                    }
                    assert_true(sum_got == sum_want);
                }
                row_sort_scratch_free(&s);
            }
        }
        free(orig);
        free(want);
        free(got);
    }
}

/* Text columns' ranks kept in one scratch from round to round, as frames keep them, while
 * texts change under the rows: names resolved later (a row's text a new pointer), new
 * rows, texts equal in content at other pointers, rows of few rows (the kept texts mostly
 * stale: made again). Every round, the sort and windows against a comparison sort. */
#define TEXT_POOL 4000
static void test_text_ranks_kept_across_changes(void **state)
{
    (void)state;
    char(*pool)[24] = calloc(TEXT_POOL, sizeof *pool); /* never changed once handed out */
    assert_non_null(pool);
    size_t used = 0;
    const size_t most = 1500;
    struct row *rows = calloc(most, sizeof *rows), *want = calloc(most, sizeof *want),
               *got = calloc(most, sizeof *got);
    assert_true(rows && want && got);
    struct row_sort_scratch sorted = {0}, windows = {0};
    size_t n = 300;
    random_rows(rows, n, 0);
    for (int round = 0; round < 24; round++) {
        /* names resolved: some rows get new texts (some equal to texts there are) */
        for (size_t i = 0; i < n && used < TEXT_POOL; i++) {
            if (next() % 5)
                continue;
            if (next() % 3 == 0 && i > 0 && rows[i - 1].text) /* the same text, another pointer */
                snprintf(pool[used], sizeof pool[used], "%s", rows[i - 1].text);
            else
                snprintf(pool[used], sizeof pool[used], "f%03u.cu:%u", (unsigned)(next() % 200), (unsigned)(next() % 9));
            rows[i].text = pool[used++];
            if (next() % 7 == 0)
                rows[i].module = pool[used - 1];
            if (rows[i].kinds != 1u << CULEAK_KIND_BLOCK && i + 1 < n && rows[i + 1].id == rows[i].id)
                rows[i + 1].text = rows[i].text; /* a site's blocks row: the site's text */
        }
        if (round % 3 == 1 && n + 50 <= most) { /* new sites */
            random_rows(rows + n, 50, round % 2);
            for (size_t i = n; i < n + 50; i++)
                rows[i].id += 100000 + (uint32_t)round * 1000, rows[i].stack += n;
            n += 50;
        }
        size_t rn = round % 8 == 7 ? 20 : n; /* a few rows only: most kept texts stale */
        for (size_t i = 0; i < rn; i++)
            rows[i].live = (next() % 4) << 20;
        for (size_t fi = 0; fi < NFIELDS; fi++) {
            if (all_fields[fi] != SORT_SITE && all_fields[fi] != SORT_MODULE)
                continue;
            for (int rev = 0; rev < 2; rev++) {
                memcpy(want, rows, rn * sizeof *rows);
                int arg[2] = {(int)all_fields[fi], rev};
                qsort_r(want, rn, sizeof *want, ref_cmp, arg);
                size_t cap = most;
                struct row *g = malloc(cap * sizeof *g);
                assert_non_null(g);
                memcpy(g, rows, rn * sizeof *rows);
                rows_sort(&g, &cap, rn, all_fields[fi], rev, &sorted);
                assert_same_rows(g, want, rn);
                free(g);
                memcpy(got, rows, rn * sizeof *rows);
                assert_int_equal(rows_keys(got, rn, all_fields[fi], rev, &windows), 0);
                assert_true(windows.nk == 3); /* the text's rank is a key, no comparator */
                size_t lo = next() % rn, hi = lo + 1 + next() % 30;
                hi = hi > rn ? rn : hi;
                size_t at = rn;
                for (size_t i = 0; i < rn; i++)
                    if (got[i].id == want[lo].id && got[i].kinds == want[lo].kinds)
                        at = i;
                assert_int_equal(rows_rank(&windows, rn, at), lo);
                assert_int_equal(rows_window(got, rn, at, lo, hi, &windows), lo);
                assert_same_rows(got + lo, want + lo, hi - lo);
            }
        }
    }
    assert_true(sorted.text_merges > 10); /* new texts were merged into kept ones */
    row_sort_scratch_free(&sorted);
    row_sort_scratch_free(&windows);
    free(rows);
    free(want);
    free(got);
    free(pool);
}

/* The order itself, by hand: larger first, then live, then lower id, blocks row last. */
static void test_order_definition(void **state)
{
    (void)state;
    struct row a = {.id = 5, .live = 100, .count = 2}, b = {.id = 3, .live = 100, .count = 2},
               c = {.id = 5, .live = 100, .count = 2, .kinds = 1u << CULEAK_KIND_BLOCK}, d = {.id = 9, .live = 7, .count = 9};
    assert_true(row_order_cmp(&b, &a, SORT_LIVE, 0) < 0);  /* tie: lower id first */
    assert_true(row_order_cmp(&a, &b, SORT_LIVE, 1) < 0);  /* reversed: higher id first */
    assert_true(row_order_cmp(&a, &c, SORT_LIVE, 0) < 0);  /* the blocks row after */
    assert_true(row_order_cmp(&a, &d, SORT_LIVE, 0) < 0);
    assert_true(row_order_cmp(&d, &a, SORT_COUNT, 0) < 0);
    assert_true(row_order_cmp(&b, &a, SORT_ID, 0) < 0);    /* by id: lower first */
    assert_true(row_order_cmp(&a, &b, SORT_ID, 1) < 0);
    struct row e = {.id = 1, .change = -5}, f = {.id = 2, .change = 3};
    assert_true(row_order_cmp(&f, &e, SORT_CHANGE, 0) < 0);
    assert_true(row_order_cmp(&e, &f, SORT_CHANGE, 1) < 0);
}

/* ---- a model with two processes, shared and own sites, every memory kind of note ---- */

#define APP "/nonexistent/app"
#define BASE 0x555500000000ull
#define NSTACKS 60

static void feed_bytes(struct model_stream *s, struct sb *b)
{
    assert_int_equal(model_stream_feed(s, b->buf, b->n), MODEL_FEED_OK);
    b->n = 0;
}

static void ev(struct sb *b, uint64_t seq, unsigned op, unsigned kind, uint64_t stack, uint64_t addr, uint64_t size)
{
    unsigned api = kind == CULEAK_KIND_BLOCK ? (op == CULEAK_OP_ALLOC ? CULEAK_API_TORCH_BLOCK_ALLOC
                                                                      : CULEAK_API_TORCH_BLOCK_FREE)
                   : kind == CULEAK_KIND_ADDRESS_RESERVE ? (op == CULEAK_OP_ALLOC ? CULEAK_API_CU_MEM_ADDRESS_RESERVE
                                                                                  : CULEAK_API_CU_MEM_ADDRESS_FREE)
                   : kind == CULEAK_KIND_MANAGED ? (op == CULEAK_OP_ALLOC ? CULEAK_API_CUDA_MALLOC_MANAGED
                                                                          : CULEAK_API_CUDA_FREE)
                                                 : (op == CULEAK_OP_ALLOC ? CULEAK_API_CUDA_MALLOC : CULEAK_API_CUDA_FREE);
    sb_event(b, (struct sb_ev){.seq = seq, .dt = 1000, .op = op, .api = api, .kind = kind, .size = size,
                               .addr = addr, .stack = stack});
}

struct job {
    struct model_stream *s[2];
    struct sb *b[2];
    uint64_t seq[2];
};

/* Process p: NSTACKS stacks under two callers; sites repeat (stack i and i + 30 share
 * the leaf address), so site rows gather several stacks. */
static void job_start(struct ui *u, struct job *j)
{
    for (int p = 0; p < 2; p++) {
        j->s[p] = model_stream_open(u->m);
        j->b[p] = sb_new();
        j->seq[p] = 1;
        struct sb *b = j->b[p];
        sb_hello(b, 100 + (uint64_t)p, APP, NULL);
        sb_module(b, APP, BASE, 0, 0x100000);
        sb_frame(b, 1, 0, BASE + 0x100);
        sb_frame(b, 2, 0, BASE + 0x180);
        for (uint64_t i = 0; i < NSTACKS; i++)
            sb_frame(b, 3 + i, 1 + i % 2, BASE + 0x1000 + (i % 30) * 0x10 + (uint64_t)p * 0x800 * (i % 3 == 0));
        feed_bytes(j->s[p], b);
    }
}

/* A round of events: allocations of every kind, frees of some earlier ones. */
static void job_round(struct job *j, int round)
{
    for (int p = 0; p < 2; p++) {
        struct sb *b = j->b[p];
        for (uint64_t i = 0; i < NSTACKS; i++) {
            uint64_t stack = 3 + (i * 7 + (uint64_t)round) % NSTACKS;
            unsigned kind = i % 5 == 0    ? CULEAK_KIND_BLOCK
                            : i % 7 == 0  ? CULEAK_KIND_MANAGED
                            : i % 13 == 1 ? CULEAK_KIND_ADDRESS_RESERVE /* address space: no memory */
                                          : CULEAK_KIND_DEVICE;
            uint64_t addr = 0x10000000ull * (uint64_t)(p + 1) + (uint64_t)round * 0x100000 + i * 0x1000;
            ev(b, j->seq[p]++, CULEAK_OP_ALLOC, kind, stack, addr, 512u << (i % 4));
            if (round > 0 && i % 3 == 0) /* a free of the last round's */
                ev(b, j->seq[p]++, CULEAK_OP_FREE, kind, stack, addr - 0x100000, 0);
        }
        feed_bytes(j->s[p], b);
    }
}

static void job_end(struct job *j)
{
    for (int p = 0; p < 2; p++) {
        model_stream_close(j->s[p]);
        sb_free(j->b[p]);
    }
}

/* The model's table (rows found through a flat index by id) against sums made stack by
 * stack, in every grouping and for one process and all; built again and again, so that a
 * slot left behind by one build would show in the next. Unsorted builds hold the rows of
 * sorted ones, and unnamed rows get the same names from model_row_name. */
struct want {
    uint32_t id;
    int blocks;
    uint64_t bytes, count;
};

static void test_table_against_stack_sums(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    struct job j;
    job_start(&u, &j);
    for (int r = 0; r < 4; r++)
        job_round(&j, r);
    static const enum model_group groups[] = {MODEL_GROUP_SITE, MODEL_GROUP_STACK, MODEL_GROUP_MODULE,
                                              MODEL_GROUP_FUNCTION, MODEL_GROUP_FILE};
    for (int round = 0; round < 2; round++) {
        for (size_t gi = 0; gi < sizeof groups / sizeof *groups; gi++) {
            for (int proc = MODEL_ALL; proc < 2; proc++) {
                enum model_group g = groups[gi];
                struct want w[2 * 2 * NSTACKS];
                size_t nw = 0;
                for (int p = 0; p < 2; p++) {
                    if (proc != MODEL_ALL && proc != p)
                        continue;
                    for (uint64_t st = 3; st < 3 + NSTACKS; st++) {
                        uint32_t id = model_stack_row(u.m, p, st, g);
                        if (id == UINT32_MAX)
                            continue;
                        for (int blocks = 0; blocks < 2; blocks++) {
                            uint64_t b, c;
                            model_stack_live(u.m, p, st, blocks ? 1u << CULEAK_KIND_BLOCK
                                                                : 1u << CULEAK_KIND_DEVICE | 1u << CULEAK_KIND_MANAGED, &b, &c);
                            size_t k = 0;
                            while (k < nw && !(w[k].id == id && w[k].blocks == blocks))
                                k++;
                            if (k == nw)
                                w[nw++] = (struct want){.id = id, .blocks = blocks};
                            w[k].bytes += b;
                            w[k].count += c;
                        }
                    }
                }
                struct model_query q;
                model_query_init(&q);
                q.group = g;
                q.proc = proc;
                struct model_table sorted, loose;
                assert_int_equal(model_table_build(u.m, &q, &sorted), 0);
                q.unsorted = 1;
                q.unnamed = 1;
                q.lazy_names = 1;
                assert_int_equal(model_table_build(u.m, &q, &loose), 0);
                assert_int_equal(sorted.n, loose.n);
                assert_true(sorted.total_bytes == loose.total_bytes && sorted.total_count == loose.total_count);
                size_t live_rows = 0;
                for (size_t i = 0; i < sorted.n; i++) {
                    const struct model_row *r = &sorted.rows[i];
                    int blocks = r->kinds == 1u << CULEAK_KIND_BLOCK;
                    size_t k = 0;
                    while (k < nw && !(w[k].id == r->id && w[k].blocks == blocks))
                        k++;
                    assert_true(k < nw);
                    assert_true(r->live_bytes == w[k].bytes);
                    assert_true(r->live_count == w[k].count);
                    live_rows += r->live_bytes || r->live_count;
                    struct model_row *l = NULL; /* the same row among the unsorted ones */
                    for (size_t x = 0; x < loose.n && !l; x++)
                        if (loose.rows[x].id == r->id && (loose.rows[x].kinds == 1u << CULEAK_KIND_BLOCK) == blocks)
                            l = &loose.rows[x];
                    assert_non_null(l);
                    assert_true(l->live_bytes == r->live_bytes && l->peak_bytes == r->peak_bytes &&
                                l->allocs == r->allocs && l->frees == r->frees && l->kinds == r->kinds &&
                                l->nstacks == r->nstacks && l->stack == r->stack && l->stack_proc == r->stack_proc);
                    if (g == MODEL_GROUP_SITE || g == MODEL_GROUP_STACK) {
                        assert_null(l->text);
                        assert_int_equal(l->named, 0);
                    }
                    struct model_row named = *r;
                    named.named = 0;
                    assert_true(model_row_name(u.m, g, &named) >= 0);
                    assert_true(model_row_name(u.m, g, l) >= 0);
                    assert_string_equal(l->text, named.text);
                    assert_string_equal(l->module, named.module);
                }
                size_t want_live = 0;
                for (size_t k = 0; k < nw; k++)
                    want_live += w[k].bytes || w[k].count;
                assert_int_equal(live_rows, want_live);
                /* the peaks summed per site as events come, against the per-kind sum of the
                 * row's kinds (asked for by naming every memory kind) */
                struct model_table every;
                q.kinds = 0;
                for (unsigned kd = 0; kd < CULEAK_KIND_COUNT; kd++)
                    q.kinds |= (uint32_t)culeak_kind_is_memory(kd) << kd;
                assert_int_equal(model_table_build(u.m, &q, &every), 0);
                assert_int_equal(every.n, sorted.n);
                for (size_t i = 0; i < sorted.n; i++) {
                    const struct model_row *r = &sorted.rows[i];
                    size_t x = 0;
                    while (x < every.n && !(every.rows[x].id == r->id && every.rows[x].kinds == r->kinds))
                        x++;
                    assert_true(x < every.n);
                    assert_true(every.rows[x].peak_bytes == r->peak_bytes);
                    assert_true(r->peak_bytes >= r->live_bytes);
                }
                model_table_free(&every);
                model_table_free(&sorted);
                model_table_free(&loose);
            }
        }
    }
    job_end(&j);
    ui_free(&u);
}

/* A table of a few rows of high ids (one process of two) leaves the flat index empty
 * behind it too: the same table again, and the other one, come out whole. */
/* Rows that need texts only (what the console's frames ask for) read each site's copy of
 * its texts: the same text, module and named as rows described from the site, while
 * names resolve a few at a time and new events arrive, grouped by site and by stack. */
static void test_texts_only_rows_equal_described_rows(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    struct job j;
    job_start(&u, &j);
    int mixed = 0;
    for (int step = 0; step < 12; step++) {
        job_round(&j, step);
        for (int gi = 0; gi < 2; gi++) {
            struct model_query q;
            model_query_init(&q);
            q.group = gi ? MODEL_GROUP_STACK : MODEL_GROUP_SITE;
            q.lazy_names = 1;
            q.unsorted = 1;
            struct model_table full, texts;
            for (int k = 0; k < 2; k++) { /* either first: a new site's text made by either */
                q.texts_only = (k + step) % 2;
                assert_int_equal(model_table_build(u.m, &q, q.texts_only ? &texts : &full), 0);
            }
            assert_int_equal(full.n, texts.n);
            assert_true(full.n > 0);
            int named = 0;
            for (size_t i = 0; i < full.n; i++) {
                const struct model_row *a = &full.rows[i], *b = &texts.rows[i];
                assert_int_equal(a->id, b->id);
                assert_string_equal(a->text, b->text);
                assert_ptr_equal(a->module, b->module);
                assert_int_equal(a->named, b->named);
                assert_int_equal(a->proc, b->proc);
                assert_true(a->stack == b->stack);
                assert_null(b->function);
                named += a->named;
            }
            mixed |= named > 0 && (size_t)named < full.n;
            model_table_free(&full);
            model_table_free(&texts);
        }
        model_resolve_names(u.m, step < 10 ? 3 : SIZE_MAX, 0);
    }
    assert_true(mixed); /* rows named and not in one table */
    job_end(&j);
    ui_free(&u);
}

static void test_few_rows_of_high_ids(void **state)
{
    (void)state;
    struct model *m = model_new(NULL);
    assert_non_null(m);
    struct model_stream *s[2];
    struct sb *b = NULL;
    for (int p = 0; p < 2; p++) {
        s[p] = model_stream_open(m);
        if (b)
            sb_free(b);
        b = sb_new(); /* a stream's header, then its records */
        sb_hello(b, 50 + (uint64_t)p, APP, NULL);
        sb_module(b, APP, BASE, 0, 0x100000);
        feed_bytes(s[p], b);
    }
    uint64_t seq = 1;
    for (uint64_t i = 0; i < 600; i++) { /* process 0: 600 sites */
        sb_frame(b, 1 + i, 0, BASE + 0x1000 + i * 8);
        ev(b, seq++, CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE, 1 + i, 0x100000 + i * 0x100, 100);
    }
    feed_bytes(s[0], b);
    for (uint64_t i = 0; i < 3; i++) { /* process 1: 3 sites of its own, the last ones made */
        sb_frame(b, 1 + i, 0, BASE + 0x9000 + i * 8);
        ev(b, 1 + i, CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE, 1 + i, 0x200000 + i * 0x100, 7);
    }
    feed_bytes(s[1], b);
    for (int round = 0; round < 3; round++) {
        for (int p = 1; p >= 0; p--) {
            struct model_query q;
            model_query_init(&q);
            q.proc = p;
            q.unsorted = round % 2;
            struct model_table t;
            assert_int_equal(model_table_build(m, &q, &t), 0);
            assert_int_equal(t.n, p ? 3 : 600);
            for (size_t i = 0; i < t.n; i++) {
                assert_true(t.rows[i].live_bytes == (p ? 7u : 100u));
                assert_int_equal(t.rows[i].nstacks, 1);
            }
            model_table_free(&t);
        }
    }
    for (int p = 0; p < 2; p++)
        model_stream_close(s[p]);
    sb_free(b);
    model_free(m);
}

/* What a frame made equals what ui_rows makes from scratch: the same rows in the same
 * order, the same numbers, the same names once named. */
static void assert_frame_rows_right(struct ui *u)
{
    struct grid g;
    struct layout l;
    layout_compute(40, 140, &l);
    grid_init(&g, 40, 140);
    ui_render(u, &g, &l);
    grid_free(&g);
    size_t n = u->nrows, sel = u->sel;
    struct row *got = malloc((n + 1) * sizeof *got);
    assert_non_null(got);
    memcpy(got, u->rows, n * sizeof *got);
    uint64_t tb = u->total_bytes, tc = u->total_count;
    ui_rows(u); /* from scratch, with names */
    assert_int_equal(u->nrows, n);
    assert_int_equal(u->sel, sel);
    assert_true(u->total_bytes == tb && u->total_count == tc);
    for (size_t i = 0; i < n; i++) {
        struct row *a = &got[i], *b = &u->rows[i];
        assert_int_equal(a->id, b->id);
        assert_true(a->live == b->live && a->count == b->count && a->peak == b->peak && a->allocs == b->allocs);
        assert_true(a->a_bytes == b->a_bytes && a->change == b->change && a->count_change == b->count_change);
        assert_int_equal(a->kinds, b->kinds);
        assert_int_equal(a->nstacks, b->nstacks);
        assert_int_equal(a->stack_proc, b->stack_proc);
        assert_true(a->stack == b->stack);
        ui_name_row(u, a);
        ui_name_row(u, b);
        assert_string_equal(a->text ? a->text : "(null)", b->text ? b->text : "(null)");
        assert_string_equal(a->module ? a->module : "(null)", b->module ? b->module : "(null)");
    }
    free(got);
}

static void test_frame_rows_equal_rows_from_scratch(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    struct job j;
    job_start(&u, &j);
    job_round(&j, 0);
    assert_int_equal(model_snapshot_take(u.m, "a"), 0);
    job_round(&j, 1);
    job_round(&j, 2);
    assert_int_equal(model_snapshot_take(u.m, "b"), 0);
    job_round(&j, 3);
    static const enum model_group groups[] = {MODEL_GROUP_SITE, MODEL_GROUP_STACK, MODEL_GROUP_MODULE,
                                              MODEL_GROUP_FUNCTION, MODEL_GROUP_FILE};
    for (size_t gi = 0; gi < sizeof groups / sizeof *groups; gi++) {
        u.group = groups[gi];
        for (size_t fi = 0; fi < NFIELDS; fi++) {
            for (int rev = 0; rev < 2; rev++) {
                u.sort = all_fields[fi];
            ui_resolve_names(&u, 0); /* as sort site does: then the order by names stays */
                u.sort_reverse = rev;
                u.base[0] = 0;
                assert_frame_rows_right(&u);
                snprintf(u.base, sizeof u.base, "a"); /* the change column */
                assert_frame_rows_right(&u);
                u.proc_filter = 1;
                assert_frame_rows_right(&u);
                u.proc_filter = -1;
                snprintf(u.filter, sizeof u.filter, "0x10");
                assert_frame_rows_right(&u);
                u.filter[0] = 0;
                u.diff_active = 1; /* a -> now, a -> b */
                snprintf(u.diff_a, sizeof u.diff_a, "a");
                assert_frame_rows_right(&u);
                snprintf(u.diff_b, sizeof u.diff_b, "b");
                assert_frame_rows_right(&u);
                u.diff_active = 0;
                u.diff_b[0] = 0;
                u.src.kind = MODEL_SOURCE_SNAPSHOT; /* the table at a past moment */
                snprintf(u.src.snapshot, sizeof u.src.snapshot, "b");
                assert_frame_rows_right(&u);
                u.src.kind = MODEL_SOURCE_PEAK;
                assert_frame_rows_right(&u);
                u.src.kind = MODEL_SOURCE_NOW;
            }
        }
    }
    job_end(&j);
    ui_free(&u);
}

/* Frames keep a snapshot's values per row for the change column and diffs: with events
 * between frames they equal values from scratch, also when the snapshot is taken again,
 * filled in at marks, or the grouping, process or diff changes. */
static void test_change_column_values_kept(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    struct job j;
    job_start(&u, &j);
    job_round(&j, 0);
    assert_int_equal(model_snapshot_take(u.m, "a"), 0);
    job_round(&j, 1);
    snprintf(u.base, sizeof u.base, "a");
    int round = 2;
    static const enum model_group groups[] = {MODEL_GROUP_SITE, MODEL_GROUP_STACK, MODEL_GROUP_FILE};
    for (int pass = 0; pass < 2; pass++) {
        for (int proc = -1; proc < 2; proc++) {
            u.proc_filter = proc;
            for (size_t gi = 0; gi < sizeof groups / sizeof *groups; gi++) {
                u.group = groups[gi];
                assert_frame_rows_right(&u); /* keeps the values */
                job_round(&j, round++);
                assert_frame_rows_right(&u); /* uses them */
            }
        }
        u.proc_filter = -1;
        u.group = MODEL_GROUP_SITE;
        assert_int_equal(model_snapshot_take(u.m, "a"), 0); /* the same name, other values */
        job_round(&j, round++);
        assert_frame_rows_right(&u);
        u.diff_active = 1; /* a -> now, then a -> b */
        snprintf(u.diff_a, sizeof u.diff_a, "a");
        job_round(&j, round++);
        assert_frame_rows_right(&u);
        assert_int_equal(model_snapshot_take(u.m, "b"), 0);
        snprintf(u.diff_b, sizeof u.diff_b, "b");
        job_round(&j, round++);
        assert_frame_rows_right(&u);
        u.diff_active = 0;
        u.diff_b[0] = 0;
    }
    /* armed at a mark: filled process by process */
    assert_int_equal(model_snapshot_at_mark(u.m, "m1", "c"), 0);
    snprintf(u.base, sizeof u.base, "c");
    assert_frame_rows_right(&u);
    for (int p = 0; p < 2; p++) {
        job_round(&j, round++);
        assert_frame_rows_right(&u);
        sb_mark(j.b[p], j.seq[p]++, "m1");
        feed_bytes(j.s[p], j.b[p]);
        job_round(&j, round++);
        assert_frame_rows_right(&u);
        if (p == 0) { /* a diff to c, which lacks process 1, then a's change column again */
            u.diff_active = 1;
            snprintf(u.diff_a, sizeof u.diff_a, "a");
            snprintf(u.diff_b, sizeof u.diff_b, "c");
            assert_frame_rows_right(&u);
            u.diff_active = 0;
            u.diff_b[0] = 0;
            snprintf(u.base, sizeof u.base, "a");
            job_round(&j, round++);
            assert_frame_rows_right(&u);
            snprintf(u.base, sizeof u.base, "c");
        }
    }
    job_end(&j);
    ui_free(&u);
}

/* Frames keep the rows while nothing they depend on changes, and only then. A row is
 * marked; a frame that keeps the rows keeps the mark. */
static int frame_kept_rows(struct ui *u)
{
    assert_true(u->nrows > 0);
    u->rows[0].allocs = 424242;
    struct grid g;
    struct layout l;
    layout_compute(30, 120, &l);
    grid_init(&g, 30, 120);
    ui_render(u, &g, &l);
    grid_free(&g);
    for (size_t i = 0; i < u->nrows; i++)
        if (u->rows[i].allocs == 424242)
            return 1;
    return 0;
}

static void test_frames_keep_rows_until_something_changes(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    struct job j;
    job_start(&u, &j);
    job_round(&j, 0);
    assert_int_equal(model_snapshot_take(u.m, "a"), 0);
    job_round(&j, 1);
    ui_rows(&u);
    assert_true(frame_kept_rows(&u)); /* it names the rows it shows, and keeps them */
    assert_true(model_names_pending(u.m) > 0);
    assert_true(ui_resolve_names(&u, 0) > 0); /* names that nothing reads are no reason */
    assert_true(frame_kept_rows(&u));
    assert_true(frame_kept_rows(&u));
    u.sel = 3; /* moving the selection keeps them too */
    u.sel_site = u.rows[3].id;
    assert_true(frame_kept_rows(&u));
    assert_int_equal(u.sel, 3);
    /* every change the rows depend on makes them again */
    job_round(&j, 2);
    assert_false(frame_kept_rows(&u));
    assert_true(frame_kept_rows(&u));
    u.sort = SORT_COUNT;
    assert_false(frame_kept_rows(&u));
    u.sort_reverse = 1;
    assert_false(frame_kept_rows(&u));
    u.group = MODEL_GROUP_STACK;
    assert_false(frame_kept_rows(&u));
    snprintf(u.filter, sizeof u.filter, "app");
    assert_false(frame_kept_rows(&u));
    assert_true(frame_kept_rows(&u));
    u.filter[0] = 0;
    assert_false(frame_kept_rows(&u));
    u.proc_filter = 0;
    assert_false(frame_kept_rows(&u));
    snprintf(u.base, sizeof u.base, "a");
    assert_false(frame_kept_rows(&u));
    u.diff_active = 1;
    snprintf(u.diff_a, sizeof u.diff_a, "a");
    assert_false(frame_kept_rows(&u));
    assert_int_equal(model_snapshot_take(u.m, "b"), 0);
    snprintf(u.diff_b, sizeof u.diff_b, "b");
    assert_false(frame_kept_rows(&u));
    snprintf(u.diff_a, sizeof u.diff_a, "b");
    snprintf(u.diff_b, sizeof u.diff_b, "a");
    assert_false(frame_kept_rows(&u));
    u.diff_active = 0;
    assert_false(frame_kept_rows(&u));
    u.src.kind = MODEL_SOURCE_SNAPSHOT;
    snprintf(u.src.snapshot, sizeof u.src.snapshot, "a");
    assert_false(frame_kept_rows(&u));
    snprintf(u.src.snapshot, sizeof u.src.snapshot, "b");
    assert_false(frame_kept_rows(&u));
    assert_int_equal(model_snapshot_take(u.m, "b"), 0); /* the same name, taken again */
    assert_false(frame_kept_rows(&u));
    u.src.kind = MODEL_SOURCE_NOW;
    assert_false(frame_kept_rows(&u));
    assert_true(frame_kept_rows(&u));
    /* sorted by site text, names resolved are a reason: the order reads them */
    u.sort = SORT_SITE;
    assert_false(frame_kept_rows(&u));
    frame_kept_rows(&u);
    struct sb *b = j.b[0];
    for (uint64_t i = 0; i < 20; i++) { /* new sites, not named yet */
        sb_frame(b, 3 + NSTACKS + i, 1, BASE + 0x8000 + i * 0x10);
        ev(b, j.seq[0]++, CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE, 3 + NSTACKS + i, 0x70000000 + i * 0x1000, 100 + i);
    }
    feed_bytes(j.s[0], b);
    assert_false(frame_kept_rows(&u));
    frame_kept_rows(&u);
    assert_true(model_names_pending(u.m) > 0);
    assert_true(ui_resolve_names(&u, 0) > 0);
    assert_false(frame_kept_rows(&u));
    assert_true(frame_kept_rows(&u));
    /* another model in the ui (goto reloads): the same generation number would not do */
    struct model *old = u.m;
    u.m = model_new(NULL);
    assert_non_null(u.m);
    struct grid g;
    struct layout l;
    layout_compute(30, 120, &l);
    grid_init(&g, 30, 120);
    ui_render(&u, &g, &l);
    grid_free(&g);
    assert_int_equal(u.nrows, 0);
    model_free(u.m);
    u.m = old;
    job_end(&j);
    ui_free(&u);
}

/* The generation moves with every change a view may show, and differs between models. */
static void test_model_generation(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    struct model *m = u.m, *other = model_new(NULL);
    assert_non_null(other);
    assert_true(model_generation(m) != model_generation(other));
    struct job j;
    uint64_t g = model_generation(m);
    job_start(&u, &j);
    assert_true(model_generation(m) != g);
    g = model_generation(m);
    job_round(&j, 0);
    assert_true(model_generation(m) != g);
    g = model_generation(m);
    assert_true(model_generation(m) == g); /* reading changes nothing */
    model_snapshot_take(m, "a");
    assert_true(model_generation(m) != g);
    g = model_generation(m);
    model_snapshot_copy(m, "a", "b");
    assert_true(model_generation(m) != g);
    g = model_generation(m);
    model_snapshot_drop(m, "b");
    assert_true(model_generation(m) != g);
    g = model_generation(m);
    model_process_set_exit_status(m, 0, 0);
    assert_true(model_generation(m) != g);
    g = model_generation(m);
    assert_true(model_names_pending(m) > 0);
    assert_true(model_resolve_names(m, 1, 0) == 1);
    assert_true(model_generation(m) != g);
    job_end(&j);
    model_free(other);
    ui_free(&u);
}

/* Scrolled to the end of a big table: the last rows of the full order are on screen; when
 * events arrive, the selection stays on its row. */
static int on_screen(const struct grid *g, const struct rect *t, uint32_t id)
{
    char want[16], line[256];
    snprintf(want, sizeof want, "%4u ", ui_site_id(id));
    for (int y = t->y + 1; y < t->y + t->h; y++)
        if (strncmp(grid_row_text(g, y, line, sizeof line), want, strlen(want)) == 0)
            return 1;
    return 0;
}

static void test_scroll_to_the_end(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    struct job j;
    job_start(&u, &j);
    for (int r = 0; r < 6; r++)
        job_round(&j, r);
    u.group = MODEL_GROUP_STACK;
    struct grid g;
    struct layout l;
    layout_compute(30, 120, &l);
    grid_init(&g, 30, 120);
    ui_render(&u, &g, &l);
    size_t n = u.nrows;
    assert_true(n > (size_t)l.table.h * 3);
    ui_key(&u, UK_END, &l);
    ui_render(&u, &g, &l);
    assert_int_equal(u.sel, n - 1);
    struct row last = u.rows[n - 1], before_last = u.rows[n - 2];
    assert_true(on_screen(&g, &l.table, last.id));
    assert_true(on_screen(&g, &l.table, before_last.id));
    ui_rows(&u); /* the full order from scratch ends the same */
    assert_int_equal(u.rows[n - 1].id, last.id);
    assert_int_equal(u.rows[n - 2].id, before_last.id);
    /* events arrive: rows move, the selection stays on its row and on screen */
    ui_key(&u, UK_UP, &l);
    ui_key(&u, UK_UP, &l);
    uint32_t sel_id = u.rows[u.sel].id;
    uint64_t sel_stack = u.rows[u.sel].stack;
    job_round(&j, 6);
    ui_render(&u, &g, &l);
    assert_int_equal(u.rows[u.sel].id, sel_id);
    assert_true(u.rows[u.sel].stack == sel_stack);
    assert_true(on_screen(&g, &l.table, sel_id));
    grid_free(&g);
    job_end(&j);
    ui_free(&u);
}

/* A table big enough that frames order only the rows on screen: what they show, and the
 * selection, are those of the full order (a sorted copy of the ui's rows, which stay as
 * they are), wherever the selection is and as events come. */
static void assert_screen_right(struct ui *u, const struct layout *l)
{
    size_t n = u->nrows, fit = (size_t)l->table.h - 1, top = u->top;
    struct row *c = malloc(n * sizeof *c);
    assert_non_null(c);
    memcpy(c, u->rows, n * sizeof *c);
    int arg[2] = {(int)u->sort, u->sort_reverse};
    qsort_r(c, n, sizeof *c, ref_cmp, arg);
    assert_true(u->sel >= top && u->sel < top + fit);
    for (size_t i = 0; i < fit && top + i < n; i++) {
        assert_int_equal(u->rows[top + i].id, c[top + i].id);
        assert_int_equal(u->rows[top + i].kinds, c[top + i].kinds);
    }
    assert_int_equal(u->rows[u->sel].id, c[u->sel].id);
    assert_int_equal(u->rows[u->sel].id, u->sel_site);
    free(c);
}

/* The id of the row `by` places after the selected one in the full order (a copy sorted
 * by the comparator; the ui's rows stay as they are). */
static uint32_t next_in_order(struct ui *u, long by)
{
    struct row *c = malloc(u->nrows * sizeof *c);
    assert_non_null(c);
    memcpy(c, u->rows, u->nrows * sizeof *c);
    int arg[2] = {(int)u->sort, u->sort_reverse};
    qsort_r(c, u->nrows, sizeof *c, ref_cmp, arg);
    size_t at = 0;
    while (at < u->nrows && !(c[at].id == u->rows[u->sel].id && c[at].kinds == u->rows[u->sel].kinds))
        at++;
    assert_true(at < u->nrows);
    long to = (long)at + by;
    if (to >= (long)u->nrows)
        to = (long)u->nrows - 1;
    if (to < 0)
        to = 0;
    uint32_t id = c[to].id;
    free(c);
    return id;
}

static void test_big_table_frames(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    struct model_stream *st = model_stream_open(u.m);
    struct sb *b = sb_new();
    sb_hello(b, 7, APP, NULL);
    sb_module(b, APP, BASE, 0, 0x100000);
    sb_frame(b, 1, 0, BASE + 0x100);
    const uint64_t nst = UI_PARTIAL_MIN + 1000;
    uint64_t seq = 1;
    for (uint64_t i = 0; i < nst; i++) {
        sb_frame(b, 2 + i, 1, BASE + 0x1000 + i * 4);
        ev(b, seq++, CULEAK_OP_ALLOC, i % 9 == 0 ? CULEAK_KIND_MANAGED : CULEAK_KIND_DEVICE, 2 + i, 0x1000000 + i * 0x1000,
           64 * (1 + i % 37));
        if (i % 11 == 0) /* a pool's blocks too: the site's second row, of the same id */
            ev(b, seq++, CULEAK_OP_ALLOC, CULEAK_KIND_BLOCK, 2 + i, 0x40000000 + i * 0x1000, 64 * (1 + i % 5));
    }
    feed_bytes(st, b);
    struct grid g;
    struct layout l;
    layout_compute(30, 120, &l);
    grid_init(&g, 30, 120);
    for (size_t fi = 0; fi < NFIELDS; fi++) {
        for (int rev = 0; rev < 2; rev++) {
            u.sort = all_fields[fi];
            ui_resolve_names(&u, 0); /* as sort site does: then the order by names stays */
            u.sort_reverse = rev;
            u.sel_valid = 0;
            u.sel = 0;
            ui_render(&u, &g, &l);
            assert_true(u.sorted_hi - u.sorted_lo < u.nrows); /* only the screen's rows */
            assert_screen_right(&u, &l);
            for (int step = 0; step < 6; step++) { /* the selection down the table, events coming */
                for (int k = 0; k < 13; k++) { /* past the screen's last row */
                    uint32_t next_id = next_in_order(&u, 1);
                    ui_key(&u, UK_DOWN, &l);
                    assert_int_equal(u.rows[u.sel].id, next_id);
                }
                ui_key(&u, step % 2 ? UK_PGDN : UK_UP, &l);
                uint64_t i = (uint64_t)step * 977 % nst; /* a stack grows, another shrinks */
                ev(b, seq, CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE, 2 + i, 0x80000000 + seq * 0x1000, 4096 * (1 + i % 5));
                seq++;
                ev(b, seq++, CULEAK_OP_FREE, CULEAK_KIND_DEVICE, 2 + (i * 7) % nst, 0x1000000 + ((i * 7) % nst) * 0x1000, 0);
                feed_bytes(st, b);
                ui_render(&u, &g, &l);
                assert_screen_right(&u, &l);
            }
            ui_key(&u, UK_END, &l);
            ui_render(&u, &g, &l);
            assert_int_equal(u.sel, u.nrows - 1);
            assert_screen_right(&u, &l);
            ev(b, seq, CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE, 2 + fi, 0x90000000 + seq * 0x1000, 1 << 20);
            seq++;
            feed_bytes(st, b); /* the selection near the end, then events */
            ui_render(&u, &g, &l);
            assert_screen_right(&u, &l);
            ui_key(&u, UK_HOME, &l);
            ui_render(&u, &g, &l);
            assert_int_equal(u.sel, 0);
            assert_screen_right(&u, &l);
            ev(b, seq, CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE, 3 + fi, 0xa0000000 + seq * 0x1000, 1 << 21);
            seq++;
            feed_bytes(st, b); /* made again: only the screen's rows in order */
            ui_render(&u, &g, &l);
            assert_screen_right(&u, &l);
            /* the terminal grows, nothing else changes: more rows on screen than in order */
            struct grid g2;
            struct layout l2;
            layout_compute(60, 120, &l2);
            grid_init(&g2, 60, 120);
            ui_render(&u, &g2, &l2);
            assert_screen_right(&u, &l2);
            grid_free(&g2);
            ev(b, seq, CULEAK_OP_ALLOC, CULEAK_KIND_DEVICE, 4 + fi, 0xb0000000 + seq * 0x1000, 1 << 21);
            seq++;
            feed_bytes(st, b);
            ui_render(&u, &g, &l);
            uint32_t last_id = next_in_order(&u, (long)(u.nrows - 1));
            u.sel = u.nrows - 1; /* put there by hand, nothing changed: the last row */
            u.sel_valid = 0;
            ui_render(&u, &g, &l);
            assert_int_equal(u.rows[u.sel].id, last_id);
            assert_screen_right(&u, &l);
            uint32_t sel_id = u.rows[u.sel].id;
            size_t sel = u.sel, nrows = u.nrows;
            ui_rows(&u); /* from scratch: the same */
            assert_int_equal(u.nrows, nrows);
            assert_int_equal(u.sel, sel);
            assert_int_equal(u.rows[sel].id, sel_id);
        }
    }
    grid_free(&g);
    model_stream_close(st);
    sb_free(b);
    ui_free(&u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_radix_equals_comparison_sort),
        cmocka_unit_test(test_order_definition),
        cmocka_unit_test(test_text_ranks_kept_across_changes),
        cmocka_unit_test(test_table_against_stack_sums),
        cmocka_unit_test(test_few_rows_of_high_ids),
        cmocka_unit_test(test_texts_only_rows_equal_described_rows),
        cmocka_unit_test(test_frame_rows_equal_rows_from_scratch),
        cmocka_unit_test(test_frames_keep_rows_until_something_changes),
        cmocka_unit_test(test_change_column_values_kept),
        cmocka_unit_test(test_model_generation),
        cmocka_unit_test(test_scroll_to_the_end),
        cmocka_unit_test(test_window_equals_sorted_places),
        cmocka_unit_test(test_big_table_frames),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
