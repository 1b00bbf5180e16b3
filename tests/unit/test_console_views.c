/* Console logic without a terminal: sizes, commands, breakpoint conditions, the table,
 * snapshots and breakpoints read from a model fed with a synthetic stream, and the
 * screen rendered into a text grid. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../src/console/breakpoints.h"
#include "../../src/console/cmdline.h"
#include "../../src/console/console.h"
#include "../../src/console/fmt.h"
#include "../../src/console/screen.h"
#include "../../src/console/site_text.h"
#include "../../src/console/ui.h"
#include "common/apis.h"
#include "stream_builder.h"
#include "model/view_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    assert_int_equal(group_by_name("module"), MODEL_GROUP_MODULE);
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

#define APP "/nonexistent/app"
#define APP_BASE 0x555500000000ull

/* Feeds records into the ui's model the way the console does: bytes through a stream. */
static void feed_bytes(struct ui *u, struct model_stream *s, struct sb *b)
{
    assert_int_equal(model_stream_feed(s, b->buf, b->n), MODEL_FEED_OK);
    b->n = 0;
}

/* Process 4242: stack 2 (app+0x200) leaks 3 x 1 MiB, stack 3 (app+0x300) frees its 4 KiB. */
static struct model_stream *feed(struct ui *u, struct sb **out)
{
    struct model_stream *s = model_stream_open(u->m);
    assert_non_null(s);
    struct sb *b = sb_new();
    sb_hello(b, 4242, APP, NULL);
    sb_module(b, APP, APP_BASE, 0, 0x10000);
    sb_frame(b, 1, 0, APP_BASE + 0x100);
    sb_frame(b, 2, 1, APP_BASE + 0x200);
    sb_frame(b, 3, 1, APP_BASE + 0x300);
    for (int i = 0; i < 3; i++)
        sb_alloc(b, (uint64_t)i + 1, 2, 0x7000 + (uint64_t)i * 0x100, 1 << 20);
    sb_alloc(b, 4, 3, 0x9000, 4096);
    sb_free_dev(b, 5, 3, 0x9000);
    feed_bytes(u, s, b);
    *out = b;
    return s;
}

static void test_views_from_model(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    struct sb *b;
    struct model_stream *s = feed(&u, &b);
    uint64_t bytes, count;
    ui_totals(&u, &bytes, &count);
    assert_true(bytes == 3u << 20);
    assert_true(count == 3);
    struct model_counter dm;
    model_totals(u.m, MODEL_ALL, MODEL_ALL, MODEL_KIND_DEVICE_MEMORY, &dm);
    assert_true(dm.peak_bytes == (3u << 20) + 4096);
    ui_rows(&u);
    assert_int_equal(u.nrows, 2);
    assert_true(u.rows[0].live == 3u << 20); /* sorted by live bytes */
    assert_true(u.rows[0].change == 3 << 20); /* no snapshot yet: all of it is change */
    assert_true(u.rows[1].live == 0);
    assert_true(u.rows[1].peak == 4096);
    assert_non_null(strstr(u.rows[0].text, "+0x200"));
    /* a snapshot, then one more leak: the change column and a diff show it */
    assert_int_equal(model_snapshot_take(u.m, "a"), 0);
    snprintf(u.base, sizeof u.base, "a");
    sb_alloc(b, 6, 2, 0xA000, 1 << 20);
    feed_bytes(&u, s, b);
    ui_rows(&u);
    assert_true(u.rows[0].change == 1 << 20);
    assert_true(u.rows[0].a_bytes == 3u << 20);
    assert_true(u.rows[1].change == 0);
    u.diff_active = 1;
    snprintf(u.diff_a, sizeof u.diff_a, "a");
    ui_rows(&u);
    assert_int_equal(u.nrows, 1);
    assert_true(u.rows[0].change == 1 << 20);
    assert_true(u.rows[0].count_change == 1);
    u.diff_active = 0;
    /* filter; the row of an id; regroup by module merges both stacks */
    snprintf(u.filter, sizeof u.filter, "zzz");
    ui_rows(&u);
    assert_int_equal(u.nrows, 0);
    u.filter[0] = 0;
    struct row r;
    assert_int_equal(ui_find_site(&u, "+0x300", &r), -1); /* not a pattern of any frame */
    ui_rows(&u);
    assert_int_equal(ui_row_by_id(&u, u.rows[1].id, &r), 0);
    assert_true(r.peak == 4096);
    char idtext[16];
    snprintf(idtext, sizeof idtext, "#%u", ui_site_id(u.rows[0].id));
    assert_int_equal(ui_find_site(&u, idtext, &r), 0);
    assert_true(r.live == 4u << 20);
    u.group = MODEL_GROUP_MODULE;
    ui_rows(&u);
    assert_int_equal(u.nrows, 1);
    assert_true(u.rows[0].live == 4u << 20);
    assert_int_equal(u.rows[0].nstacks, 2);
    u.group = MODEL_GROUP_SITE;
    /* a FREE_ALL of device 0 ends everything */
    sb_event(b, (struct sb_ev){.seq = 7, .dt = 1000, .op = CULEAK_OP_FREE_ALL, .api = CULEAK_API_CUDA_MALLOC});
    feed_bytes(&u, s, b);
    ui_totals(&u, &bytes, &count);
    assert_true(bytes == 0);
    model_stream_close(s);
    sb_free(b);
    ui_free(&u);
}

