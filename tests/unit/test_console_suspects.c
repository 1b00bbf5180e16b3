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

static uint64_t seq, addr = 0x7000000000ull;

/* Iteration i: stack 2 keeps 4 KiB, stack 3 allocates 1 MiB and frees it; then the mark
 * "iteration i" carrying a 1 GiB device with `free` bytes free. */
static void iteration(struct sb *b, int i, uint64_t free_bytes)
{
    sb_alloc(b, ++seq, 2, addr += 0x10000, 4096);
    sb_alloc(b, ++seq, 3, addr += 0x100000, 1 << 20);
    sb_free_dev(b, ++seq, 3, addr);
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

static void feed(struct model_stream *s, struct sb *b)
{
    assert_int_equal(model_stream_feed(s, b->buf, b->n), MODEL_FEED_OK);
    b->n = 0;
}

static int out_has(const struct ui *u, const char *text)
{
    for (size_t i = 0; i < outbuf_lines(&u->out); i++)
        if (strstr(outbuf_line(&u->out, i), text))
            return 1;
    return 0;
}

static void render(struct ui *u, struct grid *g, struct layout *l)
{
    grid_free(g);
    assert_int_equal(grid_init(g, 40, 160), 0);
    layout_compute(40, 160, l);
    ui_render(u, g, l);
}

static void test_header_line_and_list(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    u.state = JOB_RUNNING;
    struct model_stream *s = model_stream_open(u.m);
    struct sb *b = sb_new();
    sb_hello(b, 4242, APP, NULL);
    sb_module(b, APP, APP_BASE, 0, 0x10000);
    sb_frame(b, 1, 0, APP_BASE + 0x100);
    sb_frame(b, 2, 1, APP_BASE + 0x200);
    sb_frame(b, 3, 1, APP_BASE + 0x300);
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
    grid_free(&g);
    model_stream_close(s);
    sb_free(b);
    ui_free(&u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_line_and_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
