/* Growth suspects in the console without a terminal: the header's suspects line appears
 * (taken from the table) once a site has grown at enough marks, follows new marks, and
 * the list the `suspects` command writes names only the growing site. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../src/console/ui.h"
#include "stream_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define APP "/nonexistent/app"
#define APP_BASE 0x555500000000ull
#define PY "/usr/bin/python3.12"
#define PY_BASE 0x555600000000ull

static uint64_t seq, addr = 0x7000000000ull;

enum { GROW = 5, CHURN = 6 };

/* Iteration i: stack GROW keeps `keep` bytes, CHURN allocates 1 MiB and frees it; then the
 * mark "iteration i" carrying a 1 GiB device with `free` bytes free. */
static void iteration_of(struct sb *b, int i, uint64_t keep, uint64_t free_bytes)
{
    sb_alloc(b, ++seq, GROW, addr += 0x10000, keep);
    sb_alloc(b, ++seq, CHURN, addr += 0x100000, 1 << 20);
    sb_free_dev(b, ++seq, CHURN, addr);
    char label[32];
    snprintf(label, sizeof label, "iteration %d", i);
    sb_u(b, ++seq);
    sb_u(b, 100000000); /* 0.1 s */
    sb_u(b, 7);
    sb_s(b, label);
    sb_u(b, 0);
    sb_z(b, 0);
    sb_u(b, free_bytes);
    sb_u(b, 1ull << 30);
    sb_end(b, CULEAK_REC_MARK);
}

static void iteration(struct sb *b, int i, uint64_t free_bytes) { iteration_of(b, i, 4096, free_bytes); }

/* A process whose stack GROW is app+0x200 called through three interpreter frames from
 * app+0x100; stack CHURN is app+0x300 */
static void prologue(struct sb *b, uint64_t pid)
{
    sb_hello(b, pid, APP, NULL);
    sb_module(b, APP, APP_BASE, 0, 0x10000);
    sb_module(b, PY, PY_BASE, 0, 0x10000);
    sb_frame(b, 1, 0, APP_BASE + 0x100);
    sb_frame(b, 2, 1, PY_BASE + 0x100);
    sb_frame(b, 3, 2, PY_BASE + 0x200);
    sb_frame(b, 4, 3, PY_BASE + 0x300);
    sb_frame(b, GROW, 4, APP_BASE + 0x200);
    sb_frame(b, CHURN, 1, APP_BASE + 0x300);
}

static void feed(struct model_stream *s, struct sb *b)
{
    assert_int_equal(model_stream_feed(s, b->buf, b->n), MODEL_FEED_OK);
    b->n = 0;
}

/* a line of the output pane from line `from` on holds text */
static int out_has_from(const struct ui *u, size_t from, const char *text)
{
    for (size_t i = from; i < outbuf_lines(&u->out); i++)
        if (strstr(outbuf_line(&u->out, i), text))
            return 1;
    return 0;
}

static int out_has(const struct ui *u, const char *text) { return out_has_from(u, 0, text); }

static void render(struct ui *u, struct grid *g, struct layout *l)
{
    grid_free(g);
    assert_int_equal(grid_init(g, 40, 160), 0);
    layout_compute(40, 160, l);
    ui_render(u, g, l);
}

/* The row of site text: its line's index in the grid, or -1. */
static int row_of(const struct grid *g, const char *text)
{
    char row[512];
    for (int y = 0; y < g->h; y++)
        if (strstr(grid_row_text(g, y, row, sizeof row), text))
            return y;
    return -1;
}

/* A console whose job runs, and the stream of its process 4242 begun (its prologue). */
static struct sb *running_job(struct ui *u, struct model_stream **s)
{
    assert_int_equal(ui_init(u), 0);
    u->state = JOB_RUNNING;
    *s = model_stream_open(u->m);
    struct sb *b = sb_new();
    prologue(b, 4242);
    return b;
}

/* A suspect's row is marked '*' after its id and its site drawn as a suspect's, once it is
 * one; a row that only churns is not; growth is drawn as growth. */
