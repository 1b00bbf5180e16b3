/* The status line (messages, the loud PAUSED banner, key hints) and the prompt line. */
#include "fmt.h"
#include "ui.h"

#include <stdio.h>
#include <string.h>

static void render_status(struct ui *u, struct grid *g, struct rect r)
{
    char fit[sizeof u->msg + 32];
    if (u->state == JOB_PAUSED) {
        char line[sizeof u->msg + 20];
        snprintf(line, sizeof line, " *** PAUSED *** %s", u->msg[0] ? u->msg : "continue | step | kill");
        grid_fill(g, r, ' ', AT_PAUSED);
        grid_put(g, r.y, r.x, r.w, fmt_fit_words(fit, sizeof fit, line, r.w), AT_PAUSED);
        return;
    }
    if (u->keyboard_job) {
        grid_fill(g, r, ' ', AT_SELECT);
        grid_put(g, r.y, r.x, r.w, " KEYBOARD: THE JOB  what you type goes to its standard input;"
                 " Ctrl-] gives the keyboard back to culeak", AT_SELECT);
        return;
    }
    if (u->completions[0]) {
        grid_put(g, r.y, r.x, r.w, u->completions, AT_BOLD);
        return;
    }
    if (u->msg[0]) {
        grid_put(g, r.y, r.x, r.w, fmt_fit_words(fit, sizeof fit, u->msg, r.w), u->msg_error ? AT_BAD : AT_BOLD);
        return;
    }
    grid_put(g, r.y, r.x, r.w,
             " Up/Down PgUp/PgDn Home/End: table (Up/Down after text: history)  Shift-Tab: output pane  Tab: complete"
             "  ? or F1: help", AT_DIM);
}

static void render_prompt(struct ui *u, struct grid *g, struct rect r)
{
    if (u->keyboard_job) { /* the cursor stays where the job's terminal has it */
        int x = r.x + grid_put(g, r.y, r.x, r.w, u->prompt, AT_DIM);
        grid_put(g, r.y, x, r.x + r.w - x, "(the job has the keyboard: Ctrl-] returns)", AT_DIM);
        return;
    }
    int x = r.x + grid_put(g, r.y, r.x, r.w, u->prompt, AT_BOLD);
    int room = r.x + r.w - x - 1;
    if (room < 1)
        room = 1;
    /* columns of the line up to the cursor (UTF-8 aware) */
    const char *line = u->line ? u->line : "";
    size_t len = strlen(line);
    int point_col = 0, col = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        if ((int)i == u->point)
            point_col = col;
        i += (size_t)utf8_decode(line + i, len - i, &cp);
        col++;
    }
    if ((size_t)u->point >= len)
        point_col = col;
    int skip = point_col >= room ? point_col - room + 1 : 0;
    size_t i = 0;
    for (int c = 0; c < skip && i < len; c++) {
        uint32_t cp;
        i += (size_t)utf8_decode(line + i, len - i, &cp);
    }
    grid_put(g, r.y, x, room, line + i, AT_NORMAL);
    g->cur_y = r.y;
    g->cur_x = x + point_col - skip;
}

static int no_key(struct ui *u, int k, struct rect r)
{
    (void)u;
    (void)k;
    (void)r;
    return 0;
}

const struct view status_view = {"status", render_status, no_key};
const struct view prompt_view = {"prompt", render_prompt, no_key};
