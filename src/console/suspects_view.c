/* Growth suspects in the console: a header line while there are any (with the forecast of
 * the one that fills its device soonest while its process runs), and the list the
 * `suspects` command writes to the output pane with each one's stack (suspects.h has the
 * rule). */
#include "fmt.h"
#include "model/suspects.h"
#include "ui.h"

#include <stdio.h>
#include <string.h>

#define SUSPECT_FRAMES 6 /* lines of each suspect's stack listed (show SITE lists them all) */

/* What the verdicts and their forecasts depend on: marks, and processes that ended */
static void verdict_key(const struct model *m, uint64_t *marks, uint64_t *ended)
{
    *marks = *ended = 0;
    for (int i = 0; i < model_process_count(m); i++) {
        size_t k;
        model_marks(m, i, &k);
        *marks += k;
        const struct model_process *p = model_process(m, i);
        *ended += !model_process_running(p);
    }
}

void ui_suspects_refresh(struct ui *u)
{
    struct ui_suspects *h = &u->suspects;
    uint64_t marks, ended;
    verdict_key(u->m, &marks, &ended);
    if (h->m == u->m && h->proc == u->proc_filter && h->marks == marks && h->ended == ended)
        return; /* verdicts change only at marks, forecasts also when a process ends */
    memset(h, 0, sizeof *h);
    h->m = u->m;
    h->proc = u->proc_filter;
    h->marks = marks;
    h->ended = ended;
    struct model_suspects s;
    if (model_suspects(u->m, u->proc_filter < 0 ? MODEL_ALL : u->proc_filter, 0, &s) != 0)
        return;
    h->n = s.n;
    for (size_t i = 0; i < s.n; i++) {
        int new_site = 1, new_proc = 1;
        for (size_t j = 0; j < i; j++) {
            new_site &= s.v[j].site != s.v[i].site;
            new_proc &= s.v[j].proc != s.v[i].proc;
        }
        h->sites += new_site;
        h->procs += new_proc;
        if (i < UI_SUSPECTS_MARKED) {
            h->sproc[i] = s.v[i].proc;
            h->sstack[i] = s.v[i].stack;
        }
        h->growth += (double)s.v[i].per_mark;
        if ((double)s.v[i].per_mark > h->fastest)
            h->fastest = (double)s.v[i].per_mark;
        /* the first with a forecast fills its device soonest; one of a process that ended
         * forecasts nothing */
        if (s.v[i].forecast && s.v[i].running && !h->forecast) {
            h->forecast = 1;
            h->device = s.v[i].device;
            h->fill_marks = s.v[i].fill_marks;
            h->fill_s = s.v[i].fill_s;
            h->interval_s = s.v[i].interval_s;
        }
    }
    model_suspects_free(&s);
}

int ui_row_is_suspect(const struct ui *u, const struct row *r)
{
    const struct ui_suspects *h = &u->suspects;
    if (h->m != u->m)
        return 0;
    for (size_t i = 0; i < h->n && i < UI_SUSPECTS_MARKED; i++)
        if (model_stack_row(u->m, h->sproc[i], h->sstack[i], u->group) == r->id)
            return 1;
    return 0;
}

void ui_suspects_line(const struct ui *u, char *buf, size_t len)
{
    const struct ui_suspects *h = &u->suspects;
    char per[32], all[32], fill[160];
    model_format_size(all, sizeof all, h->growth);
    /* "1 site grows", "1 site in 2 processes grows ... in all"; several sites: the fastest
     * one's growth, then all of theirs where it differs (one site of 1 MiB and one of 1
     * KiB read as two of 1 MiB in "2 sites grow +1.00 MiB/iteration") */
    char procs[40] = "";
    if (h->procs > 1)
        snprintf(procs, sizeof procs, " in %zu processes", h->procs);
    int n;
    if (h->sites > 1) {
        model_format_size(per, sizeof per, h->fastest);
        char sum[64] = "";
        if (strcmp(per, all) != 0)
            snprintf(sum, sizeof sum, " (+%s in all)", all);
        n = snprintf(buf, len, " suspects: %zu sites%s grow, the fastest +%s/iteration%s", h->sites, procs, per, sum);
    } else
        n = snprintf(buf, len, " suspects: 1 site%s grows +%s/iteration%s", procs, all, h->n > 1 ? " in all" : "");
    if (h->forecast && !h->fill_marks && n > 0 && (size_t)n < len) /* its device had nothing free */
        n += snprintf(buf + n, len - (size_t)n, "; device %d has no free memory left", h->device);
    else if (h->forecast && n > 0 && (size_t)n < len) {
        const struct model_suspect first = {.forecast = 1, .running = 1, .device = h->device,
                                            .fill_marks = h->fill_marks, .fill_s = h->fill_s,
                                            .interval_s = h->interval_s};
        model_suspect_fill_text(&first, fill, sizeof fill);
        n += snprintf(buf + n, len - (size_t)n, "; %s %s", h->n == 1 ? "it" : "the fastest", fill);
    }
    if (n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " - `suspects` lists them");
}

int ui_suspects_list(struct ui *u)
{
    struct model_suspects s;
    if (model_suspects(u->m, u->proc_filter < 0 ? MODEL_ALL : u->proc_filter, 1, &s) != 0)
        return -1;
    char line[1400], per[32], live[32], low[32], fc[256];
    if (s.n)
        outbuf_add_line(&u->out, "growth suspects (live bytes rose at 8 of the last 10 marks, or in steps never falling; help suspects):");
    for (size_t i = 0; i < s.n; i++) {
        const struct model_suspect *x = &s.v[i];
        const struct model_process *p = model_process(u->m, x->proc);
        model_format_size(per, sizeof per, (double)x->per_mark);
        model_format_size(live, sizeof live, (double)x->live_bytes);
        model_format_size(low, sizeof low, (double)x->since_bytes);
        char id[32] = "";
        if (u->group == MODEL_GROUP_SITE)
            snprintf(id, sizeof id, "#%u ", ui_site_id(x->site));
        snprintf(line, sizeof line, "%s+%s/iteration  %s  [pid %llu%s]", id, per, x->text,
                 (unsigned long long)p->pid, x->kind == MODEL_KIND_DEVICE_MEMORY ? "" : ", host or pool memory");
        outbuf_add_line(&u->out, line);
        char rose[96];
        model_suspect_rise_words(x, rose, sizeof rose);
        snprintf(line, sizeof line, "    %s live at '%s', %s \"%s\"", live, x->last_label, rose, x->series);
        outbuf_add_line(&u->out, line);
        if (x->since_label) {
            snprintf(line, sizeof line, "    grows since mark '%s' (%llu marks ago, %s then)", x->since_label,
                     (unsigned long long)x->since_marks, low);
            outbuf_add_line(&u->out, line);
        }
        model_suspect_forecast(x, fc, sizeof fc);
        snprintf(line, sizeof line, "    %s", fc);
        outbuf_add_line(&u->out, line);
        ui_list_stack(u, x->proc, x->stack, SUSPECT_FRAMES);
    }
    size_t n = s.n;
    model_suspects_free(&s);
    return (int)n;
}
