/* The selected site's full stack; while paused, the held allocation and its stack. Under
 * it, who holds the site's blocks (HELD BY: the latest walk of the job's Python side), or
 * that the answer to `holders SITE` is awaited. */
#include "common/apis.h"
#include "fmt.h"
#include "site_text.h"
#include "report/stack_fold.h"
#include "ui.h"

#include <stdio.h>
#include <string.h>

#define PANE_FRAMES 256

/* The stack from its innermost frame, looked-through runs folded, so that the call site
 * is on screen even in a pane of two rows; the last row counts what did not fit. */
static void frames(struct ui *u, struct grid *g, int y, int x, int rows, int w, int proc, uint64_t stack)
{
    if (rows <= 0)
        return;
    struct model_frame f[PANE_FRAMES];
    struct stack_line l[PANE_FRAMES];
    size_t n = model_stack_frames(u->m, proc, stack, f, PANE_FRAMES);
    if (n == 0) {
        grid_put(g, y, x, w, "  (no stack recorded)", AT_DIM);
        return;
    }
    size_t got = n < PANE_FRAMES ? n : PANE_FRAMES;
    size_t nl = stack_lines(f, got, 1, l), site = 0;
    while (site < nl && !l[site].site)
        site++;
    size_t first = 0, shown = nl, avail = (size_t)rows;
    int more = 0;
    if (nl > avail || got < n) {
        more = 1;
        shown = avail - 1;
        if (site < nl && site >= shown) { /* the site matters more than the count */
            more = 0;
            shown = avail;
            if (site >= shown)
                first = site + 1 - shown;
        }
    }
    if (shown > nl - first)
        shown = nl - first;
    for (size_t i = 0; i < shown; i++) {
        const struct stack_line *sl = &l[first + i];
        char text[1300], fit[1300];
        stack_line_text(sl, f, text, sizeof text);
        uint8_t at = sl->site ? AT_BOLD : sl->count || f[sl->frame].skipped ? AT_DIM : AT_NORMAL;
        grid_put(g, y + (int)i, x, w, site_fit(text, u->cwd, w, fit, sizeof fit), at);
    }
    size_t next = first + shown < nl ? l[first + shown].frame : got;
    if (more && next < n)
        grid_putf(g, y + (int)shown, x, w, AT_DIM, "  ... %zu more frames (show SITE lists them in the output pane)",
                  n - next);
}

/* The HELD BY lines of row id at the pane's bottom rows, at most half of rows (the stack
 * keeps the rest): how many rows they took. */
static int holders(struct ui *u, struct grid *g, int y, int x, int rows, int w, uint32_t id)
{
    struct model_holders h[4];
    int max = rows / 2, n = 0;
    if (id == UINT32_MAX || max <= 0)
        return 0;
    if (u->holders_waiting > 0 && u->holders_row == id) {
        grid_put(g, y + rows - 1, x, w, "  HELD BY: asked (holders SITE); the answer shows here when it comes", AT_DIM);
        rows--;
        max = rows / 2;
        n = 1;
    }
    size_t k = model_row_holders(u->m, u->group, id, h, (size_t)(max < 4 ? max : 4));
    for (size_t i = 0; i < k; i++) {
        char b[32];
        fmt_size(b, sizeof b, h[i].bytes);
        grid_putf(g, y + rows - (int)k + (int)i, x, w, AT_BOLD, "  HELD BY %s: %llu block%s, %s", h[i].words,
                  (unsigned long long)h[i].blocks, h[i].blocks == 1 ? "" : "s", b);
    }
    return n + (int)k;
}

static void render(struct ui *u, struct grid *g, struct rect r)
{
    grid_fill(g, (struct rect){r.y, r.x, 1, r.w}, ' ', AT_TITLE);
    if (u->state == JOB_PAUSED && model_process(u->m, u->held.proc)) {
        const struct held *h = &u->held;
        const struct model_process *p = model_process(u->m, h->proc);
        char size[32], grow[32], live[32];
        fmt_size(size, sizeof size, h->size);
        fmt_delta(grow, sizeof grow, h->growth);
        fmt_size(live, sizeof live, h->site_live);
        grid_fill(g, (struct rect){r.y, r.x, 1, r.w}, ' ', AT_PAUSED);
        if (h->bp_id)
            grid_putf(g, r.y, r.x, r.w, AT_PAUSED, " PAUSED in %s(%s) - breakpoint %d (hit %llu) - pid %llu thread %llu ",
                      culeak_api_name(h->api), size, h->bp_id, (unsigned long long)h->bp_hits,
                      (unsigned long long)p->pid, (unsigned long long)h->tid);
        else
            grid_putf(g, r.y, r.x, r.w, AT_PAUSED, " PAUSED in %s(%s) - step - pid %llu thread %llu ",
                      culeak_api_name(h->api), size, (unsigned long long)p->pid, (unsigned long long)h->tid);
        if (r.h > 1)
            grid_putf(g, r.y + 1, r.x, r.w, AT_BOLD,
                      "  cuda-gdb -p %llu to attach | continue | step.  %s, device %d; site %s live, %s since break",
                      (unsigned long long)p->pid, culeak_kind_name(h->kind), h->device, live,
                      h->bp_id ? grow : "n/a");
        int held_by = r.h > 3 ? holders(u, g, r.y + 2, r.x, r.h - 2, r.w,
                                            model_stack_row(u->m, h->proc, h->leaf, u->group)) : 0;
        frames(u, g, r.y + 2, r.x, r.h - 2 - held_by, r.w, h->proc, h->leaf);
        return;
    }
    if (!u->nrows || u->sel >= u->nrows) {
        grid_put(g, r.y, r.x, r.w, " stack", AT_TITLE);
        return;
    }
    ui_name_row(u, &u->rows[u->sel]);
    const struct row *s = &u->rows[u->sel];
    const struct model_process *p = model_process(u->m, s->stack_proc);
    if (!p)
        return;
    char more[96], fit[1100];
    int ml = snprintf(more, sizeof more, "  (%u stack%s; pid %llu)", s->nstacks, s->nstacks == 1 ? "" : "s",
                      (unsigned long long)p->pid);
    int x = r.x + grid_putf(g, r.y, r.x, r.w, AT_TITLE, " stack of #%u ", ui_site_id(s->id));
    x += grid_put(g, r.y, x, r.x + r.w - x,
                  site_fit(s->text ? s->text : "?", u->cwd, r.x + r.w - x - ml, fit, sizeof fit), AT_TITLE);
    grid_put(g, r.y, x, r.x + r.w - x, more, AT_TITLE);
    int held_by = r.h > 2 ? holders(u, g, r.y + 1, r.x, r.h - 1, r.w, s->id) : 0;
    frames(u, g, r.y + 1, r.x, r.h - 1 - held_by, r.w, s->stack_proc, s->stack);
}

static int key(struct ui *u, int k, struct rect r)
{
    (void)u;
    (void)k;
    (void)r;
    return 0;
}

const struct view stack_view = {"stack", render, key};
