/* The cross-rank view over hand-made summaries: the order of the ranks, the rule that
 * names the ranks whose growth differs (median, MAD, the floor), the rank that fills its
 * device first, the call sites merged across ranks, the heat map's columns and cells, and
 * the words of the text view. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "report/ranks.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct rank_summary *make(size_t n)
{
    struct rank_summary *v = calloc(n, sizeof *v);
    for (size_t i = 0; i < n; i++) {
        char f[32];
        snprintf(f, sizeof f, "r%zu.culeak", i);
        v[i].file = strdup(f);
        v[i].host = strdup(i % 2 ? "b7" : "a1");
        v[i].rank = (int)(n - 1 - i); /* given out of order */
        v[i].pid = 100 + i;
        v[i].device = 0;
    }
    return v;
}

static void site(struct rank_summary *s, const char *text, uint64_t bytes, int64_t per_mark)
{
    s->sites = realloc(s->sites, (s->nsites + 1) * sizeof *s->sites);
    s->sites[s->nsites++] = (struct rank_site){.text = strdup(text), .bytes = bytes, .count = bytes ? 1 : 0,
                                               .per_mark = per_mark};
}

static void marks(struct rank_summary *s, size_t n, uint64_t base, uint64_t step)
{
    s->marks = calloc(n, sizeof *s->marks);
    for (size_t k = 0; k < n; k++) {
        char l[32];
        snprintf(l, sizeof l, "iteration %zu", k);
        s->marks[k] = (struct rank_mark){strdup(l), base + k * step};
    }
    s->nmarks = n;
}

static struct rank_summary *by_rank(struct ranks_view *r, int rank, size_t *at)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].rank == rank) {
            if (at)
                *at = i;
            return &r->v[i];
        }
    return NULL;
}

/* One rank of 32 grows: it alone differs, the others are flat. */
static void test_one_of_many(void **state)
{
    (void)state;
    struct rank_summary *v = make(32);
    v[18].growth = 64 << 20; /* rank 13 */
    struct ranks_view r;
    assert_int_equal(ranks_view_build(v, 32, &r), 0);
    assert_int_equal(r.ok, 32);
    assert_int_equal(r.hosts, 2);
    for (size_t i = 0; i < 32; i++)
        assert_int_equal(r.v[i].rank, (int)i); /* in rank order */
    assert_true(r.median == 0 && r.mad == 0);
    assert_int_equal(r.ndiffer, 1);
    size_t at = SIZE_MAX;
    by_rank(&r, 13, &at);
    assert_int_equal(r.differs[at], 1);
    ranks_view_free(&r);
}

/* Every rank grows a little, by different amounts: none differs (MAD scales the rule);
 * one growing far more does. */
static void test_noise_and_outlier(void **state)
{
    (void)state;
    struct rank_summary *v = make(9);
    for (size_t i = 0; i < 9; i++)
        v[i].growth = (int64_t)(1 << 20) + (int64_t)(i % 3) * 65536;
    struct ranks_view r;
    assert_int_equal(ranks_view_build(v, 9, &r), 0);
    assert_int_equal(r.ndiffer, 0);
    assert_true(r.median == (1 << 20) + 65536); /* 9 values: the middle one */
    assert_true(r.mad == 65536);
    ranks_view_free(&r);

    v = make(9);
    for (size_t i = 0; i < 9; i++)
        v[i].growth = (int64_t)(1 << 20) + (int64_t)(i % 3) * 65536;
    v[4].growth = 2 << 20; /* rank 4: 3 x 1.4826 x 64 KiB = 284 KiB above the median is the limit */
    assert_int_equal(ranks_view_build(v, 9, &r), 0);
    assert_int_equal(r.ndiffer, 1);
    size_t at = SIZE_MAX;
    by_rank(&r, 4, &at);
    assert_int_equal(r.differs[at], 1);
    ranks_view_free(&r);

    v = make(9);
    for (size_t i = 0; i < 9; i++)
        v[i].growth = (int64_t)(1 << 20) + (int64_t)(i % 3) * 65536;
    v[4].growth = (1 << 20) + 65536 + 280 * 1024; /* just inside the limit */
    assert_int_equal(ranks_view_build(v, 9, &r), 0);
    assert_int_equal(r.ndiffer, 0);
    ranks_view_free(&r);
}

/* All flat but one rank growing less than a page: not named (the floor). */
static void test_floor(void **state)
{
    (void)state;
    struct rank_summary *v = make(4);
    v[0].growth = 4095;
    struct ranks_view r;
    assert_int_equal(ranks_view_build(v, 4, &r), 0);
    assert_int_equal(r.ndiffer, 0);
    ranks_view_free(&r);
    v = make(4);
    v[0].growth = 4096;
    assert_int_equal(ranks_view_build(v, 4, &r), 0);
    assert_int_equal(r.ndiffer, 1);
    ranks_view_free(&r);
}

/* Sites merged by text, a rank counted once per site, bytes added up, the fastest rank
 * kept; growing sites first. Unreadable recordings sort last and count nowhere. */