/* The model's additions for the console: snapshot baselines per row, one stack's live. */
static void test_view_support(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    struct sb *b;
    struct model_stream *s = feed(&u, &b);
    uint64_t bytes, count;
    model_stack_live(u.m, 0, 2, 0, &bytes, &count);
    assert_true(bytes == 3u << 20 && count == 3);
    model_stack_live(u.m, 0, 3, 0, &bytes, &count);
    assert_true(bytes == 0 && count == 0);
    model_stack_live(u.m, 0, 2, 1u << CULEAK_KIND_HOST_PINNED, &bytes, &count); /* other kinds only */
    assert_true(bytes == 0);
    model_stack_live(u.m, 9, 2, 0, &bytes, &count); /* no such process */
    assert_true(bytes == 0);
    assert_int_equal(model_snapshot_take(u.m, "before"), 0);
    sb_free_dev(b, 6, 2, 0x7000);
    feed_bytes(&u, s, b);
    struct model_query q;
    model_query_init(&q);
    struct model_table t;
    assert_int_equal(model_table_build(u.m, &q, &t), 0);
    assert_int_equal(t.n, 2);
    uint64_t bb[2], bc[2];
    assert_int_equal(model_table_baseline(u.m, &q, "before", &t, bb, bc), 0);
    assert_true(t.rows[0].live_bytes == 2u << 20);
    assert_true(bb[0] == 3u << 20 && bc[0] == 3);
    assert_true(bb[1] == 0 && bc[1] == 0);
    assert_int_equal(model_table_baseline(u.m, &q, "nope", &t, bb, bc), -1);
    assert_true(bb[0] == 0);
    q.proc = 1; /* a process the snapshot lacks counts nothing */
    assert_int_equal(model_table_baseline(u.m, &q, "before", &t, bb, bc), 0);
    assert_true(bb[0] == 0);
    model_table_free(&t);
    model_stream_close(s);
    sb_free(b);
    ui_free(&u);
}

/* Whether the output pane has a line containing text. */
static int out_has(const struct ui *u, const char *text)
{
    for (size_t i = 0; i < outbuf_lines(&u->out); i++)
        if (strstr(outbuf_line(&u->out, i), text))
            return 1;
    return 0;
}

/* diff's second half: allocations made after A still live, by stack, with the stack. */
static void test_diff_new_allocations(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    struct sb *b;
    struct model_stream *s = feed(&u, &b); /* stack 2: 3 x 1 MiB live (events 1-3) */
    uint64_t bytes, count;
    assert_int_equal(ui_diff_new(&u, "nope", NULL, &bytes, &count), -1);
    assert_int_equal(model_snapshot_take(u.m, "a"), 0);
    assert_int_equal(ui_diff_new(&u, "a", NULL, &bytes, &count), 0);
    assert_true(bytes == 0 && count == 0);
    assert_true(out_has(&u, "no allocation made after a and still live now"));
    sb_alloc(b, 6, 2, 0xB000, 1 << 20);
    sb_alloc(b, 7, 3, 0xC000, 4096);
    sb_alloc(b, 8, 3, 0xD000, 4096);
    sb_free_dev(b, 9, 2, 0x7000);           /* made before a: not new */
    sb_alloc(b, 10, 2, 0xE000, 2 << 20);     /* made after a, gone again */
    sb_free_dev(b, 11, 2, 0xE000);
    feed_bytes(&u, s, b);
    assert_int_equal(model_snapshot_take(u.m, "b"), 0);
    sb_alloc(b, 12, 3, 0xF000, 4096);       /* after b */
    feed_bytes(&u, s, b);
    assert_int_equal(ui_diff_new(&u, "a", NULL, &bytes, &count), 0);
    assert_true(bytes == (1u << 20) + 3 * 4096 && count == 4);
    assert_true(out_has(&u, "4 allocations made after a and still live now: 1.01 MiB in 2 stacks"));
    assert_true(out_has(&u, "  1.00 MiB in 1 allocation, pid 4242, first at event 6:")); /* one: no s */
    assert_true(out_has(&u, "  12.0 KiB in 3 allocations, pid 4242, first at event 7:"));
    assert_true(out_has(&u, "  > #0  app+0x200"));  /* stack 2's frames, innermost first, the site marked */
    assert_true(out_has(&u, "    #1  app+0x100"));
    assert_true(out_has(&u, "  > #0  app+0x300"));
    assert_int_equal(ui_diff_new(&u, "a", "b", &bytes, &count), 0);
    assert_true(bytes == (1u << 20) + 2 * 4096 && count == 3);
    assert_true(out_has(&u, "  8.00 KiB in 2 allocations, pid 4242, first at event 7:"));
    assert_true(out_has(&u, "3 allocations made after a up to b and still live now: 1.00 MiB in 2 stacks"));
    model_stream_close(s);
    sb_free(b);
    ui_free(&u);
}

/* A breakpoint pauses as its condition says, counts each pause, and `grows N` pauses
 * again only after each further N since it was set (+N, +2N, ...). */
static void test_breakpoint_hits(void **state)
{
    (void)state;
    const uint64_t M = 1 << 20;
    struct bp_spec grows = {.cond = BP_GROWS, .value = 20 * M};
    struct bp_list l = {0};
    struct breakpoint *b = bp_add(&l, &grows);
    b->base = 4 * M;
    /* the site's live bytes after each allocation (base 4 MiB): +4 +20 +24 +28 +40 +65 +79 +80 */
    const uint64_t live[] = {8, 24, 28, 32, 44, 69, 83, 84};
    const int paused[] = {0, 1, 0, 0, 1, 1, 0, 1};
    for (size_t i = 0; i < sizeof live / sizeof *live; i++)
        if (bp_hit(b, live[i] * M, i + 1) != paused[i])
            fail_msg("grows 20MiB at +%llu MiB: %s", (unsigned long long)(live[i] - 4),
                     paused[i] ? "did not pause" : "paused");
    assert_int_equal(b->hits, 4);
    /* shrinking and growing back to a multiple already paused at does not pause again */
    assert_false(bp_hit(b, 50 * M, 9));
    assert_false(bp_hit(b, 84 * M, 10));
    assert_true(bp_hit(b, 104 * M, 11));

    struct bp_spec live_above = {.cond = BP_LIVE_ABOVE, .value = 100};
    b = bp_add(&l, &live_above);
    assert_false(bp_hit(b, 100, 500));
    assert_true(bp_hit(b, 101, 1));
    assert_true(bp_hit(b, 102, 2)); /* stays above: every allocation pauses */
    struct bp_spec count_above = {.cond = BP_COUNT_ABOVE, .value = 3};
    b = bp_add(&l, &count_above);
    assert_false(bp_hit(b, 1000, 3));
    assert_true(bp_hit(b, 10, 4));
    assert_true(bp_hit(b, 10, 5));
    assert_int_equal(b->hits, 2);
    struct bp_spec any = {.cond = BP_ANY};
    b = bp_add(&l, &any);
    assert_true(bp_hit(b, 0, 0));
    assert_true(bp_hit(b, 0, 0));
    assert_int_equal(b->hits, 2);
    bp_free(&l);
}

