/* The console's gdb and htop habits without a terminal: ignore counts, breakpoints saved as
 * commands and read back, `commands N ... end`, `info` alone, confirmations answered as gdb
 * takes them, the init files' trust rules
 * and -nx, the table's column titles under the mouse, clicks, the wheel, the key bar and
 * the single sort keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../src/console/breakpoints.h"
#include "../../src/console/cmdline.h"
#include "../../src/console/console.h"
#include "../../src/console/fmt.h"
#include "../../src/console/init_file.h"
#include "../../src/console/ui.h"
#include "stream_builder.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_ignore_count(void **state)
{
    (void)state;
    struct bp_spec s;
    char err[256];
    assert_int_equal(bp_parse_cond("live > 1GiB", &s, err, sizeof err), 0);
    assert_int_equal(s.cond, BP_LIVE_ABOVE);
    assert_true(s.value == 1ull << 30);
    assert_int_equal(bp_parse_cond("if count > 3", &s, err, sizeof err), 0);
    assert_int_equal(s.cond, BP_COUNT_ABOVE);
    assert_int_equal(bp_parse_cond("", &s, err, sizeof err), 0);
    assert_int_equal(s.cond, BP_ANY);
    assert_int_equal(bp_parse_cond("bytes > 3", &s, err, sizeof err), -1);
    struct bp_list l = {0};
    struct breakpoint *b = bp_add(&l, &s);
    b->ignore = 2;
    assert_false(bp_hit(b, 10, 1)); /* ignored, but counted as gdb counts it */
    assert_false(bp_hit(b, 20, 2));
    assert_int_equal(b->ignore, 0);
    assert_true(bp_hit(b, 30, 3));
    assert_int_equal(b->hits, 3);
    bp_free(&l);
}

static struct console *console_new(void)
{
    struct console *c = calloc(1, sizeof *c);
    assert_non_null(c);
    assert_int_equal(ui_init(&c->u), 0);
    return c;
}

static void console_del(struct console *c)
{
    free(c->cmds_text);
    free(c->cmds_due);
    ui_free(&c->u);
    free(c);
}

static int output_has(struct console *c, const char *text)
{
    for (size_t i = 0; i < outbuf_lines(&c->u.out); i++)
        if (strstr(outbuf_line(&c->u.out, i), text))
            return 1;
    return 0;
}

static void exec_all(struct console *c, const char *const *lines)
{
    for (; *lines; lines++)
        console_exec(c, *lines);
}

/* Typed commands set what save breakpoints writes; -x of that file sets the same again. */
static void test_breakpoints_saved_and_read_back(void **state)
{
    (void)state;
    char path[] = "/tmp/culeak-bps-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    struct console *c = console_new();
    static const char *const typed[] = {
        "tbreak leaky_fn", "break \"a file.cu:12\"", "condition $bpnum live > 1GiB", "ignore 2 3",
        "commands", "  snapshot", "# a comment in the list", "diff s1", "continue", "end",
        "break main.cu:7 grows 4096", "disable 3", NULL};
    exec_all(c, typed);
    assert_int_equal(c->u.bps.n, 3);
    assert_true(c->u.bps.v[0].temporary);
    assert_int_equal(c->u.bps.v[1].spec.cond, BP_LIVE_ABOVE);
    assert_int_equal(c->u.bps.v[1].ignore, 3);
    assert_string_equal(c->u.bps.v[1].commands, "snapshot\ndiff s1\ncontinue");
    assert_string_equal(c->u.prompt, "(culeak) "); /* the ">" of commands is gone after end */
    char cmd[300];
    snprintf(cmd, sizeof cmd, "save breakpoints %s", path);
    console_exec(c, cmd);
    assert_false(c->u.msg_error);
    console_del(c);

    FILE *f = fopen(path, "r");
    char text[2048];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    assert_string_equal(text, "# culeak breakpoints: culeak -x FILE sets them again\n"
                              "tbreak leaky_fn\n"
                              "break \"a file.cu:12\" live > 1073741824\n"
                              "ignore $bpnum 3\n"
                              "commands $bpnum\n"
                              "  snapshot\n"
                              "  diff s1\n"
                              "  continue\n"
                              "end\n"
                              "break main.cu:7 grows 4096\n"
                              "disable $bpnum\n");

    c = console_new();
    struct script s = {0};
    char err[256];
    assert_int_equal(script_add_file(&s, path, err, sizeof err), 0);
    c->opt.script = &s;
    c->opt.no_init = 1;
    console_run_startup(c);
    assert_int_equal(c->u.bps.n, 3);
    assert_true(c->u.bps.v[0].temporary);
    assert_string_equal(c->u.bps.v[1].spec.site, "a file.cu:12");
    assert_true(c->u.bps.v[1].spec.value == 1ull << 30);
    assert_int_equal(c->u.bps.v[1].ignore, 3);
    assert_string_equal(c->u.bps.v[1].commands, "snapshot\ndiff s1\ncontinue");
    assert_int_equal(c->u.bps.v[2].spec.cond, BP_GROWS);
    assert_false(c->u.bps.v[2].enabled);
    script_free(&s);
    console_del(c);
    unlink(path);
}

