/* The call-site table: one row per site (or per diff entry), sortable and filterable. */
#include "fmt.h"
#include "site_text.h"
#include "ui.h"

#include <stdio.h>
#include <string.h>

/* A snapshot's name as a column title: 10 columns, the end kept (marks differ there). */
static const char *column_name(const char *name, char *buf)
{
    size_t n = strlen(name);
    if (n <= 10)
        return name;
    snprintf(buf, 16, "..%s", name + n - 8);
    return buf;
}

/* Grouped by stack, rows with the same call site differ below it: the text names the
 * site's caller (the next frame that is not looked through). */
static const char *stack_row_text(struct ui *u, const struct row *row, const char *text, char *buf, size_t len)
{
    struct model_frame f[64];
    size_t n = model_stack_frames(u->m, row->stack_proc, row->stack, f, 64);
    if (n > 64)
        n = 64;
    size_t site = 0;
    while (site < n && f[site].skipped)
        site++;
    if (site == n)
        site = 0;
    size_t k = site + 1;
    while (k < n && f[k].skipped)
        k++;
    if (k >= n)
        return text;
    char caller[512];
    if (f[k].function)
        snprintf(caller, sizeof caller, "%s", f[k].function);
    else
        model_frame_format(&f[k], caller, sizeof caller);
    snprintf(buf, len, "%s < %s", text, caller);
    return buf;
}

static void render(struct ui *u, struct grid *g, struct rect r)
{
    int wide = r.w >= 110, narrow = r.w < 80; /* narrow: the site keeps room, peak and allocs go */
    grid_fill(g, (struct rect){r.y, r.x, 1, r.w}, ' ', AT_TITLE);
    if (u->diff_active) {
        const char *an = u->diff_a, *bn = u->diff_b[0] ? u->diff_b : "now";
        char ac[16], bc[16];
        if (narrow)
            grid_putf(g, r.y, r.x, r.w, AT_TITLE, "%4s %10s %8s  site (diff %s -> %s)", "id", "change", "count+-", an,
                      bn);
        else
            grid_putf(g, r.y, r.x, r.w, AT_TITLE,
                      "%4s %10s %8s %10s %10s %7s  site (diff %s -> %s; diff off: live table)", "id", "change",
                      "count+-", column_name(bn, bc), column_name(an, ac), "allocs", an, bn);
    } else if (wide) {
        grid_putf(g, r.y, r.x, r.w, AT_TITLE, "%4s %10s %7s %10s %10s %7s %-8s %-15s %s", "id", "live",
                  "count", "change", "peak", "allocs", "kind", "module", "site");
    } else if (narrow) {
        grid_putf(g, r.y, r.x, r.w, AT_TITLE, "%4s %10s %7s %10s %s", "id", "live", "count", "change", "site");
    } else {
        grid_putf(g, r.y, r.x, r.w, AT_TITLE, "%4s %10s %7s %10s %10s %7s %s", "id", "live", "count", "change",
                  "peak", "allocs", "site");
    }
    {   /* sort indicator after the title; names still pending while they matter */
        char s[400], pending[48] = "";
        size_t np = model_names_pending(u->m);
        if (np && (u->filter[0] || u->sort == SORT_SITE))
            snprintf(pending, sizeof pending, " (%zu names pending)", np);
        snprintf(s, sizeof s, " sort:%s%s%s%s%s%s ", ui_sort_name(u->sort),
                 !u->sort_reverse ? "" : sort_ascends(u->sort) ? "(desc)" : "(asc)",
                 u->filter[0] ? " filter:" : "", u->filter, u->proc_filter >= 0 ? " 1 proc" : "", pending);
        int sl = (int)strlen(s);
        if (r.w > sl + 60)
            grid_put(g, r.y, r.x + r.w - sl, sl, s, AT_TITLE);
    }
    int rows = r.h - 1;
    if (rows < 1)
        return;
    u->top = ui_table_top(u->top, u->sel, (size_t)rows, u->nrows);
    if (ui_rows_need(u, u->top, u->top + (size_t)rows)) /* a frame ordered fewer rows than fit here */
        u->top = ui_table_top(u->top, u->sel, (size_t)rows, u->nrows);
    if (u->nrows == 0) {
        grid_put(g, r.y + 1, r.x + 2, r.w - 2,
                 u->filter[0] ? "(no site matches the filter)" : u->diff_active ? "(no change between the snapshots)"
                                                                           : "(no allocations yet)",
                 AT_DIM);
        return;
    }
    for (int i = 0; i < rows && u->top + (size_t)i < u->nrows; i++) {
        size_t ri = u->top + (size_t)i;
        ui_name_row(u, &u->rows[ri]); /* rows on screen always show names */
        const struct row *row = &u->rows[ri];
        const char *text = row->text ? row->text : "?", *module = row->module ? row->module : "?";
        char with_caller[1100];
        if (u->group == MODEL_GROUP_STACK)
            text = stack_row_text(u, row, text, with_caller, sizeof with_caller);
        const char *slash = strrchr(module, '/');
        if (slash)
            module = slash + 1;
        int sel = ri == u->sel, suspect = ui_row_is_suspect(u, row);
        uint8_t at = sel ? AT_SELECT : AT_NORMAL;
        int y = r.y + 1 + i;
        if (sel)
            grid_fill(g, (struct rect){y, r.x, 1, r.w}, ' ', AT_SELECT);
        char live[32], change[32], peak[32], cnt[32], allocs[32], kinds[64], a[32], fit[1100];
        fmt_size(live, sizeof live, row->live);
        fmt_delta(change, sizeof change, row->change);
        fmt_count(allocs, sizeof allocs, row->allocs);
        int x = r.x;
        x += grid_putf(g, y, x, 5, at, "%4u%c", ui_site_id(row->id), suspect ? '*' : ' ');
        uint8_t site_at = sel ? AT_SELECT : suspect ? AT_SUSPECT : AT_NORMAL;
        if (u->diff_active) {
            snprintf(cnt, sizeof cnt, "%+lld", (long long)row->count_change);
            x += grid_putf(g, y, x, 11, sel ? AT_SELECT : row->change > 0 ? AT_GROW : AT_SHRINK, "%10s ", change);
            if (narrow)
                x += grid_putf(g, y, x, 10, at, "%8s  ", cnt);
            else
                x += grid_putf(g, y, x, 40, at, "%8s %10s %10s %7s  ", cnt, live, fmt_size(a, sizeof a, row->a_bytes),
                               allocs);
            grid_put(g, y, x, r.x + r.w - x, site_fit(text, u->cwd, r.x + r.w - x, fit, sizeof fit), site_at);
            continue;
        }
        fmt_size(peak, sizeof peak, row->peak);
        fmt_count(cnt, sizeof cnt, row->count);
        if (u->state == JOB_NONE && u->src.kind != MODEL_SOURCE_NOW) {
            /* recordings at an earlier position: the peak and allocs the model has are
             * the whole recording's, not what they were then */
            snprintf(peak, sizeof peak, "-");
            snprintf(allocs, sizeof allocs, "-");
        }
        x += grid_putf(g, y, x, 11, at, "%10s ", live);
        x += grid_putf(g, y, x, 8, at, "%7s ", cnt);
        x += grid_putf(g, y, x, 11, sel ? AT_SELECT : row->change > 0 ? AT_GROW : row->change < 0 ? AT_SHRINK : AT_DIM,
                       "%10s ", change);
        if (!narrow)
            x += grid_putf(g, y, x, 19, at, "%10s %7s ", peak, allocs);
        if (wide) {
            x += grid_putf(g, y, x, 9, at, "%-8.8s ", ui_kinds(row->kinds, kinds, sizeof kinds));
            x += grid_putf(g, y, x, 16, at, "%-15.15s ", module);
        }
        grid_put(g, y, x, r.x + r.w - x, site_fit(text, u->cwd, r.x + r.w - x, fit, sizeof fit), site_at);
    }
}