static void test_suspect_rows_highlighted(void **state)
{
    (void)state;
    struct ui u;
    struct model_stream *s;
    struct sb *b = running_job(&u, &s);
    for (int i = 0; i < 4; i++)
        iteration(b, i, 1ull << 30);
    feed(s, b);
    struct grid g = {0};
    struct layout l;
    char row[512];
    render(&u, &g, &l);
    int y = row_of(&g, "app+0x200");
    assert_true(y > 0);
    assert_int_equal(grid_row_text(&g, y, row, sizeof row)[4], ' '); /* no suspect yet */
    iteration(b, 4, 40ull << 20);
    feed(s, b);
    render(&u, &g, &l);
    u.sel = 1; /* the selection's colours are its own: select the other row */
    u.sel_valid = 0;
    render(&u, &g, &l);
    y = row_of(&g, "app+0x200");
    int other = row_of(&g, "app+0x300");
    assert_true(y > 0 && other > 0);
    grid_row_text(&g, y, row, sizeof row);
    assert_int_equal(row[4], '*');
    const char *at = strstr(row, "app+0x200");
    assert_int_equal(g.c[y * g.w + (int)(at - row)].attr, AT_SUSPECT);
    const char *plus = strstr(row, "+20.0 KiB");
    assert_non_null(plus);
    assert_int_equal(g.c[y * g.w + (int)(plus - row)].attr, AT_GROW);
    grid_row_text(&g, other, row, sizeof row);
    assert_int_equal(row[4], ' ');
    assert_int_not_equal(g.c[other * g.w + (int)(strstr(row, "app+0x300") - row)].attr, AT_SUSPECT);
    grid_free(&g);
    model_stream_close(s);
    sb_free(b);
    ui_free(&u);
}