static void test_info_alone_and_errors(void **state)
{
    (void)state;
    struct console *c = console_new();
    console_exec(c, "info");
    assert_false(c->u.msg_error);
    assert_true(output_has(c, "info breakpoints --"));
    assert_true(output_has(c, "info marks       --"));
    console_exec(c, "condition 9 live > 1MiB");
    assert_true(c->u.msg_error); /* no breakpoint 9 */
    console_exec(c, "commands");
    assert_true(c->u.msg_error); /* none set yet */
    console_exec(c, "break x.c:1");
    console_exec(c, "ignore 1 many");
    assert_true(c->u.msg_error);
    console_exec(c, "commands 1");
    console_exec(c, "commands 1"); /* not inside commands */
    assert_true(c->u.msg_error);
    console_exec(c, "end");
    assert_null(c->u.bps.v[0].commands);
    /* a breakpoint's commands that come due while `commands` takes lines, or while a
     * question waits, wait too: either would take them for its own */
    console_exec(c, "commands 1");
    c->cmds_due = strdup("snapshot from_bp");
    c->cmds_due_bp = 1;
    console_commands_run(c);
    assert_non_null(c->cmds_due);
    console_exec(c, "snapshot typed");
    console_exec(c, "end");
    assert_string_equal(c->u.bps.v[0].commands, "snapshot typed");
    c->confirm_yes = console_kill;
    console_commands_run(c);
    assert_non_null(c->cmds_due);
    c->confirm_yes = NULL;
    console_commands_run(c);
    assert_null(c->cmds_due);
    assert_true(model_snapshot_find(c->u.m, "from_bp") >= 0);
    assert_true(model_snapshot_find(c->u.m, "typed") < 0);
    console_exec(c, "save breakpoints");
    assert_true(c->u.msg_error);
    console_exec(c, "set mouse off");
    assert_true(c->u.mouse_off);
    console_exec(c, "set mouse sometimes");
    assert_true(c->u.msg_error);
    console_del(c);
}

/* A question's answer as gdb reads it: y or Y, n or N, blanks before it allowed. */
static void test_confirmations(void **state)
{
    (void)state;
    struct console *c = console_new();
    console_exec(c, "break a.c:1");
    console_exec(c, "break b.c:2");
    assert_int_equal(c->u.bps.n, 2);
    console_exec(c, "delete");
    assert_non_null(c->confirm_yes);
    console_exec(c, "  Y");
    assert_null(c->confirm_yes);
    assert_int_equal(c->u.bps.n, 0);
    console_exec(c, "break a.c:1");
    console_exec(c, "delete");
    console_exec(c, "maybe");
    assert_true(c->u.msg_error); /* Please answer y or n. */
    assert_non_null(c->confirm_yes);
    console_exec(c, "\tN");
    assert_null(c->confirm_yes);
    assert_int_equal(c->u.bps.n, 1);
    console_exec(c, "delete");
    console_exec(c, "y");
    assert_int_equal(c->u.bps.n, 0);
    console_del(c);
}