/* Breakpoint conditions evaluated against what the model says the covered stacks hold. */
static void test_breakpoints_on_model(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    struct sb *b;
    struct model_stream *s = feed(&u, &b);
    ui_rows(&u);
    char buf[128], err[128], *argv[CMD_MAX_ARGS];
    snprintf(buf, sizeof buf, "%u grows 1.5MiB", ui_site_id(u.rows[0].id));
    char line[128];
    snprintf(line, sizeof line, "%s", buf);
    int argc = cmd_split(line, buf, sizeof buf, argv);
    struct bp_spec spec;
    assert_int_equal(bp_parse(argc, argv, &spec, err, sizeof err), 0);
    struct breakpoint *bp = bp_add(&u.bps, &spec);
    bp->by_row = 1;
    bp->group = MODEL_GROUP_SITE;
    bp->row = u.rows[0].id;
    ui_bp_collect(&u, bp);
    assert_int_equal(bp->nmembers, 1);
    assert_true(bp->base == 3u << 20);
    assert_true(ui_bp_covers(&u, bp, 0, 2));
    assert_false(ui_bp_covers(&u, bp, 0, 3));
    uint64_t live, count;
    sb_alloc(b, 6, 2, 0xB000, 1 << 20);
    feed_bytes(&u, s, b);
    ui_bp_live(&u, bp, &live, &count);
    assert_true(live == 4u << 20 && count == 4);
    assert_false(bp_cond_met(bp->spec.cond, bp->spec.value, bp->base, live, count)); /* grew 1 MiB */
    sb_alloc(b, 7, 2, 0xC000, 1 << 20);
    feed_bytes(&u, s, b);
    ui_bp_live(&u, bp, &live, &count);
    assert_true(bp_cond_met(bp->spec.cond, bp->spec.value, bp->base, live, count)); /* 2 MiB */
    assert_true(bp_cond_met(BP_COUNT_ABOVE, 4, 0, live, count));
    assert_false(bp_cond_met(BP_COUNT_ABOVE, 5, 0, live, count));
    /* a pattern breakpoint covers nothing when no frame matches */
    struct bp_spec pat = {.cond = BP_ANY};
    snprintf(pat.site, sizeof pat.site, "no_such_function");
    struct breakpoint *bp2 = bp_add(&u.bps, &pat);
    ui_bp_collect(&u, bp2);
    assert_int_equal(bp2->nmembers, 0);
    assert_true(bp2->base == 0);
    model_stream_close(s);
    sb_free(b);
    ui_free(&u);
}

static void test_screen_render(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    struct sb *b;
    struct model_stream *s = feed(&u, &b);
    snprintf(u.title, sizeof u.title, "train.py --epochs 3");
    u.state = JOB_RUNNING;
    const char *out = "epoch 1\r\nloss \x1b[31m0.5\x1b[0m\r\n";
    outbuf_feed(&u.out, out, strlen(out));
    struct layout l;
    struct grid g;
    for (int pass = 0; pass < 2; pass++) {
        int h = pass ? 40 : 24, w = pass ? 120 : 80;
        layout_compute(h, w, &l);
        assert_int_equal(l.keys.y, h - 1); /* htop's key bar at the bottom, the prompt above it */
        assert_int_equal(l.keys.h, 1);
        assert_int_equal(l.prompt.y, h - 2);
        assert_true(l.table.h >= 3 && l.output.h >= 2);
        assert_int_equal(l.output.y + l.output.h, l.status.y);
        assert_int_equal(grid_init(&g, h, w), 0);
        ui_render(&u, &g, &l);
        assert_true(grid_contains(&g, "RUNNING"));
        assert_true(grid_contains(&g, "train.py --epochs 3"));
        assert_true(grid_contains(&g, "3.00 MiB"));
        assert_true(grid_contains(&g, "loss 0.5")); /* the job's colours are the cells' */
        assert_true(grid_contains(&g, "(culeak)"));
        char row[512];
        grid_row_text(&g, l.table.y + 1, row, sizeof row); /* the biggest site first */
        assert_non_null(strstr(row, "3.00 MiB"));
        /* a device's live and peak bytes are labelled (not "3.00 MiB/3.00 MiB", read as
         * used/total) */
        grid_row_text(&g, l.header.y + 1, row, sizeof row);
        assert_non_null(strstr(row, "3.00 MiB (peak 3.00 MiB)"));
        grid_free(&g);
    }
    /* a long command: the program's name, not its directory, and "..." where it is cut */
    snprintf(u.title, sizeof u.title, "/home/someone/projects/experiments/build/late 400 70 marks");
    layout_compute(24, 80, &l);
    assert_int_equal(grid_init(&g, 24, 80), 0);
    ui_render(&u, &g, &l);
    assert_true(grid_contains(&g, " late 400 70 marks "));
    grid_free(&g);
    char fit[64];
    assert_string_equal(fmt_fit_command(fit, sizeof fit, "./late 400 70 marks", 40), "./late 400 70 marks");
    assert_string_equal(fmt_fit_command(fit, sizeof fit, "./bin/late 400 70 marks", 15), "late 400 70 ...");
    assert_string_equal(fmt_fit_command(fit, sizeof fit, "late", 2), "la");
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
    model_stream_close(s);
    sb_free(b);
    ui_free(&u);
}

/* Renders into a grid with guard cells after its h x w: a view that writes outside the
 * grid changes them (a heap overflow in the console, found by ASan under make SAN=1). */
