/* Growth suspects in the console: a header line while there are any, and the list the
 * `suspects` command writes to the output pane (suspects.h has the rule). */
#include "fmt.h"
#include "suspects.h"
#include "ui.h"

#include <stdio.h>
#include <string.h>

static uint64_t mark_count(const struct model *m)
{
    uint64_t n = 0;
    for (int i = 0; i < model_process_count(m); i++) {
        size_t k;
        model_marks(m, i, &k);
        n += k;
    }
    return n;
}

void ui_suspects_refresh(struct ui *u)
{
    struct ui_suspects *h = &u->suspects;
    uint64_t marks = mark_count(u->m);
    if (h->m == u->m && h->proc == u->proc_filter && h->marks == marks)
        return; /* verdicts change only at marks */
    memset(h, 0, sizeof *h);
    h->m = u->m;
    h->proc = u->proc_filter;
    h->marks = marks;
    struct model_suspects s;
    if (model_suspects(u->m, u->proc_filter < 0 ? MODEL_ALL : u->proc_filter, 0, &s) != 0)
        return;
    h->n = s.n;
    for (size_t i = 0; i < s.n; i++) {
        h->growth += (double)s.v[i].per_mark;
        if (s.v[i].forecast && (!h->forecast || s.v[i].fill_s < h->fill_s)) {
            h->forecast = 1;
            h->device = s.v[i].device;
            h->fill_marks = s.v[i].fill_marks;
            h->fill_s = s.v[i].fill_s;
        }
    }
    model_suspects_free(&s);
}

void ui_suspects_line(const struct ui *u, char *buf, size_t len)
{
    const struct ui_suspects *h = &u->suspects;
    char per[32], when[48], dur[32];
    model_format_size(per, sizeof per, h->growth);
    int n = snprintf(buf, len, " suspects: %zu site%s grow%s +%s/iteration", h->n, h->n == 1 ? "" : "s",
                     h->n == 1 ? "s" : "", per);
    if (h->forecast && n > 0 && (size_t)n < len) {
        model_format_count(when, sizeof when, h->fill_marks);
        model_format_duration(dur, sizeof dur, h->fill_s);
        n += snprintf(buf + n, len - (size_t)n, "; %s fills device %d in %s iterations (%s)",
                      h->n == 1 ? "it" : "the fastest to", h->device, when, dur);
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
        outbuf_add_line(&u->out, "growth suspects (live bytes rose at 8 of the last 10 marks; help suspects):");
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
        snprintf(line, sizeof line, "    %s live at '%s', rose at %u of the last %u marks \"%s\"", live,
                 x->last_label, x->rises, x->intervals, x->series);
        outbuf_add_line(&u->out, line);
        if (x->since_label) {
            snprintf(line, sizeof line, "    grows since mark '%s' (%llu marks ago, %s then)", x->since_label,
                     (unsigned long long)x->since_marks, low);
            outbuf_add_line(&u->out, line);
        }
        model_suspect_forecast(x, fc, sizeof fc);
        snprintf(line, sizeof line, "    %s", fc);
        outbuf_add_line(&u->out, line);
    }
    size_t n = s.n;
    model_suspects_free(&s);
    return (int)n;
}