static int key(struct ui *u, int k, struct rect r)
{
    size_t page = r.h > 2 ? (size_t)r.h - 2 : 1;
    if (!u->nrows)
        return 1;
    if (k != UK_UP && k != UK_DOWN) /* moves past the rows in order */
        ui_rows_need(u, 0, u->nrows);
    else
        ui_rows_need(u, u->sel ? u->sel - 1 : 0, u->sel + 2);
    switch (k) {
    case UK_UP: if (u->sel) u->sel--; break;
    case UK_DOWN: if (u->sel + 1 < u->nrows) u->sel++; break;
    case UK_PGUP: u->sel = u->sel > page ? u->sel - page : 0; break;
    case UK_PGDN: u->sel = u->sel + page < u->nrows ? u->sel + page : u->nrows - 1; break;
    case UK_HOME: u->sel = 0; break;
    case UK_END: u->sel = u->nrows - 1; break;
    default: return 0;
    }
    u->sel_site = u->rows[u->sel].id;
    u->sel_valid = 1;
    return 1;
}

const struct view table_view = {"table", render, key};

/* The columns of the title, as render() writes them: each after a blank (two before the
 * site of a diff), the site to the end of the line. */
int table_column_at(const struct ui *u, int w, int x)
{
    static const int diff_narrow[][2] = {{SORT_ID, 4}, {SORT_CHANGE, 10}, {SORT_COUNT, 8}, {SORT_SITE, 0}};
    static const int diff_full[][2] = {{SORT_ID, 4}, {SORT_CHANGE, 10}, {SORT_COUNT, 8}, {SORT_LIVE, 10},
                                       {-1, 10}, {SORT_ALLOCS, 7}, {SORT_SITE, 0}};
    static const int wide[][2] = {{SORT_ID, 4}, {SORT_LIVE, 10}, {SORT_COUNT, 7}, {SORT_CHANGE, 10},
                                  {SORT_PEAK, 10}, {SORT_ALLOCS, 7}, {SORT_KIND, 8}, {SORT_MODULE, 15},
                                  {SORT_SITE, 0}};
    static const int normal[][2] = {{SORT_ID, 4}, {SORT_LIVE, 10}, {SORT_COUNT, 7}, {SORT_CHANGE, 10},
                                    {SORT_PEAK, 10}, {SORT_ALLOCS, 7}, {SORT_SITE, 0}};
    static const int narrow_cols[][2] = {{SORT_ID, 4}, {SORT_LIVE, 10}, {SORT_COUNT, 7}, {SORT_CHANGE, 10},
                                         {SORT_SITE, 0}};
    const int(*cols)[2] = u->diff_active ? (w < 80 ? diff_narrow : diff_full)
                          : w >= 110     ? wide
                          : w < 80       ? narrow_cols
                                         : normal;
    if (x < 0 || x >= w)
        return -1;
    for (int i = 0, pos = 0;; i++) {
        int span = cols[i][1] + (i ? 1 : 0); /* the column and the blank before it */
        if (!cols[i][1] || x < pos + span)   /* the site: to the end */
            return cols[i][0];
        pos += span;
    }
}
