/* The job's output pane: the terminal emulator's rows (scrollback, then its screen) with
 * the job's colours; the console's own lines are among them. */
#include "ui.h"

#include <stdio.h>

static void render(struct ui *u, struct grid *g, struct rect r)
{
    grid_fill(g, (struct rect){r.y, r.x, 1, r.w}, ' ', AT_TITLE);
    int rows = r.h - 1;
    if (rows < 1)
        return;
    outbuf_resize(&u->out, rows, r.w); /* the emulated terminal is the pane, as the job's pty is */
    size_t total = outbuf_lines(&u->out);
    uint64_t seen = u->out.dropped + total;
    if (u->out_scroll && seen > u->out_seen)
        u->out_scroll += (size_t)(seen - u->out_seen); /* scrolled back, the view stays put as output comes */
    u->out_seen = seen;
    size_t max_scroll = total > (size_t)rows ? total - (size_t)rows : 0;
    if (u->out_scroll > max_scroll)
        u->out_scroll = max_scroll;
    if (u->out_scroll)
        grid_putf(g, r.y, r.x, r.w, AT_TITLE, " output%s (scrolled back %zu of %zu lines; End: newest) ",
                  u->focus_output ? " [focus]" : "", u->out_scroll, total);
    else
        grid_putf(g, r.y, r.x, r.w, AT_TITLE, " output%s  (%s) ", u->focus_output ? " [focus]" : "",
                  u->focus_output ? "arrows/PgUp/PgDn scroll; Shift-Tab: back to the table"
                                  : "Shift-Tab: scroll the output; search TEXT");
    size_t end = total - u->out_scroll;
    size_t start = end > (size_t)rows ? end - (size_t)rows : 0;
    struct ocell cells[OUTBUF_MAX_COLS];
    for (size_t i = start; i < end; i++) {
        int y = r.y + 1 + (int)(i - start);
        int hit = u->out_hit && u->out_hit == u->out.dropped + i + 1;
        int n = outbuf_cells(&u->out, i, cells, r.w < OUTBUF_MAX_COLS ? r.w : OUTBUF_MAX_COLS);
        if (hit)
            grid_fill(g, (struct rect){y, r.x, 1, r.w}, ' ', AT_SELECT);
        for (int x = 0; x < n && r.x + x < g->w; x++) {
            const struct ocell *c = &cells[x];
            uint32_t ch = c->ch;
            if (ch && (ch < 0x20 || ch == 0x7F || (ch >= 0x80 && ch < 0xA0)))
                ch = '?';
            struct cell *gc = &g->c[y * g->w + r.x + x];
            if (hit)
                *gc = (struct cell){ch, AT_SELECT, 0, 0, 0};
            else
                *gc = (struct cell){ch, AT_NORMAL, c->fg, c->bg, c->style};
        }
    }
    size_t crow;
    int ccol;
    outbuf_cursor(&u->out, &crow, &ccol);
    if (u->keyboard_job && crow >= start && crow < end) { /* the terminal cursor is the job's */
        g->cur_y = r.y + 1 + (int)(crow - start);
        g->cur_x = r.x + (ccol < r.w ? ccol : r.w - 1);
    }
}

static int key(struct ui *u, int k, struct rect r)
{
    size_t page = r.h > 2 ? (size_t)r.h - 2 : 1;
    size_t total = outbuf_lines(&u->out);
    switch (k) {
    case UK_UP: u->out_scroll++; break;
    case UK_DOWN: if (u->out_scroll) u->out_scroll--; break;
    case UK_PGUP: u->out_scroll += page; break;
    case UK_PGDN: u->out_scroll = u->out_scroll > page ? u->out_scroll - page : 0; break;
    case UK_HOME: u->out_scroll = total; break;
    case UK_END: u->out_scroll = 0; u->out_hit = 0; break;
    default: return 0;
    }
    return 1;
}

const struct view output_view = {"output", render, key};
