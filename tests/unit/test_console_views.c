/* Console logic without a terminal: sizes, commands, breakpoint conditions, the tracker,
 * and the screen rendered into a text grid. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../src/console/breakpoints.h"
#include "../../src/console/cmdline.h"
#include "../../src/console/fmt.h"
#include "../../src/console/ui.h"
#include "apis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_sizes(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(fmt_size(b, sizeof b, 0), "0 B");
    assert_string_equal(fmt_size(b, sizeof b, 1023), "1023 B");
    assert_string_equal(fmt_size(b, sizeof b, 1536), "1.50 KiB");
    assert_string_equal(fmt_size(b, sizeof b, 64ull << 20), "64.0 MiB");
    assert_string_equal(fmt_size(b, sizeof b, 3ull << 30), "3.00 GiB");
    assert_string_equal(fmt_delta(b, sizeof b, -2048), "-2.00 KiB");
    assert_string_equal(fmt_delta(b, sizeof b, 0), "0");
    uint64_t v;
    assert_int_equal(parse_size("64MiB", &v), 0);
    assert_true(v == 64ull << 20);
    assert_int_equal(parse_size("1.5G", &v), 0);
    assert_true(v == 3ull << 29);
    assert_int_equal(parse_size("4096", &v), 0);
    assert_true(v == 4096);
    assert_int_equal(parse_size("10 kib", &v), 0);
    assert_true(v == 10240);
    assert_int_equal(parse_size("12 parsecs", &v), -1);
    assert_int_equal(parse_size("-1", &v), -1);
    double s;
    assert_int_equal(parse_seconds("250ms", &s), 0);
    assert_true(s > 0.249 && s < 0.251);
    assert_int_equal(parse_seconds("2m", &s), 0);
    assert_true(s == 120);
    assert_int_equal(parse_seconds("soon", &s), -1);
}

static void test_commands(void **state)
{
    (void)state;
    char buf[256], *argv[CMD_MAX_ARGS];
    assert_int_equal(cmd_split("  break main.cu:42 live > 64MiB ", buf, sizeof buf, argv), 5);
    assert_string_equal(argv[0], "break");
    assert_string_equal(argv[4], "64MiB");
    assert_int_equal(cmd_split("filter \"a b\"", buf, sizeof buf, argv), 2);
    assert_string_equal(argv[1], "a b");
    assert_int_equal(cmd_split("filter \"open", buf, sizeof buf, argv), -1);
    assert_string_equal(cmd_specs[cmd_lookup("c")].name, "continue");
    assert_string_equal(cmd_specs[cmd_lookup("b")].name, "break");
    assert_string_equal(cmd_specs[cmd_lookup("snapshots")].name, "snapshots");
    assert_string_equal(cmd_specs[cmd_lookup("exp")].name, "export");
    assert_int_equal(cmd_lookup("s"), cmd_lookup("step"));
    assert_int_equal(cmd_lookup("di"), -2); /* diff, disable */
    assert_int_equal(cmd_lookup("frobnicate"), -1);
    for (size_t i = 0; i < cmd_nspecs; i++) /* every command has help */
        assert_true(strlen(cmd_specs[i].help) > 10);
    assert_int_equal(sort_field_by_name("peak"), SORT_PEAK);
    assert_int_equal(group_by_name("module"), GROUP_MODULE);
    assert_int_equal(group_by_name("nope"), -1);
}