static int render_stays_inside(struct ui *u, int h, int w)
{
    enum { GUARD = 4096 };
    struct layout l;
    layout_compute(h, w, &l);
    struct grid g = {.h = h, .w = w, .c = calloc((size_t)h * (size_t)w + GUARD, sizeof(struct cell))};
    assert_non_null(g.c);
    struct cell *guard = g.c + (size_t)h * (size_t)w;
    for (int i = 0; i < GUARD; i++)
        guard[i] = (struct cell){.ch = 0xFEED, .attr = AT_BAD};
    ui_render(u, &g, &l);
    int inside = 1;
    for (int i = 0; i < GUARD; i++)
        inside &= guard[i].ch == 0xFEED && guard[i].attr == AT_BAD;
    const struct rect *rs[] = {&l.header, &l.table, &l.stack, &l.output, &l.status, &l.prompt, &l.keys};
    for (size_t i = 0; i < sizeof rs / sizeof *rs; i++)
        if (rs[i]->h > 0 && (rs[i]->y < 0 || rs[i]->y + rs[i]->h > h || rs[i]->x + rs[i]->w > w))
            inside = 0;
    char row[1024];
    /* every size draws something: the screen, or a line saying it is too small */
    int drew = grid_contains(&g, "culeak") || grid_contains(&g, "too small") ||
               (h == 1 && strlen(grid_row_text(&g, 0, row, sizeof row)) > 0);
    free(g.c);
    return inside && (drew || w < 8);
}

static void test_every_terminal_size(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    struct sb *b;
    struct model_stream *s = feed(&u, &b);
    snprintf(u.title, sizeof u.title, "train.py --epochs 3");
    u.state = JOB_RUNNING;
    for (int i = 0; i < 50; i++) {
        const char *out = "epoch 1 loss 0.5 a line of the job's output long enough to wrap\r\n";
        outbuf_feed(&u.out, out, strlen(out));
    }
    for (int pass = 0; pass < 3; pass++) {
        if (pass == 1) { /* paused, with the stack of the held allocation */
            u.state = JOB_PAUSED;
            u.held = (struct held){.proc = 0, .seq = 1, .tid = 77, .size = 1 << 20, .leaf = 2,
                                   .api = CULEAK_API_CUDA_MALLOC, .kind = CULEAK_KIND_DEVICE, .bp_id = 1};
        }
        if (pass == 2) /* the help view over the panes */
            ui_help_open(&u, NULL);
        for (int h = 1; h <= 30; h++)
            for (int w = 1; w <= 90; w += (w < 12 ? 1 : 13)) {
                if (!render_stays_inside(&u, h, w))
                    fail_msg("pass %d: a %dx%d terminal is drawn outside its grid or not at all", pass, w, h);
            }
    }
    model_stream_close(s);
    sb_free(b);
    ui_free(&u);
}

/* An exit report of 1500 sites does not push itself out of the output pane's scrollback:
 * the largest sites, where the rest is, and the summary. */
static void test_long_exit_report(void **state)
{
    (void)state;
    struct console c;
    memset(&c, 0, sizeof c);
    assert_int_equal(ui_init(&c.u), 0);
    struct model_stream *s = model_stream_open(c.u.m);
    assert_non_null(s);
    struct sb *b = sb_new();
    sb_hello(b, 4242, APP, NULL);
    sb_module(b, APP, APP_BASE, 0, 0x100000);
    for (uint64_t i = 1; i <= 1500; i++) {
        sb_frame(b, i, 0, APP_BASE + 0x100 + i * 16);
        sb_alloc(b, i, i, 0x7000000 + i * 0x1000, 4096 + i); /* the last site the largest */
    }
    feed_bytes(&c.u, s, b);
    console_leak_report(&c);
    size_t n = outbuf_lines(&c.u.out);
    assert_true(n < 2100);
    int summary = 0, note = 0, largest = 0, smallest = 0;
    for (size_t i = 0; i < n; i++) {
        const char *l = outbuf_line(&c.u.out, i);
        summary |= strstr(l, "LEAK SUMMARY: ") != NULL;
        note |= strstr(l, "more lines, of smaller sites: the whole report goes to --log-file FILE") != NULL;
        largest |= strstr(l, "app+0x5dc0") != NULL;  /* 0x100 + 1500 * 16 */
        smallest |= strstr(l, "app+0x110") != NULL;  /* 0x100 + 1 * 16 */
    }
    assert_true(summary && note && largest && !smallest);
    model_stream_close(s);
    sb_free(b);
    ui_free(&c.u);
}

static void test_outbuf(void **state)
{
    (void)state;
    struct outbuf o;
    outbuf_init(&o, 2);
    outbuf_resize(&o, 2, 40); /* a terminal of 2 rows: the rest scrolls into 2 rows kept */
    const char *text = "a\r\nb\r\nc\r\nd\r\nprogress 10%\rprogress 99%";
    outbuf_feed(&o, text, strlen(text));
    assert_int_equal(outbuf_lines(&o), 4); /* a dropped: b c in the scrollback, d and the open line */
    assert_string_equal(outbuf_line(&o, 0), "b");
    assert_string_equal(outbuf_line(&o, 2), "d");
    assert_string_equal(outbuf_line(&o, 3), "progress 99%");
    /* a console line goes on a line of its own, after the job's unfinished one */
    outbuf_add_line(&o, "[culeak] hello");
    assert_string_equal(outbuf_line(&o, outbuf_lines(&o) - 1), "[culeak] hello");
    assert_string_equal(outbuf_line(&o, outbuf_lines(&o) - 2), "progress 99%");
    outbuf_free(&o);
}

/* The job's output through the terminal emulator: colours kept, wide characters one cell
 * plus their right half, cursor movement applied, long lines wrapped, control characters
 * of console lines never interpreted, and the job's colour survives a console line. */