static void test_safe_path(void **state)
{
    (void)state;
    setenv("HOME", "/home/ada", 1);
    assert_true(init_safe_path_allows("/work/proj", "/work/proj/.culeakinit"));
    assert_true(init_safe_path_allows("/srv:/work/proj/", "/work/proj/sub/.culeakinit"));
    assert_false(init_safe_path_allows("/work/pro", "/work/proj/.culeakinit")); /* a prefix is no parent */
    assert_false(init_safe_path_allows("", "/work/proj/.culeakinit"));
    assert_false(init_safe_path_allows("work/proj", "/work/proj/.culeakinit")); /* relative: nothing */
    assert_true(init_safe_path_allows("/", "/anything/.culeakinit"));
    assert_true(init_safe_path_allows("~/src", "/home/ada/src/x/.culeakinit"));
    char p[PATH_MAX];
    setenv("XDG_CONFIG_HOME", "/cfg", 1);
    assert_int_equal(init_home_file(p, sizeof p), 0);
    assert_string_equal(p, "/cfg/culeak/init");
    setenv("XDG_CONFIG_HOME", "relative", 1); /* ignored, as XDG says */
    assert_int_equal(init_home_file(p, sizeof p), 0);
    assert_string_equal(p, "/home/ada/.config/culeak/init");
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* The home init runs; ./.culeakinit only from a directory it trusted, else a warning that
 * says how to trust it; -nx reads neither. */
static void test_init_files(void **state)
{
    (void)state;
    char dir[] = "/tmp/culeak-init-XXXXXX", cfg[PATH_MAX], proj[PATH_MAX], home[PATH_MAX], was[PATH_MAX];
    assert_non_null(mkdtemp(dir));
    assert_non_null(getcwd(was, sizeof was));
    snprintf(cfg, sizeof cfg, "%s/cfg", dir);
    snprintf(proj, sizeof proj, "%s/proj", dir);
    snprintf(home, sizeof home, "%s/cfg/culeak/init", dir);
    mkdir(cfg, 0700);
    snprintf(cfg + strlen(cfg), sizeof cfg - strlen(cfg), "/culeak");
    mkdir(cfg, 0700);
    mkdir(proj, 0700);
    cfg[strlen(cfg) - 7] = 0;
    setenv("XDG_CONFIG_HOME", cfg, 1);
    char local[PATH_MAX + 20];
    snprintf(local, sizeof local, "%s/.culeakinit", proj);
    write_file(local, "break from_local\n");
    assert_int_equal(chdir(proj), 0);
    for (int round = 0; round < 3; round++) {
        char text[PATH_MAX + 100];
        snprintf(text, sizeof text, "break from_home\nset auto-load safe-path %s\n", round == 1 ? "/nowhere" : dir);
        write_file(home, text);
        struct console *c = console_new();
        c->opt.no_init = round == 2;
        console_run_startup(c);
        if (round == 0) { /* trusted: both */
            assert_int_equal(c->u.bps.n, 2);
            assert_string_equal(c->u.bps.v[1].spec.site, "from_local");
        } else if (round == 1) { /* not trusted: the home init only, and how to trust it */
            assert_int_equal(c->u.bps.n, 1);
            assert_string_equal(c->u.bps.v[0].spec.site, "from_home");
            assert_true(output_has(c, "/.culeakinit was not read"));
            assert_true(output_has(c, "add the line 'set auto-load safe-path "));
        } else { /* -nx */
            assert_int_equal(c->u.bps.n, 0);
        }
        console_del(c);
    }
    assert_int_equal(chdir(was), 0);
    unlink(local);
    unlink(home);
    rmdir(proj);
    snprintf(local, sizeof local, "%s/culeak", cfg);
    rmdir(local);
    rmdir(cfg);
    rmdir(dir);
}

#define APP "/nonexistent/app"
#define APP_BASE 0x555500000000ull

/* Two sites: app+0x200 holds 3 MiB, app+0x300 4 KiB. */
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
    assert_int_equal(model_stream_feed(s, b->buf, b->n), MODEL_FEED_OK);
    *out = b;
    return s;
}