static void test_sites(void **state)
{
    (void)state;
    struct rank_summary *v = make(5);
    site(&v[0], "f at data.py:88", 100, 0);
    site(&v[0], "f at data.py:88", 50, 0); /* the same text twice in one rank */
    site(&v[1], "f at data.py:88", 10, 2048);
    site(&v[2], "f at data.py:88", 0, 4096);
    site(&v[2], "g at model.py:5", 1000, 0);
    free(v[3].host);
    v[3].host = NULL;
    v[3].error = strdup("r3.culeak: not a recording");
    site(&v[4], "h at x.py:1", 7, 0);
    free(v[4].host);
    v[4].host = strdup("c3");
    struct ranks_view r;
    assert_int_equal(ranks_view_build(v, 5, &r), 0);
    assert_int_equal(r.n, 5);
    assert_int_equal(r.ok, 4);
    assert_non_null(r.v[4].error);
    assert_int_equal(r.hosts, 3);
    assert_int_equal(r.nsites, 3);
    assert_string_equal(r.sites[0].text, "f at data.py:88");
    assert_int_equal(r.sites[0].nranks, 3);
    assert_int_equal(r.sites[0].bytes, 160);
    assert_int_equal(r.sites[0].per_mark, 4096);
    assert_int_equal(r.v[r.sites[0].fastest].rank, 2);
    assert_int_equal(r.sites[0].nwhich, 3);
    assert_string_equal(r.sites[1].text, "g at model.py:5"); /* then the most bytes */
    assert_int_equal(r.sites[1].nranks, 1);
    assert_int_equal(r.sites[1].fastest, SIZE_MAX);
    assert_string_equal(r.sites[2].text, "h at x.py:1");
    ranks_view_free(&r);
}

/* Two ranks, one flat and one growing: the growing one differs; of four, two growing
 * alike, both do (the lower median is the flat half). */
static void test_two_ranks(void **state)
{
    (void)state;
    struct rank_summary *v = make(2);
    v[0].growth = 1 << 20; /* rank 1 */
    struct ranks_view r;
    assert_int_equal(ranks_view_build(v, 2, &r), 0);
    assert_true(r.median == 0);
    assert_int_equal(r.ndiffer, 1);
    assert_int_equal(r.differs[1], 1);
    assert_int_equal(r.v[1].rank, 1);
    ranks_view_free(&r);
    v = make(4);
    v[0].growth = v[1].growth = 1 << 20; /* ranks 3 and 2 */
    assert_int_equal(ranks_view_build(v, 4, &r), 0);
    assert_int_equal(r.ndiffer, 2);
    assert_true(r.differs[2] && r.differs[3]);
    ranks_view_free(&r);
}

/* The rank whose device fills soonest; ranks without a forecast never. */
static void test_first_full(void **state)
{
    (void)state;
    struct rank_summary *v = make(3);
    v[0].forecast = 1, v[0].fill_s = 500;
    v[1].forecast = 1, v[1].fill_s = 60, v[1].fill_device = 1;
    struct ranks_view r;
    assert_int_equal(ranks_view_build(v, 3, &r), 0);
    assert_int_equal(r.v[r.first_full].rank, 1);
    ranks_view_free(&r);
    v = make(2);
    assert_int_equal(ranks_view_build(v, 2, &r), 0);
    assert_int_equal(r.first_full, SIZE_MAX);
    ranks_view_free(&r);
}

/* Columns: the marks of the rank with the most, at most RANKS_COLUMNS_MAX, first and last
 * kept; a rank's cell is its own mark of that label, unknown when it has none. */
static void test_heat_map(void **state)
{
    (void)state;
    struct rank_summary *v = make(3);
    marks(&v[0], 200, 1000, 10);
    marks(&v[1], 5, 0, 1);
    struct ranks_view r;
    assert_int_equal(ranks_view_build(v, 3, &r), 0);
    assert_int_equal(r.ncolumns, RANKS_COLUMNS_MAX);
    assert_string_equal(r.columns[0], "iteration 0");
    assert_string_equal(r.columns[RANKS_COLUMNS_MAX - 1], "iteration 199");
    size_t big = SIZE_MAX, small = SIZE_MAX, none = SIZE_MAX;
    by_rank(&r, 2, &big);
    by_rank(&r, 1, &small);
    by_rank(&r, 0, &none);
    int known;
    assert_int_equal(ranks_cell(&r, big, 0, &known), 1000);
    assert_int_equal(known, 1);
    assert_int_equal(ranks_cell(&r, big, RANKS_COLUMNS_MAX - 1, &known), 1000 + 199 * 10);
    assert_int_equal(ranks_cell(&r, small, 0, &known), 0);
    assert_int_equal(known, 1);
    ranks_cell(&r, small, RANKS_COLUMNS_MAX - 1, &known);
    assert_int_equal(known, 0);
    ranks_cell(&r, none, 3, &known);
    assert_int_equal(known, 0);
    ranks_view_free(&r);
}

/* The text: the table marks the rank that differs, the sentence names it and its line. */
static void test_text(void **state)
{
    (void)state;
    struct rank_summary *v = make(4);
    v[2].growth = 64 << 20; /* rank 1, on a1 */
    v[2].suspect = strdup("load at /job/src/data.py:88");
    site(&v[2], "load at /job/src/data.py:88", 128 << 20, 64 << 20);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct ranks_view r;
    assert_int_equal(ranks_view_build(v, 4, &r), 0);
    assert_int_equal(ranks_text(f, &r, NULL), 0);
    fclose(f);
    assert_non_null(strstr(buf, "RANKS: 4 recordings of 2 hosts\n"));
    assert_non_null(strstr(buf, "rank 1 on a1 grows +64.0 MiB per iteration in load at data.py:88; the other 3 "
                                "ranks are flat\n"));
    assert_non_null(strstr(buf, "  load at data.py:88 on 1 of 4 ranks (1): 128 MiB leaked in 1 allocation; grows "
                                "+64.0 MiB per iteration on rank 1 on a1\n"));
    assert_non_null(strstr(buf, "\n* a1       1 "));
    ranks_view_free(&r);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_of_many), cmocka_unit_test(test_noise_and_outlier), cmocka_unit_test(test_floor), cmocka_unit_test(test_two_ranks),
        cmocka_unit_test(test_sites),       cmocka_unit_test(test_first_full),        cmocka_unit_test(test_heat_map),
        cmocka_unit_test(test_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