static void test_outbuf_terminal(void **state)
{
    (void)state;
    struct outbuf o;
    struct ocell c[OUTBUF_MAX_COLS];
    assert_int_equal(outbuf_init(&o, 100), 0);
    outbuf_resize(&o, 5, 20);
    const char *colours = "ok \x1b[31mred\x1b[0m \x1b[1;44mbold\x1b[0m\r\n";
    outbuf_feed(&o, colours, strlen(colours));
    assert_string_equal(outbuf_line(&o, 0), "ok red bold");
    int n = outbuf_cells(&o, 0, c, OUTBUF_MAX_COLS);
    assert_int_equal(n, 11);
    assert_int_equal(c[0].fg, 0);
    assert_int_equal(c[3].fg, 2); /* ANSI 1 (red) + 1 */
    assert_int_equal(c[7].bg, 5); /* ANSI 4 (blue) + 1 */
    assert_true(c[7].style & OSTYLE_BOLD);
    const char *wide = "\xe6\xbc\xa2\xe5\xad\x97 x\r\n"; /* two CJK characters, two cells each */
    outbuf_feed(&o, wide, strlen(wide));
    n = outbuf_cells(&o, 1, c, OUTBUF_MAX_COLS);
    assert_int_equal(n, 6);
    assert_int_equal(c[0].ch, 0x6F22);
    assert_int_equal(c[1].ch, 0);
    assert_int_equal(c[2].ch, 0x5B57);
    assert_int_equal(c[5].ch, 'x');
    assert_string_equal(outbuf_line(&o, 1), "\xe6\xbc\xa2\xe5\xad\x97 x");
    const char *moves = "12345\x1b[3D\x1b[KZ\r\n"; /* back 3, erase to the end, write */
    outbuf_feed(&o, moves, strlen(moves));
    assert_string_equal(outbuf_line(&o, 2), "12Z");
    char lng[61];
    memset(lng, 'x', 60);
    memcpy(lng + 56, "END", 3);
    lng[60] = 0;
    outbuf_feed(&o, lng, 60); /* 60 columns on a 20-column terminal: 3 rows */
    outbuf_feed(&o, "\r\n", 2);
    size_t total = outbuf_lines(&o);
    assert_int_equal(total, 6);
    assert_string_equal(outbuf_line(&o, 5), "xxxxxxxxxxxxxxxxENDx"); /* columns 40 to 59 */
    assert_int_equal(outbuf_search(&o, "end", total), 5);
    assert_int_equal(outbuf_search(&o, "ok RED", total), 0);
    assert_int_equal(outbuf_search(&o, "ok", 0), -1);
    outbuf_feed(&o, "abcdefghijklmnopqrsTUVWXYZ\r\n", 28); /* wraps after T */
    total = outbuf_lines(&o);
    assert_string_equal(outbuf_line(&o, total - 1), "UVWXYZ");
    assert_int_equal(outbuf_search(&o, "stuv", total), (long)total - 2); /* found across the wrap */
    assert_int_equal(outbuf_search(&o, "WXY", total), (long)total - 1);
    /* a program asking where the cursor is gets the answer on its terminal */
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    o.reply_fd = &pfd[1];
    outbuf_feed(&o, "ab\x1b[6n", 6);
    char ans[32] = "";
    assert_int_equal(read(pfd[0], ans, sizeof ans - 1), 6);
    assert_string_equal(ans, "\x1b[5;3R"); /* row 5 (the last of 5), column 3 */
    outbuf_feed(&o, "\r\n", 2);
    o.reply_fd = NULL;
    close(pfd[0]);
    close(pfd[1]);
    outbuf_feed(&o, "\x1b[32mgreen ", 13);
    total = outbuf_lines(&o);
    outbuf_add_line(&o, "[culeak] \x1b[2J\x07 plain");
    outbuf_feed(&o, "still", 5);
    total = outbuf_lines(&o);
    assert_string_equal(outbuf_line(&o, total - 2), "[culeak] ?[2J? plain");
    n = outbuf_cells(&o, total - 2, c, OUTBUF_MAX_COLS);
    assert_int_equal(c[0].fg, 0);
    n = outbuf_cells(&o, total - 1, c, OUTBUF_MAX_COLS);
    assert_int_equal(n, 5);
    assert_int_equal(c[0].fg, 3); /* the job's green goes on */
    outbuf_free(&o);
}

/* help at 80x24: a view over the panes, every line within 80 columns (wrapped, not cut),
 * scrolling to the end reaches the keys; help with a prefix of several commands shows
 * each of them. */
static void test_help_view(void **state)
{
    (void)state;
    struct console c;
    memset(&c, 0, sizeof c);
    assert_int_equal(ui_init(&c.u), 0);
    struct layout l;
    struct grid g;
    layout_compute(24, 80, &l);
    assert_int_equal(grid_init(&g, 24, 80), 0);
    console_exec(&c, "help");
    assert_true(c.u.help_open);
    ui_render(&c.u, &g, &l);
    assert_true(grid_contains(&g, " help  lines 1-"));
    assert_true(grid_contains(&g, " help [COMMAND]"));
    assert_true(grid_contains(&g, "(culeak)"));
    /* diff's 86-column first line wraps at a blank, the rest indented under it */
    assert_true(grid_contains(&g, "     Show, per site, what changed from snapshot A to snapshot B (default: now),\n"));
    assert_true(grid_contains(&g, "\n       largest"));
    int pages = 0;
    while (!grid_contains(&g, "break leaky_fn grows 10MiB") && pages++ < 20) {
        ui_key(&c.u, UK_PGDN, &l);
        ui_render(&c.u, &g, &l);
    }
    assert_true(grid_contains(&g, "e.g. break 3, break main.cu:42 live > 64MiB,"));
    ui_key(&c.u, UK_END, &l);
    ui_render(&c.u, &g, &l);
    assert_true(grid_contains(&g, "? or F1"));
    assert_false(grid_contains(&g, " help [COMMAND]"));
    assert_true(help_key(&c.u, SK_CHAR, "q", 1));
    assert_false(c.u.help_open);
    ui_render(&c.u, &g, &l);
    assert_true(grid_contains(&g, "sort:live"));
    assert_true(help_key(&c.u, SK_CHAR, "?", 1));
    assert_true(c.u.help_open);
    assert_false(help_key(&c.u, SK_CHAR, "s", 1)); /* typing closes it and types */
    assert_false(c.u.help_open);
    assert_false(help_key(&c.u, SK_CHAR, "?", 0)); /* a ? inside a command is typed */
    assert_true(help_key(&c.u, SK_HELP, "", 0));
    assert_true(c.u.help_open);
    assert_true(help_key(&c.u, SK_ESC, "", 0));
    assert_false(c.u.help_open);
    console_exec(&c, "help snap");
    assert_true(c.u.help_open);
    assert_int_equal(c.u.msg_error, 0);
    ui_render(&c.u, &g, &l);
    assert_true(grid_contains(&g, " snapshot [NAME]"));
    assert_true(grid_contains(&g, " snapshots"));
    assert_false(grid_contains(&g, " diff A [B]"));
    console_exec(&c, "help frobnicate");
    assert_int_equal(c.u.msg_error, 1);
    grid_free(&g);
    ui_free(&c.u);
}