static void test_breakpoint_conditions(void **state)
{
    (void)state;
    struct bp_spec s;
    char err[256], buf[256], *argv[CMD_MAX_ARGS];
    int argc = cmd_split("main.cu:42 live > 64 MiB", buf, sizeof buf, argv);
    assert_int_equal(bp_parse(argc, argv, &s, err, sizeof err), 0);
    assert_string_equal(s.site, "main.cu:42");
    assert_int_equal(s.cond, BP_LIVE_ABOVE);
    assert_true(s.value == 64ull << 20);
    argc = cmd_split("leaky_fn grows 10MiB", buf, sizeof buf, argv);
    assert_int_equal(bp_parse(argc, argv, &s, err, sizeof err), 0);
    assert_int_equal(s.cond, BP_GROWS);
    argc = cmd_split("3 count>100", buf, sizeof buf, argv);
    assert_int_equal(bp_parse(argc, argv, &s, err, sizeof err), 0);
    assert_int_equal(s.cond, BP_COUNT_ABOVE);
    assert_true(s.value == 100);
    argc = cmd_split("3", buf, sizeof buf, argv);
    assert_int_equal(bp_parse(argc, argv, &s, err, sizeof err), 0);
    assert_int_equal(s.cond, BP_ANY);
    argc = cmd_split("3 live < 5", buf, sizeof buf, argv);
    assert_int_equal(bp_parse(argc, argv, &s, err, sizeof err), -1);
    argc = cmd_split("3 grows lots", buf, sizeof buf, argv);
    assert_int_equal(bp_parse(argc, argv, &s, err, sizeof err), -1);
    assert_int_equal(bp_parse(0, argv, &s, err, sizeof err), -1);

    assert_true(bp_cond_met(BP_ANY, 0, 0, 0, 0));
    assert_true(bp_cond_met(BP_LIVE_ABOVE, 100, 0, 101, 1));
    assert_false(bp_cond_met(BP_LIVE_ABOVE, 100, 0, 100, 1));
    assert_true(bp_cond_met(BP_GROWS, 50, 100, 150, 1));
    assert_false(bp_cond_met(BP_GROWS, 50, 100, 149, 1));
    assert_false(bp_cond_met(BP_GROWS, 50, 100, 20, 1)); /* shrank */
    assert_true(bp_cond_met(BP_COUNT_ABOVE, 2, 0, 0, 3));

    struct bp_list l = {0};
    struct breakpoint *b = bp_add(&l, &s);
    assert_int_equal(b->id, 1);
    assert_int_equal(bp_add(&l, &s)->id, 2);
    assert_int_equal(bp_delete(&l, 1), 0);
    assert_int_equal(bp_delete(&l, 1), -1);
    assert_int_equal(l.n, 1);
    bp_free(&l);
}

/* A process with two stacks: stack 2 (leaf) leaks, stack 3 frees. */
static struct proc *feed(struct ui *u)
{
    struct proc *p = tracker_add_proc(&u->tr);
    p->pid = 4242;
    track_frame(p, 1, 0, 0x1000);
    track_frame(p, 2, 1, 0x2000);
    track_frame(p, 3, 1, 0x3000);
    struct culeak_event e = {.op = CULEAK_OP_ALLOC, .api = CULEAK_API_CUDA_MALLOC, .kind = CULEAK_KIND_DEVICE};
    for (int i = 0; i < 3; i++) {
        e.seq++;
        e.addr = 0x7000 + (uint64_t)i * 0x100;
        e.size = 1 << 20;
        e.stack = 2;
        track_event(&u->tr, p, &e);
    }
    e.seq++;
    e.addr = 0x9000;
    e.size = 4096;
    e.stack = 3;
    track_event(&u->tr, p, &e);
    e.op = CULEAK_OP_FREE;
    e.size = 0;
    track_event(&u->tr, p, &e);
    return p;
}