/* Every title word of the table, at every width and in a diff, is the column a click there sorts by. */
static void test_column_titles_under_the_mouse(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    struct sb *b;
    struct model_stream *s = feed(&u, &b);
    static const struct { const char *word; int field; } words[] = {
        {"id", SORT_ID}, {"live", SORT_LIVE}, {"count", SORT_COUNT}, {"change", SORT_CHANGE}, {"peak", SORT_PEAK},
        {"allocs", SORT_ALLOCS}, {"kind", SORT_KIND}, {"module", SORT_MODULE}, {"site", SORT_SITE},
        {"count+-", SORT_COUNT}, {"now", SORT_LIVE}, {"s1", -1}};
    for (int diff = 0; diff < 2; diff++) {
        if (diff) {
            model_snapshot_take(u.m, "s1");
            u.diff_active = 1;
            snprintf(u.diff_a, sizeof u.diff_a, "s1");
            u.diff_b[0] = 0;
        }
        for (int w = 60; w <= 140; w += 10) {
            struct grid g;
            struct layout l;
            layout_compute(30, w, &l);
            assert_int_equal(grid_init(&g, 30, w), 0);
            ui_render(&u, &g, &l);
            struct rect tab;
            ui_table_rect(&u, &l, &tab);
            int checked = 0;
            for (int x = 0; x < w; x++) {
                const struct cell *cl = &g.c[tab.y * w + x];
                if (cl->ch == ' ' || (x && g.c[tab.y * w + x - 1].ch != ' '))
                    continue; /* the first letter of each word */
                char word[32];
                int n = 0;
                while (x + n < w && g.c[tab.y * w + x + n].ch != ' ' && n < 31) {
                    word[n] = (char)g.c[tab.y * w + x + n].ch;
                    n++;
                }
                word[n] = 0;
                if (strncmp(word, "sort:", 5) == 0 || word[0] == '(')
                    break; /* the site's title, to the end */
                for (size_t k = 0; k < sizeof words / sizeof *words; k++) {
                    if (strcmp(words[k].word, word) != 0)
                        continue;
                    for (int i = 0; i < n; i++)
                        if (table_column_at(&u, tab.w, x + i) != words[k].field)
                            fail_msg("width %d%s: '%s' at column %d sorts by %d", w, diff ? " (diff)" : "", word,
                                     x + i, table_column_at(&u, tab.w, x + i));
                    checked++;
                }
            }
            assert_true(checked >= (diff ? 4 : 5));
            grid_free(&g);
        }
    }
    model_stream_close(s);
    sb_free(b);
    ui_free(&u);
}