/* Sites in a column: the path relative to the working directory, then the directory, the
 * tail and the function's end give way, so that file:line stays visible. */
static void test_site_fit(void **state)
{
    (void)state;
    char b[256];
    const char *cwd = "/home/ann/src/proj";
    const char *t = "train_step at /home/ann/src/proj/demo/sim/loop_leak_sim.c:39";
    assert_string_equal(site_fit(t, cwd, 0, b, sizeof b), "train_step at demo/sim/loop_leak_sim.c:39");
    assert_string_equal(site_fit(t, "/home/ann/src/proj/", 80, b, sizeof b),
                        "train_step at demo/sim/loop_leak_sim.c:39");
    assert_string_equal(site_fit(t, "/home/ann/src/pro", 0, b, sizeof b), t); /* not under it */
    assert_string_equal(site_fit(t, NULL, 0, b, sizeof b), t);
    assert_string_equal(site_fit(t, cwd, 40, b, sizeof b), "train_step at .../sim/loop_leak_sim.c:39");
    assert_string_equal(site_fit(t, cwd, 36, b, sizeof b), "train_step at .../loop_leak_sim.c:39");
    assert_string_equal(site_fit(t, cwd, 34, b, sizeof b), "train_step at loop_leak_sim.c:39");
    assert_string_equal(site_fit(t, cwd, 28, b, sizeof b), "tra... at loop_leak_sim.c:39");
    assert_string_equal(site_fit(t, cwd, 20, b, sizeof b), "loop_leak_sim.c:39");
    assert_string_equal(site_fit(t, cwd, 12, b, sizeof b), "..._sim.c:39");
    /* a frame line: the prefix is part of the head, the tail goes before the function */
    const char *f = "> #0  longrun at /abs/tests/fakecuda/client_scenarios.c:337 (inlined)";
    assert_string_equal(site_fit(f, "/abs", 80, b, sizeof b),
                        "> #0  longrun at tests/fakecuda/client_scenarios.c:337 (inlined)");
    assert_string_equal(site_fit(f, "/abs", 50, b, sizeof b),
                        "> #0  longrun at client_scenarios.c:337 (inlined)");
    assert_string_equal(site_fit(f, "/abs", 40, b, sizeof b), "> #0  longrun at client_scenarios.c:337");
    /* a site reached through a library: its ", via LIB:LINE" is the tail, which gives way */
    const char *v = "<module> at /home/ann/src/proj/models/train.py:25, via tensorlib/__init__.py:16";
    assert_string_equal(site_fit(v, cwd, 0, b, sizeof b), "<module> at models/train.py:25, via tensorlib/__init__.py:16");
    assert_string_equal(site_fit(v, cwd, 30, b, sizeof b), "<module> at train.py:25");
    /* no file:line: cut only */
    assert_string_equal(site_fit("app+0x200", cwd, 5, b, sizeof b), "app+0");
    assert_string_equal(site_fit("fn at 0x12", cwd, 0, b, sizeof b), "fn at 0x12");
}

/* sort FIELD is largest first every time (asc: smallest first), texts A to Z (desc: Z to
 * A); a diff sorts by change
 * and diff off puts the earlier order back. */
static void test_sort_and_diff_order(void **state)
{
    (void)state;
    struct console c;
    memset(&c, 0, sizeof c);
    assert_int_equal(ui_init(&c.u), 0);
    console_exec(&c, "sort live");
    assert_int_equal(c.u.sort, SORT_LIVE);
    assert_false(c.u.sort_reverse);
    console_exec(&c, "sort live");
    assert_false(c.u.sort_reverse);
    console_exec(&c, "sort peak asc");
    assert_int_equal(c.u.sort, SORT_PEAK);
    assert_true(c.u.sort_reverse);
    console_exec(&c, "sort peak sideways");
    assert_int_equal(c.u.msg_error, 1);
    /* texts and ids read A to Z by themselves: asc keeps that, desc turns it round */
    console_exec(&c, "sort site asc");
    assert_false(c.u.sort_reverse);
    assert_non_null(strstr(c.u.msg, "sorted by site, A to Z"));
    console_exec(&c, "sort site desc");
    assert_true(c.u.sort_reverse);
    assert_non_null(strstr(c.u.msg, "sorted by site, Z to A"));
    console_exec(&c, "sort module");
    assert_false(c.u.sort_reverse);
    console_exec(&c, "sort live asc");
    assert_true(c.u.sort_reverse);
    assert_non_null(strstr(c.u.msg, "sorted by live, smallest first"));
    console_exec(&c, "sort peak asc");
    console_exec(&c, "snapshot a");
    console_exec(&c, "diff a");
    assert_true(c.u.diff_active);
    assert_int_equal(c.u.sort, SORT_CHANGE);
    console_exec(&c, "diff a now"); /* a second diff keeps the order from before the first */
    console_exec(&c, "diff off");
    assert_false(c.u.diff_active);
    assert_int_equal(c.u.sort, SORT_PEAK);
    assert_true(c.u.sort_reverse);
    assert_non_null(strstr(c.u.msg, "sorted by peak, smallest first"));
    console_exec(&c, "diff a");
    console_exec(&c, "group file");
    assert_false(c.u.diff_active);
    assert_int_equal(c.u.sort, SORT_PEAK);
    ui_free(&c.u);
}

/* A command that takes one name takes the rest of the line; diff splits its words into
 * two names that exist; quotes still group. */