static void test_header_line_and_list(void **state)
{
    (void)state;
    struct ui u;
    struct model_stream *s;
    struct sb *b = running_job(&u, &s);
    for (int i = 0; i < 4; i++)
        iteration(b, i, 1ull << 30);
    feed(s, b);
    struct grid g = {0};
    struct layout l;
    char row[512];
    /* four marks: no verdict, the table's header right under the header's two lines */
    render(&u, &g, &l);
    assert_false(grid_contains(&g, "suspects:"));
    assert_non_null(strstr(grid_row_text(&g, 2, row, sizeof row), "site"));
    assert_int_equal(ui_suspects_list(&u), 0);

    /* a fifth mark: 4 rises of 4 intervals, with 40 MiB (10240 iterations) free */
    iteration(b, 4, 40ull << 20);
    feed(s, b);
    render(&u, &g, &l);
    grid_row_text(&g, 2, row, sizeof row);
    assert_non_null(strstr(row, "suspects: 1 site grows +4.00 KiB/iteration; it fills device 0 in ~10,000 "
                                "iterations (~17 min)"));
    assert_non_null(strstr(grid_row_text(&g, 3, row, sizeof row), "site")); /* the table moved down */
    /* more marks with less free memory: the line follows */
    iteration(b, 5, 4ull << 20);
    feed(s, b);
    render(&u, &g, &l);
    assert_true(grid_contains(&g, "it fills device 0 in ~1,000 iterations (~2 min)"));

    assert_int_equal(ui_suspects_list(&u), 1);
    /* the id is the table's: `show 2`, `break 2 grows 1MiB` */
    assert_true(out_has(&u, "#2 +4.00 KiB/iteration  app+0x200  [pid 4242]"));
    int y = 0;
    while (y < g.h && !strstr(grid_row_text(&g, y, row, sizeof row), "app+0x200"))
        y++;
    assert_true(y < g.h);
    assert_int_equal(strtol(row, NULL, 10), 2);
    assert_true(out_has(&u, "24.0 KiB live at 'iteration 5', rose at 5 of the last 5 marks \"iteration #\""));
    assert_true(out_has(&u, "grows since mark 'iteration 0' (5 marks ago, 4.00 KiB then)"));
    assert_true(out_has(&u, "at +4.00 KiB per iteration (0.10 s each), this site fills device 0 in ~1,000 "
                            "iterations (~2 min)"));
    assert_false(out_has(&u, "app+0x300")); /* the churning site */
    /* its stack, the interpreter's frames folded as the reports fold them */
    assert_true(out_has(&u, "  > #0  app+0x200"));
    assert_true(out_has(&u, "    ... 3 frames in python3.12 (looked through)"));
    assert_true(out_has(&u, "    #4  app+0x100"));
    assert_false(out_has(&u, "#1  python3.12"));

    /* a second process grows faster per iteration but has far more room: the header names
     * the one that fills its device first, in words that read; the site both grow at is
     * one site, whose growth per iteration is that of both */
    struct model_stream *s2 = model_stream_open(u.m);
    struct sb *b2 = sb_new();
    prologue(b2, 4343);
    for (int i = 0; i < 6; i++)
        iteration_of(b2, i, 8192, 1ull << 30);
    feed(s2, b2);
    render(&u, &g, &l);
    grid_row_text(&g, 2, row, sizeof row);
    assert_non_null(strstr(row, "suspects: 1 site in 2 processes grows +12.0 KiB/iteration in all; the fastest fills "
                                "device 0 in ~1,000 "
                                "iterations (~2 min) - `suspects` lists them"));
    size_t from = outbuf_lines(&u.out);
    assert_int_equal(ui_suspects_list(&u), 2);
    /* listed in that order: the soonest to fill first */
    assert_non_null(strstr(outbuf_line(&u.out, from + 1), "+4.00 KiB/iteration  app+0x200  [pid 4242]"));

    /* the first process exits: a forecast needs a running process; the other one's stays */
    sb_exit(b, ++seq);
    feed(s, b);
    render(&u, &g, &l);
    grid_row_text(&g, 2, row, sizeof row);
    assert_non_null(strstr(row, "the fastest fills device 0 in ~130,000 iterations (~3.6 h)"));
    /* then the second: no forecast at all, and the list speaks of what would have been */
    sb_exit(b2, ++seq);
    feed(s2, b2);
    render(&u, &g, &l);
    grid_row_text(&g, 2, row, sizeof row);
    assert_non_null(strstr(row, "suspects: 1 site in 2 processes grows +12.0 KiB/iteration in all - `suspects` lists them"));
    assert_null(strstr(row, "fills device"));
    from = outbuf_lines(&u.out);
    assert_int_equal(ui_suspects_list(&u), 2);
    assert_true(out_has_from(&u, from, "this site would have filled device 0 in ~1,000 more iterations (~2 min)"));
    /* a third process runs on a device with nothing free: said so, not "in ~0 iterations" */
    struct model_stream *s3 = model_stream_open(u.m);
    struct sb *b3 = sb_new();
    prologue(b3, 4444);
    for (int i = 0; i < 6; i++)
        iteration_of(b3, i, 4096, 0);
    feed(s3, b3);
    render(&u, &g, &l);
    grid_row_text(&g, 2, row, sizeof row);
    assert_non_null(strstr(row, "suspects: 1 site in 3 processes grows +16.0 KiB/iteration in all; device 0 has no "
                                "free memory left"));
    model_stream_close(s3);
    sb_free(b3);
    grid_free(&g);
    model_stream_close(s);
    model_stream_close(s2);
    sb_free(b);
    sb_free(b2);
    ui_free(&u);
}

/* Two sites of one process, one growing 1 MiB an iteration and one 1 KiB: the header
 * gives the fastest one's growth, never as if each grew 1 MiB (and their sum only where
 * it reads differently). */
static void test_header_growth_in_all(void **state)
{
    (void)state;
    struct ui u;
    struct model_stream *s;
    struct sb *b = running_job(&u, &s);
    for (int i = 0; i < 6; i++) {
        sb_alloc(b, ++seq, CHURN, addr += 0x10000, 1024);
        iteration_of(b, i, 1 << 20, 1ull << 30);
    }
    feed(s, b);
    struct grid g = {0};
    struct layout l;
    char row[512];
    render(&u, &g, &l);
    grid_row_text(&g, 2, row, sizeof row);
    assert_non_null(strstr(row, "suspects: 2 sites grow, the fastest +1.00 MiB/iteration; the fastest fills device 0 in "));
    grid_free(&g);
    model_stream_close(s);
    sb_free(b);
    ui_free(&u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_line_and_list), cmocka_unit_test(test_suspect_rows_highlighted),
        cmocka_unit_test(test_header_growth_in_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