static void test_clicks_wheel_and_keys(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    struct sb *b;
    struct model_stream *s = feed(&u, &b);
    for (int i = 0; i < 40; i++)
        outbuf_add_line(&u.out, "a line of the job");
    struct grid g;
    struct layout l;
    layout_compute(30, 120, &l);
    assert_int_equal(grid_init(&g, 30, 120), 0);
    ui_render(&u, &g, &l);
    assert_true(grid_contains(&g, "F1Help"));
    assert_true(grid_contains(&g, "F10Quit"));
    char cmd[64];
    int fkey = 0;
    struct rect tab;
    ui_table_rect(&u, &l, &tab);
    /* the title: live is the order now, so live again turns it; count sorts by count */
    assert_int_equal(ui_mouse(&u, &l, tab.y, 10, UM_CLICK, cmd, sizeof cmd, &fkey), UM_COMMAND);
    assert_string_equal(cmd, "sort live reverse");
    assert_int_equal(ui_mouse(&u, &l, tab.y, 20, UM_CLICK, cmd, sizeof cmd, &fkey), UM_COMMAND);
    assert_string_equal(cmd, "sort count");
    /* a row selects it; the selected row again lists its stack */
    assert_int_equal(u.sel, 0);
    assert_int_equal(ui_mouse(&u, &l, tab.y + 2, 30, UM_CLICK, cmd, sizeof cmd, &fkey), UM_DRAWN);
    assert_int_equal(u.sel, 1);
    assert_int_equal(ui_mouse(&u, &l, tab.y + 2, 30, UM_CLICK, cmd, sizeof cmd, &fkey), UM_COMMAND);
    char want[32];
    snprintf(want, sizeof want, "show %u", ui_site_id(u.rows[1].id));
    assert_string_equal(cmd, want);
    assert_int_equal(ui_mouse(&u, &l, tab.y + 5, 30, UM_CLICK, cmd, sizeof cmd, &fkey), UM_NONE); /* no row */
    /* the wheel scrolls the pane under it */
    assert_int_equal(ui_mouse(&u, &l, l.output.y + 1, 5, UM_WHEEL_UP, cmd, sizeof cmd, &fkey), UM_DRAWN);
    assert_int_equal(u.out_scroll, 3);
    assert_int_equal(ui_mouse(&u, &l, l.output.y + 1, 5, UM_WHEEL_DOWN, cmd, sizeof cmd, &fkey), UM_DRAWN);
    assert_int_equal(u.out_scroll, 0);
    assert_int_equal(ui_mouse(&u, &l, tab.y + 1, 5, UM_WHEEL_DOWN, cmd, sizeof cmd, &fkey), UM_DRAWN);
    assert_int_equal(u.sel, 1);
    /* the key bar: each key where its label is drawn */
    char row[512];
    grid_row_text(&g, l.keys.y, row, sizeof row);
    static const int keys[] = {1, 3, 5, 6, 9, 10};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        char label[8];
        snprintf(label, sizeof label, "F%d", keys[k]);
        const char *at = strstr(row, label);
        assert_non_null(at);
        assert_int_equal(ui_mouse(&u, &l, l.keys.y, (int)(at - row) + 1, UM_CLICK, cmd, sizeof cmd, &fkey), UM_FKEY);
        assert_int_equal(fkey, keys[k]);
    }
    /* htop's sort keys */
    assert_int_equal(ui_sort_key(&u, tab.w, '>', cmd, sizeof cmd), 1);
    assert_string_equal(cmd, "sort count");
    assert_int_equal(ui_sort_key(&u, tab.w, '<', cmd, sizeof cmd), 1);
    assert_string_equal(cmd, "sort id");
    assert_int_equal(ui_sort_key(&u, tab.w, 'I', cmd, sizeof cmd), 1);
    assert_string_equal(cmd, "sort live reverse");
    assert_int_equal(ui_sort_key(&u, tab.w, 'x', cmd, sizeof cmd), 0);
    grid_free(&g);
    model_stream_close(s);
    sb_free(b);
    ui_free(&u);
}

/* Below LAYOUT_KEYS_MIN_ROWS the key bar gives its line to the panes. */
/* htop's < and > move the sort to the column on the left or right of the sorted one as
 * the screen shows them: module comes before site on a wide table, and a column not drawn
 * at this width is passed over; one past the last comes back to the first. */
static void test_sort_keys_follow_the_columns(void **state)
{
    (void)state;
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    char cmd[64];
    u.sort = SORT_KIND;
    assert_int_equal(ui_sort_key(&u, 120, '>', cmd, sizeof cmd), 1);
    assert_string_equal(cmd, "sort module");
    u.sort = SORT_MODULE;
    assert_int_equal(ui_sort_key(&u, 120, '>', cmd, sizeof cmd), 1);
    assert_string_equal(cmd, "sort site");
    assert_int_equal(ui_sort_key(&u, 120, '<', cmd, sizeof cmd), 1);
    assert_string_equal(cmd, "sort kind");
    u.sort = SORT_ALLOCS; /* at 90 columns: no kind, no module */
    assert_int_equal(ui_sort_key(&u, 90, '>', cmd, sizeof cmd), 1);
    assert_string_equal(cmd, "sort site");
    u.sort = SORT_SITE;
    assert_int_equal(ui_sort_key(&u, 90, '>', cmd, sizeof cmd), 1);
    assert_string_equal(cmd, "sort id");
    assert_int_equal(ui_sort_key(&u, 90, '<', cmd, sizeof cmd), 1);
    assert_string_equal(cmd, "sort allocs");
    ui_free(&u);
}

