/* The console's header over recordings of separate runs opened together: their live bytes
 * add up and their peaks do not (the highest run's), so it says which each figure is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../src/console/screen.h"
#include "../../src/console/ui.h"
#include "stream_builder.h"

#include <stdio.h>
#include <string.h>

#define APP "/nonexistent/app"

/* one run: process pid started at wall-clock ns `wall`, leaving `bytes` live at its exit */
static void run(struct ui *u, uint64_t pid, uint64_t wall, uint64_t bytes)
{
    struct model_stream *s = model_stream_open(u->m);
    struct sb *b = sb_new();
    sb_hello_at(b, pid, APP, NULL, wall, 1000000);
    sb_module(b, APP, 0x400000, 0, 0x10000);
    sb_frame(b, 1, 0, 0x400100);
    sb_alloc(b, 1, 1, 0x7000, bytes);
    sb_exit(b, 2);
    assert_int_equal(model_stream_feed(s, b->buf, b->n), MODEL_FEED_OK);
    assert_int_equal(model_stream_finish(s), 0);
    model_stream_close(s);
    sb_free(b);
}

static void header(struct ui *u, char *row, size_t len)
{
    struct grid g;
    struct layout l;
    assert_int_equal(grid_init(&g, 40, 160), 0);
    layout_compute(40, 160, &l);
    ui_render(u, &g, &l);
    grid_row_text(&g, l.header.y + 1, row, len);
    grid_free(&g);
}

static void test_runs_live_and_peak_said(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    char row[512];
    run(&u, 100, 1000, 3 << 20);
    assert_int_equal(model_runs(u.m), 1);
    header(&u, row, sizeof row);
    if (!strstr(row, "live 3.00 MiB peak 3.00 MiB") || strstr(row, "runs"))
        fail_msg("one run: %s", row);
    run(&u, 200, 1000000000000ull, 5 << 20); /* started long after the first ended */
    assert_int_equal(model_runs(u.m), 2);
    header(&u, row, sizeof row);
    if (!strstr(row, "live 8.00 MiB (2 runs added up) peak 5.00 MiB (the highest run's)"))
        fail_msg("two runs: %s", row);
    ui_free(&u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_live_and_peak_said),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
