/* Header: the job, its state, processes, event rate; live and peak bytes per device
 * and a sparkline of live bytes over time. */
#include "fmt.h"
#include "ui.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

static const char *state_text(const struct ui *u, char *buf, size_t len)
{
    switch (u->state) {
    case JOB_NONE: snprintf(buf, len, "RECORDING"); break;
    case JOB_STARTING: snprintf(buf, len, "STARTING"); break;
    case JOB_RUNNING: snprintf(buf, len, "RUNNING"); break;
    case JOB_PAUSED: snprintf(buf, len, "PAUSED"); break;
    case JOB_EXITED:
        if (u->exit_status == -1) /* an attached process whose status went to its parent */
            snprintf(buf, len, "EXITED");
        else if (WIFSIGNALED(u->exit_status))
            snprintf(buf, len, "EXITED (signal %d)", WTERMSIG(u->exit_status));
        else
            snprintf(buf, len, "EXITED (status %d)", WEXITSTATUS(u->exit_status));
        break;
    }
    return buf;
}

static void render(struct ui *u, struct grid *g, struct rect r)
{
    static const uint32_t bars[] = {0x2581, 0x2582, 0x2583, 0x2584, 0x2585, 0x2586, 0x2587, 0x2588};
    char st[64], rate[32], up[32];
    grid_fill(g, (struct rect){r.y, r.x, 1, r.w}, ' ', AT_TITLE);
    int x = r.x;
    x += grid_put(g, r.y, x, r.w, " culeak ", AT_TITLE);
    uint8_t sa = u->state == JOB_PAUSED ? AT_PAUSED : u->state == JOB_EXITED ? AT_BAD : AT_TITLE;
    state_text(u, st, sizeof st);
    x += grid_putf(g, r.y, x, r.x + r.w - x, sa, " %s ", st);
    size_t nprocs = (size_t)model_process_count(u->m), running = 0;
    for (size_t i = 0; i < nprocs; i++)
        running += !model_process(u->m, (int)i)->exited && !(i < u->ngone && u->gone[i]);
    fmt_count(rate, sizeof rate, (uint64_t)(u->rate + 0.5));
    fmt_duration(up, sizeof up, u->now);
    char right[320], marks[64];
    ui_marks_text(u, marks, sizeof marks);
    if (u->state == JOB_NONE)
        snprintf(right, sizeof right, "%s %zu proc  %s ", marks, nprocs, u->timeline);
    else
        snprintf(right, sizeof right, "%s %zu proc (%zu live)  %s ev/s  %s ", marks, nprocs, running, rate, up);
    int rw = (int)strlen(right);
    int room = r.x + r.w - x - rw - 1;
    char title[sizeof u->title];
    if (room > 4)
        grid_putf(g, r.y, x + 1, room, AT_TITLE, "%s", fmt_fit_command(title, sizeof title, u->title, room - 1));
    grid_put(g, r.y, r.x + r.w - rw > x ? r.x + r.w - rw : x, rw, right, AT_TITLE);

    if (r.h < 2)
        return;
    int y = r.y + 1;
    x = r.x + 1;
    int spark_w = r.w >= 100 ? SPARK_N : r.w >= 80 ? 16 : 0;
    int limit = r.x + r.w - (spark_w ? spark_w + 2 : 0);
    char a[32], b[32];
    uint64_t live, count;
    ui_totals(u, &live, &count);
    int proc = u->proc_filter < 0 ? MODEL_ALL : u->proc_filter;
    struct model_counter dm;
    model_totals(u->m, proc, MODEL_ALL, MODEL_KIND_DEVICE_MEMORY, &dm);
    x += grid_putf(g, y, x, limit - x, AT_BOLD, "live %s", fmt_size(a, sizeof a, live));
    struct model_memory mm; /* tensor tracking: torch.cuda.memory_allocated() / memory_reserved() */
    ui_memory(u, &mm);
    if (mm.pools) {
        char c[32];
        x += grid_putf(g, y, x, limit - x, AT_NORMAL, " (allocated %s reserved %s other %s)",
                       fmt_size(a, sizeof a, mm.allocated_bytes), fmt_size(b, sizeof b, mm.reserved_bytes),
                       fmt_size(c, sizeof c, mm.other_bytes));
    }
    /* separate runs opened together: their live bytes add up, their peaks do not */
    int runs = proc == MODEL_ALL ? model_runs(u->m) : 1;
    if (runs > 1)
        x += grid_putf(g, y, x, limit - x, AT_NORMAL, " (%d runs added up) peak %s (the highest run's) ", runs,
                       fmt_size(b, sizeof b, dm.peak_bytes));
    else
        x += grid_putf(g, y, x, limit - x, AT_NORMAL, " peak %s ", fmt_size(b, sizeof b, dm.peak_bytes));
    /* per device: now and peak (the peak of one device over processes is an upper bound) */
    int devs[16];
    int nd = model_devices(u->m, proc, devs, 16);
    for (int d = 0; d < nd && d < 16 && x < limit && u->src.kind == MODEL_SOURCE_NOW; d++) {
        struct model_counter c;
        model_totals(u->m, proc, devs[d], MODEL_KIND_DEVICE_MEMORY, &c);
        if (!c.peak_bytes)
            continue;
        x += grid_putf(g, y, x, limit - x, AT_DIM, "| gpu%d %s (peak %s) ", devs[d],
                       fmt_size(a, sizeof a, c.live_bytes), fmt_size(b, sizeof b, c.peak_bytes));
    }
    struct model_counter hp, hr;
    model_totals(u->m, proc, MODEL_ALL, CULEAK_KIND_HOST_PINNED, &hp);
    model_totals(u->m, proc, MODEL_ALL, CULEAK_KIND_HOST_REGISTERED, &hr);
    if (hp.peak_bytes + hr.peak_bytes && x < limit && u->src.kind == MODEL_SOURCE_NOW)
        x += grid_putf(g, y, x, limit - x, AT_DIM, "| host %s (peak %s) ",
                       fmt_size(a, sizeof a, hp.live_bytes + hr.live_bytes),
                       fmt_size(b, sizeof b, hp.peak_bytes + hr.peak_bytes));
    if (r.h >= 3 && u->suspects.n) {
        char line[512];
        ui_suspects_line(u, line, sizeof line);
        grid_put(g, r.y + 2, r.x, r.w, fmt_fit_words(title, sizeof title, line, r.w), AT_GROW);
    }
    if (!spark_w || !u->nspark)
        return;
    uint64_t max = 1;
    for (size_t i = 0; i < u->nspark; i++)
        if (u->spark[i] > max)
            max = u->spark[i];
    size_t first = u->nspark > (size_t)spark_w ? u->nspark - (size_t)spark_w : 0;
    int sx = r.x + r.w - spark_w - 1;
    for (size_t i = first; i < u->nspark; i++) {
        unsigned level = (unsigned)((u->spark[i] * 7 + max / 2) / max);
        g->c[y * g->w + sx + (int)(i - first)] = (struct cell){
            .ch = u->spark[i] ? bars[level > 7 ? 7 : level] : 0x2581, .attr = AT_OK};
    }
}

static int key(struct ui *u, int k, struct rect r)
{
    (void)u;
    (void)k;
    (void)r;
    return 0;
}

const struct view header_view = {"header", render, key};