static void test_key_bar_on_small_screens(void **state)
{
    (void)state;
    struct layout l;
    layout_compute(LAYOUT_KEYS_MIN_ROWS - 1, 80, &l);
    assert_int_equal(l.keys.h, 0);
    assert_int_equal(l.prompt.y, LAYOUT_KEYS_MIN_ROWS - 2);
    layout_compute(LAYOUT_KEYS_MIN_ROWS, 80, &l);
    assert_int_equal(l.keys.h, 1);
    assert_true(l.table.h >= 3 && l.stack.h >= 2 && l.output.h >= 2);
    assert_int_equal(l.output.y + l.output.h, l.status.y);
}

/* Status and suspects lines cut where they do not fit: at a word, with "...". */
static void test_lines_cut_at_words(void **state)
{
    (void)state;
    char b[128];
    assert_string_equal(fmt_fit_words(b, sizeof b, "breakpoint 2 pauses when live", 40), "breakpoint 2 pauses when live");
    assert_string_equal(fmt_fit_words(b, sizeof b, "breakpoint 2 pauses when live > 1.00 GiB", 25), "breakpoint 2 pauses...");
    assert_string_equal(fmt_fit_words(b, sizeof b, "suspects: 1 site grows +4.00 KiB/iteration; it fills", 48),
                        "suspects: 1 site grows +4.00 KiB/iteration...");
    assert_string_equal(fmt_fit_words(b, sizeof b, "one, two, three", 13), "one, two...");
    assert_string_equal(fmt_fit_words(b, sizeof b, "abcdefghijklmnop", 10), "abcdefg..."); /* one word */
    assert_string_equal(fmt_fit_words(b, sizeof b, "\u00e9t\u00e9 \u00e9t\u00e9 \u00e9t\u00e9", 10), "\u00e9t\u00e9 \u00e9t\u00e9...");
    assert_string_equal(fmt_fit_words(b, sizeof b, "abcdef", 2), "ab");
    assert_string_equal(fmt_fit_words(b, sizeof b, "abcdef", 0), "");
    /* the header's command: the arguments' directories go before anything is cut */
    assert_string_equal(fmt_fit_command(b, sizeof b, "python3 /home/u/proj/train.py --epochs 3", 30),
                        "python3 train.py --epochs 3");
    assert_string_equal(fmt_fit_command(b, sizeof b, "/usr/bin/python3 /home/u/proj/train.py --epochs 3", 20),
                        "python3 train.py ...");
    struct ui u;
    assert_int_equal(ui_init(&u), 0);
    ui_message(&u, 0, "breakpoint 12 runs these commands when it pauses the job");
    struct grid g;
    struct layout l;
    layout_compute(24, 40, &l);
    assert_int_equal(grid_init(&g, 24, 40), 0);
    ui_render(&u, &g, &l);
    char row[256];
    assert_string_equal(grid_row_text(&g, l.status.y, row, sizeof row), "breakpoint 12 runs these commands...");
    u.state = JOB_PAUSED;
    ui_render(&u, &g, &l);
    assert_string_equal(grid_row_text(&g, l.status.y, row, sizeof row), " *** PAUSED *** breakpoint 12 runs...");
    grid_free(&g);
    ui_free(&u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ignore_count), cmocka_unit_test(test_breakpoints_saved_and_read_back),
        cmocka_unit_test(test_info_alone_and_errors), cmocka_unit_test(test_confirmations),
        cmocka_unit_test(test_safe_path),
        cmocka_unit_test(test_init_files), cmocka_unit_test(test_column_titles_under_the_mouse),
        cmocka_unit_test(test_clicks_wheel_and_keys), cmocka_unit_test(test_key_bar_on_small_screens),
        cmocka_unit_test(test_sort_keys_follow_the_columns),
        cmocka_unit_test(test_lines_cut_at_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
