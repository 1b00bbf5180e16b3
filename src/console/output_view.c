/* The job's output with scrollback; the console's own messages go here too. */
#include "ui.h"

#include <stdio.h>

static void render(struct ui *u, struct grid *g, struct rect r)
{
    grid_fill(g, (struct rect){r.y, r.x, 1, r.w}, ' ', AT_TITLE);
    size_t total = outbuf_lines(&u->out);
    int rows = r.h - 1;
    if (rows < 1)
        return;
    size_t max_scroll = total > (size_t)rows ? total - (size_t)rows : 0;
    if (u->out_scroll > max_scroll)
        u->out_scroll = max_scroll;
    if (u->out_scroll)
        grid_putf(g, r.y, r.x, r.w, AT_TITLE, " output%s (scrolled back %zu of %zu lines; End: newest) ",
                  u->focus_output ? " [focus]" : "", u->out_scroll, total);
    else
        grid_putf(g, r.y, r.x, r.w, AT_TITLE, " output%s  (%s) ", u->focus_output ? " [focus]" : "",
                  u->focus_output ? "arrows/PgUp/PgDn scroll; Shift-Tab: back to the table"
                                  : "Shift-Tab: scroll the output");
    size_t end = total - u->out_scroll;
    size_t start = end > (size_t)rows ? end - (size_t)rows : 0;
    for (size_t i = start; i < end; i++)
        grid_put(g, r.y + 1 + (int)(i - start), r.x, r.w, outbuf_line(&u->out, i), AT_NORMAL);
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
    case UK_END: u->out_scroll = 0; break;
    default: return 0;
    }
    return 1;
}

const struct view output_view = {"output", render, key};
