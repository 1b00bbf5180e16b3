/* The selected site's full stack; while paused, the held allocation and its stack. */
#include "apis.h"
#include "fmt.h"
#include "ui.h"

#include <stdio.h>
#include <string.h>

static void frames(struct ui *u, struct grid *g, int y, int x, int rows, int w, const struct proc *p, uint64_t leaf)
{
    uint64_t ips[256];
    size_t n = track_stack(p, leaf, ips, 256);
    if (n == 0 && rows > 0)
        grid_put(g, y, x, w, "  (no stack recorded)", AT_DIM);
    for (size_t i = 0; i < n && (int)i < rows; i++) {
        char label[1024];
        track_frame_label(&u->tr, p, ips[i], label, sizeof label);
        if ((int)i == rows - 1 && i + 1 < n)
            grid_putf(g, y + (int)i, x, w, AT_DIM, "  ... %zu more frames (show SITE lists them in the output pane)",
                      n - i);
        else
            grid_putf(g, y + (int)i, x, w, AT_NORMAL, "  #%-2zu %s", i, label);
    }
}

static void render(struct ui *u, struct grid *g, struct rect r)
{
    grid_fill(g, (struct rect){r.y, r.x, 1, r.w}, ' ', AT_TITLE);
    if (u->state == JOB_PAUSED && u->held.proc >= 0 && (size_t)u->held.proc < u->tr.nprocs) {
        const struct held *h = &u->held;
        const struct proc *p = u->tr.procs[h->proc];
        char size[32], grow[32], live[32];
        fmt_size(size, sizeof size, h->size);
        fmt_delta(grow, sizeof grow, h->growth);
        fmt_size(live, sizeof live, h->site_live);
        grid_fill(g, (struct rect){r.y, r.x, 1, r.w}, ' ', AT_PAUSED);
        if (h->bp_id)
            grid_putf(g, r.y, r.x, r.w, AT_PAUSED, " PAUSED in %s(%s) - breakpoint %d - pid %llu thread %llu ",
                      culeak_api_name(h->api), size, h->bp_id, (unsigned long long)p->pid,
                      (unsigned long long)h->tid);
        else
            grid_putf(g, r.y, r.x, r.w, AT_PAUSED, " PAUSED in %s(%s) - step - pid %llu thread %llu ",
                      culeak_api_name(h->api), size, (unsigned long long)p->pid, (unsigned long long)h->tid);
        if (r.h > 1)
            grid_putf(g, r.y + 1, r.x, r.w, AT_BOLD,
                      "  cuda-gdb -p %llu to attach | continue | step.  %s, device %d; site %s live, %s since break",
                      (unsigned long long)p->pid, culeak_kind_name(h->kind), h->device, live,
                      h->bp_id ? grow : "n/a");
        frames(u, g, r.y + 2, r.x, r.h - 2, r.w, p, h->leaf);
        return;
    }
    if (!u->nrows || u->sel >= u->nrows) {
        grid_put(g, r.y, r.x, r.w, " stack", AT_TITLE);
        return;
    }
    const struct site *s = &u->tr.sites[u->rows[u->sel].site];
    if (s->proc < 0 || (size_t)s->proc >= u->tr.nprocs)
        return;
    const struct proc *p = u->tr.procs[s->proc];
    grid_putf(g, r.y, r.x, r.w, AT_TITLE, " stack of #%u %s  (%zu stack%s; pid %llu)", ui_site_id(u->rows[u->sel].site),
              s->label, s->nstacks, s->nstacks == 1 ? "" : "s", (unsigned long long)p->pid);
    frames(u, g, r.y + 1, r.x, r.h - 1, r.w, p, s->leaf);
}

static int key(struct ui *u, int k, struct rect r)
{
    (void)u;
    (void)k;
    (void)r;
    return 0;
}

const struct view stack_view = {"stack", render, key};