static void test_tracker(void **state)
{
    (void)state;
    struct ui u;
    ui_init(&u);
    struct proc *p = feed(&u);
    assert_true(u.tr.live_bytes == 3u << 20);
    assert_true(u.tr.live_count == 3);
    assert_true(u.tr.peak_bytes == (3u << 20) + 4096);
    assert_true(u.tr.dev_live[0] == 3u << 20);
    assert_int_equal(u.tr.nsites, 2);
    ui_rows(&u);
    assert_int_equal(u.nrows, 2);
    assert_true(u.rows[0].live == 3u << 20); /* sorted by live bytes */
    assert_true(u.rows[1].live == 0);
    assert_true(u.rows[1].peak == 4096);
    /* snapshot, then one more leak: the change column and a diff show it */
    char err[64];
    assert_non_null(snap_take(&u.snaps, &u.tr, "a", 1.0, err, sizeof err));
    assert_null(snap_take(&u.snaps, &u.tr, "a", 1.0, err, sizeof err));
    struct culeak_event e = {.seq = 9, .op = CULEAK_OP_ALLOC, .kind = CULEAK_KIND_DEVICE, .addr = 0xA000,
                             .size = 1 << 20, .stack = 2};
    track_event(&u.tr, p, &e);
    ui_rows(&u);
    assert_true(u.rows[0].change == 1 << 20);
    u.diff_active = 1;
    u.diff_a = 0;
    u.diff_b = -1;
    ui_rows(&u);
    assert_int_equal(u.nrows, 1);
    assert_true(u.rows[0].change == 1 << 20);
    assert_true(u.rows[0].count_change == 1);
    u.diff_active = 0;
    /* filter by id text; regroup by module merges both stacks */
    snprintf(u.filter, sizeof u.filter, "zzz");
    ui_rows(&u);
    assert_int_equal(u.nrows, 0);
    u.filter[0] = 0;
    tracker_regroup(&u.tr, GROUP_MODULE);
    ui_rows(&u);
    assert_int_equal(u.nrows, 1);
    assert_true(u.rows[0].live == 4u << 20);
    /* a FREE_ALL of device 0 ends everything */
    e.op = CULEAK_OP_FREE_ALL;
    e.device = 0;
    track_event(&u.tr, p, &e);
    assert_true(u.tr.live_bytes == 0);
    ui_free(&u);
}

static void test_screen_render(void **state)
{
    (void)state;
    struct ui u;
    ui_init(&u);
    feed(&u);
    snprintf(u.title, sizeof u.title, "train.py --epochs 3");
    u.state = JOB_RUNNING;
    const char *out = "epoch 1\r\nloss \x1b[31m0.5\x1b[0m\n";
    outbuf_feed(&u.out, out, strlen(out));
    struct layout l;
    struct grid g;
    for (int pass = 0; pass < 2; pass++) {
        int h = pass ? 40 : 24, w = pass ? 120 : 80;
        layout_compute(h, w, &l);
        assert_int_equal(l.prompt.y, h - 1);
        assert_true(l.table.h >= 3 && l.output.h >= 2);
        assert_int_equal(l.output.y + l.output.h, l.status.y);
        assert_int_equal(grid_init(&g, h, w), 0);
        ui_render(&u, &g, &l);
        assert_true(grid_contains(&g, "RUNNING"));
        assert_true(grid_contains(&g, "train.py --epochs 3"));
        assert_true(grid_contains(&g, "3.00 MiB"));
        assert_true(grid_contains(&g, "loss 0.5")); /* colors stripped from the job's output */
        assert_true(grid_contains(&g, "(culeak)"));
        char row[512];
        grid_row_text(&g, l.table.y + 1, row, sizeof row); /* the biggest site first */
        assert_non_null(strstr(row, "3.00 MiB"));
        grid_free(&g);
    }
    /* paused: loud banner with the allocation and how to attach */
    u.state = JOB_PAUSED;
    u.held = (struct held){.proc = 0, .seq = 1, .tid = 77, .size = 1 << 20, .leaf = 2,
                           .api = CULEAK_API_CUDA_MALLOC, .kind = CULEAK_KIND_DEVICE, .bp_id = 1};
    layout_compute(24, 80, &l);
    grid_init(&g, 24, 80);
    ui_render(&u, &g, &l);
    assert_true(grid_contains(&g, "PAUSED in cudaMalloc(1.00 MiB) - breakpoint 1"));
    assert_true(grid_contains(&g, "cuda-gdb -p 4242"));
    grid_free(&g);
    ui_free(&u);
}

static void test_outbuf(void **state)
{
    (void)state;
    struct outbuf o;
    outbuf_init(&o, 3);
    const char *text = "a\nb\nc\nd\nprogress 10%\rprogress 99%";
    outbuf_feed(&o, text, strlen(text));
    assert_int_equal(outbuf_lines(&o), 4); /* a dropped: 3 kept + the open line */
    assert_string_equal(outbuf_line(&o, 0), "b");
    assert_string_equal(outbuf_line(&o, 3), "progress 99%");
    outbuf_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),         cmocka_unit_test(test_commands),
        cmocka_unit_test(test_breakpoint_conditions), cmocka_unit_test(test_tracker),
        cmocka_unit_test(test_screen_render), cmocka_unit_test(test_outbuf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
