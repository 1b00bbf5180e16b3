/* The mouse and htop's single sort keys, as plain data (no curses): what a click, the
 * wheel or a key does to the screen, or the command it stands for (ui.h). */
#include "cmdline.h"
#include "ui.h"

#include <stdio.h>

/* The columns of a table w wide, left to right, as the titles under the pointer say:
 * how many. */
static int screen_columns(const struct ui *u, int w, int *cols, int max)
{
    int n = 0;
    for (int x = 0; x < w && n < max; x++) {
        int f = table_column_at(u, w, x);
        if (f >= 0 && (n == 0 || cols[n - 1] != f))
            cols[n++] = f;
    }
    return n;
}

int ui_sort_key(const struct ui *u, int w, int key, char *cmd, size_t len)
{
    int f = (int)u->sort;
    if (key == '>' || key == '<') {
        int cols[16], n = screen_columns(u, w, cols, 16), at = -1;
        for (int i = 0; i < n; i++)
            if (cols[i] == f)
                at = i;
        int all = (int)sort_nfields;
        if (n == 0) /* no table drawn: the list of the sort command */
            snprintf(cmd, len, "sort %s", sort_field_names[(f + (key == '>' ? 1 : all - 1)) % all]);
        else if (at < 0) /* sorted by a column not drawn at this width: from an end */
            snprintf(cmd, len, "sort %s", sort_field_names[cols[key == '>' ? 0 : n - 1]]);
        else
            snprintf(cmd, len, "sort %s", sort_field_names[cols[(at + (key == '>' ? 1 : n - 1)) % n]]);
    } else if (key == 'I')
        snprintf(cmd, len, "sort %s%s", sort_field_names[f], u->sort_reverse ? "" : " reverse");
    else
        return 0;
    return 1;
}

static int inside(struct rect r, int y, int x) { return y >= r.y && y < r.y + r.h && x >= r.x && x < r.x + r.w; }

/* The wheel: three lines of the pane under the pointer. */
static int wheel(struct ui *u, const struct layout *l, int y, int x, int up)
{
    const struct view *v = NULL;
    struct rect r, tab;
    ui_table_rect(u, l, &tab);
    struct rect help = {l->table.y, 0, l->status.y - l->table.y, l->table.w};
    if (u->help_open && inside(help, y, x))
        v = &help_view, r = help;
    else if (inside(tab, y, x))
        v = &table_view, r = tab;
    else if (inside(l->output, y, x))
        v = &output_view, r = l->output;
    if (!v)
        return UM_NONE;
    for (int i = 0; i < 3; i++)
        v->key(u, up ? UK_UP : UK_DOWN, r);
    return UM_DRAWN;
}

int ui_mouse(struct ui *u, const struct layout *l, int y, int x, int button, char *cmd, size_t len, int *fkey)
{
    if (l->too_small)
        return UM_NONE;
    if (button == UM_WHEEL_UP || button == UM_WHEEL_DOWN)
        return wheel(u, l, y, x, button == UM_WHEEL_UP);
    if (button != UM_CLICK)
        return UM_NONE;
    if (l->keys.h && inside(l->keys, y, x)) {
        *fkey = keybar_key_at(x - l->keys.x, l->keys.w);
        return *fkey ? UM_FKEY : UM_NONE;
    }
    struct rect tab;
    ui_table_rect(u, l, &tab);
    if (u->help_open || !inside(tab, y, x))
        return UM_NONE;
    if (y == tab.y) { /* a column title: sort by it; the sorted column again: the other way */
        int f = table_column_at(u, tab.w, x - tab.x);
        if (f < 0)
            return UM_NONE;
        snprintf(cmd, len, "sort %s%s", sort_field_names[f],
                 f == (int)u->sort && !u->sort_reverse ? " reverse" : "");
        return UM_COMMAND;
    }
    size_t i = u->top + (size_t)(y - tab.y - 1);
    if (i >= u->nrows)
        return UM_NONE;
    ui_rows_need(u, i, i + 1);
    if (u->sel_valid && u->sel == i) { /* the selected row: its whole stack in the output pane */
        snprintf(cmd, len, "show %u", ui_site_id(u->rows[i].id));
        return UM_COMMAND;
    }
    u->sel = i;
    u->sel_site = u->rows[i].id;
    u->sel_valid = 1;
    return UM_DRAWN;
}