static void test_rest_of_line(void **state)
{
    (void)state;
    struct console c;
    memset(&c, 0, sizeof c);
    assert_int_equal(ui_init(&c.u), 0);
    console_exec(&c, "snapshot iteration 10");
    assert_true(model_snapshot_find(c.u.m, "iteration 10") >= 0);
    console_exec(&c, "snapshot 'iteration  20'");
    assert_true(model_snapshot_find(c.u.m, "iteration  20") >= 0);
    console_exec(&c, "diff iteration 10");
    assert_int_equal(c.u.msg_error, 0);
    assert_string_equal(c.u.diff_a, "iteration 10");
    assert_string_equal(c.u.diff_b, "");
    console_exec(&c, "diff iteration 10 'iteration  20'");
    assert_int_equal(c.u.msg_error, 0);
    assert_string_equal(c.u.diff_a, "iteration 10");
    assert_string_equal(c.u.diff_b, "iteration  20");
    console_exec(&c, "diff \"iteration 10\" now");
    assert_string_equal(c.u.diff_b, "");
    console_exec(&c, "diff iteration 10 iteration 99");
    assert_int_equal(c.u.msg_error, 1);
    assert_non_null(strstr(c.u.msg, "'iteration 10 iteration 99' names no snapshots"));
    console_exec(&c, "diff nope");
    assert_non_null(strstr(c.u.msg, "no snapshot named 'nope'"));
    console_exec(&c, "filter a  b");
    assert_string_equal(c.u.filter, "a b");
    ui_free(&c.u);
}

/* The diff view's rows line up with its header: each column ends where its title ends,
 * at 80 and 120 columns; a long snapshot name keeps its end in the column title. */
static void test_diff_columns(void **state)
{
    (void)state;
    struct console c;
    memset(&c, 0, sizeof c);
    assert_int_equal(ui_init(&c.u), 0);
    struct sb *b;
    struct model_stream *s = feed(&c.u, &b); /* stack 2: 3 x 1 MiB live */
    console_exec(&c, "snapshot iteration 5");
    sb_alloc(b, 6, 2, 0xB000, 1 << 20);
    feed_bytes(&c.u, s, b);
    console_exec(&c, "diff iteration 5");
    assert_true(c.u.diff_active);
    for (int w = 80; w <= 120; w += 40) {
        struct grid g;
        assert_int_equal(grid_init(&g, 6, w), 0);
        table_view.render(&c.u, &g, (struct rect){0, 0, 6, w});
        char head[512], row[512];
        grid_row_text(&g, 0, head, sizeof head);
        grid_row_text(&g, 1, row, sizeof row);
        /* id change count+- now A allocs site: the row's values end under the titles */
        const char *t_allocs = strstr(head, "allocs"), *t_a = strstr(head, "..ration 5"), *t_site = strstr(head, "site");
        assert_non_null(t_allocs);
        assert_non_null(t_a);
        assert_non_null(t_site);
        assert_non_null(strstr(row, "+1.00 MiB"));
        assert_int_equal(strstr(row, "+1.00 MiB") + 9 - row, strstr(head, "change") + 6 - head);
        assert_int_equal(strstr(row, "4.00 MiB") + 8 - row, strstr(head, "now") + 3 - head);
        assert_int_equal(strstr(row, "3.00 MiB") + 8 - row, t_a + 10 - head);
        assert_int_equal(row[t_allocs + 5 - head], '4');          /* 4 allocations made */
        assert_int_equal(row[t_site - head - 1], ' ');
        assert_true(row[t_site - head] != ' ');                    /* the site starts under "site" */
        grid_free(&g);
    }
    model_stream_close(s);
    sb_free(b);
    ui_free(&c.u);
}

/* Grouped by stack, two stacks with the same call site are told apart by its caller. */
static void test_group_stack_callers(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    struct sb *b;
    struct model_stream *s = feed(&u, &b); /* stack 2: app+0x200 called from app+0x100 */
    sb_frame(b, 4, 3, APP_BASE + 0x200);   /* the same site called from app+0x300 */
    sb_alloc(b, 6, 4, 0xA000, 2 << 20);
    feed_bytes(&u, s, b);
    u.group = MODEL_GROUP_STACK;
    ui_rows(&u);
    struct grid g;
    assert_int_equal(grid_init(&g, 5, 120), 0);
    table_view.render(&u, &g, (struct rect){0, 0, 5, 120});
    assert_true(grid_contains(&g, "app+0x200 < app+0x300"));
    assert_true(grid_contains(&g, "app+0x200 < app+0x100"));
    grid_free(&g);
    model_stream_close(s);
    sb_free(b);
    ui_free(&u);
}

/* Scrolled back, the output pane keeps showing the same rows while the job writes on. */
static void test_output_scroll_stays(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    struct grid g;
    assert_int_equal(grid_init(&g, 6, 40), 0);
    struct rect r = {0, 0, 6, 40};
    for (int i = 0; i < 20; i++) {
        char line[32];
        int n = snprintf(line, sizeof line, "line %d\r\n", i);
        outbuf_feed(&u.out, line, (size_t)n);
    }
    output_view.render(&u, &g, r);
    u.out_scroll = 3;
    output_view.render(&u, &g, r);
    char top[64];
    grid_row_text(&g, 1, top, sizeof top);
    outbuf_feed(&u.out, "more 1\r\nmore 2\r\n", 16);
    grid_clear(&g);
    output_view.render(&u, &g, r);
    char again[64];
    assert_string_equal(grid_row_text(&g, 1, again, sizeof again), top);
    u.out_scroll = 0; /* at the newest, the pane follows the output */
    output_view.render(&u, &g, r);
    outbuf_feed(&u.out, "more 3\r\n", 8);
    output_view.render(&u, &g, r);
    assert_true(grid_contains(&g, "more 3"));
    grid_free(&g);
    ui_free(&u);
}

/* A PyTorch-like stack: 19 library frames (looked through by default) inside the call
 * site app+0x200, its caller app+0x100, and two libc frames outermost. The stack pane
 * folds each run into one line so the site is on screen even in a few rows; show folds
 * the same way and lists every frame with `full`. */
static void test_stack_folds_library_frames(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    struct model_stream *s = model_stream_open(u.m);
    assert_non_null(s);
    struct sb *b = sb_new();
    sb_hello(b, 4242, APP, NULL);
    sb_module(b, APP, APP_BASE, 0, 0x10000);
    const uint64_t libc = 0x7f0000000000ull, cpu = 0x7f1000000000ull, tcuda = 0x7f2000000000ull,
                   c10 = 0x7f3000000000ull;
    sb_module(b, "/usr/lib/libc.so.6", libc, 0, 0x10000);
    sb_module(b, "/opt/torch/lib/libtorch_cpu.so", cpu, 0, 0x10000);
    sb_module(b, "/opt/torch/lib/libtorch_cuda.so", tcuda, 0, 0x10000);
    sb_module(b, "/opt/torch/lib/libc10_cuda.so", c10, 0, 0x10000);
    sb_frame(b, 1, 0, libc + 0x10);
    sb_frame(b, 2, 1, libc + 0x20);
    sb_frame(b, 3, 2, APP_BASE + 0x100);
    sb_frame(b, 4, 3, APP_BASE + 0x200);
    uint64_t id = 5;
    for (int i = 0; i < 4; i++, id++)
        sb_frame(b, id, id - 1, cpu + 0x100 + (uint64_t)i);
    for (int i = 0; i < 5; i++, id++)
        sb_frame(b, id, id - 1, tcuda + 0x100 + (uint64_t)i);
    for (int i = 0; i < 10; i++, id++)
        sb_frame(b, id, id - 1, c10 + 0x100 + (uint64_t)i);
    uint64_t leaf = id - 1; /* 23 frames: #0-#18 libraries, #19 the site */
    sb_alloc(b, 1, leaf, 0x7000, 1 << 20);
    feed_bytes(&u, s, b);
    ui_rows(&u);
    assert_int_equal(u.nrows, 1);
    assert_non_null(strstr(u.rows[0].text, "app+0x200"));

    const char *fold = "... 19 frames in libc10_cuda.so, libtorch_cuda.so, libtorch_cpu.so (looked through)";
    struct grid g;
    assert_int_equal(grid_init(&g, 6, 120), 0);
    char row[512];
    stack_view.render(&u, &g, (struct rect){0, 0, 6, 120}); /* a title and 5 rows: all 4 lines */
    assert_non_null(strstr(grid_row_text(&g, 1, row, sizeof row), fold));
    assert_string_equal(grid_row_text(&g, 2, row, sizeof row), "> #19 app+0x200");
    assert_int_equal(g.c[2 * g.w].attr, AT_BOLD);
    assert_string_equal(grid_row_text(&g, 3, row, sizeof row), "  #20 app+0x100");
    assert_non_null(strstr(grid_row_text(&g, 4, row, sizeof row), "... 2 frames in libc.so.6 (looked through)"));
    assert_false(grid_contains(&g, "more frames"));
    grid_clear(&g);
    stack_view.render(&u, &g, (struct rect){0, 0, 4, 120}); /* 3 rows: the last one counts the rest */
    assert_string_equal(grid_row_text(&g, 2, row, sizeof row), "> #19 app+0x200");
    assert_non_null(strstr(grid_row_text(&g, 3, row, sizeof row), "... 3 more frames"));
    /* paused in a pane of 2 frame rows: the site still shows, the count gives way */
    u.state = JOB_PAUSED;
    u.held = (struct held){.proc = 0, .seq = 1, .tid = 77, .size = 1 << 20, .leaf = leaf,
                           .api = CULEAK_API_CUDA_MALLOC, .kind = CULEAK_KIND_DEVICE, .bp_id = 1};
    grid_clear(&g);
    stack_view.render(&u, &g, (struct rect){0, 0, 4, 120});
    assert_true(grid_contains(&g, "PAUSED in cudaMalloc"));
    assert_non_null(strstr(grid_row_text(&g, 2, row, sizeof row), fold));
    assert_string_equal(grid_row_text(&g, 3, row, sizeof row), "> #19 app+0x200");
    grid_free(&g);

    struct console c;
    memset(&c, 0, sizeof c);
    c.u = u;
    console_exec(&c, "show app+0x200");
    assert_true(out_has(&c.u, fold));
    assert_true(out_has(&c.u, "> #19 app+0x200"));
    assert_false(out_has(&c.u, "#0  libc10_cuda.so+0x109"));
    assert_non_null(strstr(c.u.msg, "21 looked-through frames folded")); /* 19 + 2 */
    outbuf_free(&c.u.out);
    outbuf_init(&c.u.out, 1000);
    console_exec(&c, "show app+0x200 full");
    assert_true(out_has(&c.u, "  #0  libc10_cuda.so+0x109"));
    assert_true(out_has(&c.u, "  #18 libtorch_cpu.so+0x100"));
    assert_true(out_has(&c.u, "> #19 app+0x200"));
    assert_true(out_has(&c.u, "  #22 libc.so.6+0x10"));
    assert_false(out_has(&c.u, "looked through"));
    console_exec(&c, "show -a app+0x200 full");
    assert_int_equal(c.u.msg_error, 1);
    model_stream_close(s);
    sb_free(b);
    ui_free(&c.u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),         cmocka_unit_test(test_commands),
        cmocka_unit_test(test_breakpoint_conditions), cmocka_unit_test(test_views_from_model),
        cmocka_unit_test(test_breakpoint_hits),
        cmocka_unit_test(test_view_support),  cmocka_unit_test(test_breakpoints_on_model),
        cmocka_unit_test(test_screen_render), cmocka_unit_test(test_every_terminal_size), cmocka_unit_test(test_long_exit_report), cmocka_unit_test(test_outbuf), cmocka_unit_test(test_outbuf_terminal), cmocka_unit_test(test_help_view), cmocka_unit_test(test_site_fit), cmocka_unit_test(test_sort_and_diff_order), cmocka_unit_test(test_rest_of_line), cmocka_unit_test(test_diff_columns), cmocka_unit_test(test_group_stack_callers), cmocka_unit_test(test_output_scroll_stays),
        cmocka_unit_test(test_diff_new_allocations), cmocka_unit_test(test_stack_folds_library_frames),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
