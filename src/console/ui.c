/* The screen's data: table rows (filter, process, diff, sort), selection, history. */
#include "ui.h"
#include "apis.h"
#include "fmt.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void ui_init(struct ui *u)
{
    memset(u, 0, sizeof *u);
    tracker_init(&u->tr);
    outbuf_init(&u->out, 10000);
    u->sort = SORT_LIVE;
    u->proc_filter = -1;
    u->diff_b = -1;
    u->prompt = "(culeak) ";
    u->line = "";
}

void ui_free(struct ui *u)
{
    tracker_free(&u->tr);
    snap_free(&u->snaps);
    bp_free(&u->bps);
    outbuf_free(&u->out);
    free(u->rows);
}

void ui_message(struct ui *u, int error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(u->msg, sizeof u->msg, fmt, ap);
    va_end(ap);
    u->msg_error = error;
}

char *ui_kinds(uint32_t kinds, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (unsigned k = 0; k < 32 && n + 1 < len; k++) {
        if (!(kinds & (1u << k)))
            continue;
        int w = snprintf(buf + n, len - n, "%s%s", n ? "+" : "", culeak_kind_name(k));
        if (w < 0)
            break;
        n += (size_t)w;
    }
    if (n >= len)
        n = len - 1;
    if (!n)
        snprintf(buf, len, "-");
    return buf;
}

static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (!n)
        return 1;
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0)
            return 1;
    return 0;
}

static int row_matches(struct ui *u, const struct row *r)
{
    if (!u->filter[0])
        return 1;
    const struct site *s = &u->tr.sites[r->site];
    char kinds[128], id[24];
    snprintf(id, sizeof id, "%u", ui_site_id(r->site));
    return contains_ci(s->label, u->filter) || contains_ci(s->module, u->filter) ||
           contains_ci(ui_kinds(r->kinds, kinds, sizeof kinds), u->filter) || strcmp(id, u->filter) == 0;
}

static struct ui *sort_ui; /* qsort has no context argument */

static int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }

static int row_cmp(const void *pa, const void *pb)
{
    const struct row *a = pa, *b = pb;
    const struct site *sa = &sort_ui->tr.sites[a->site], *sb = &sort_ui->tr.sites[b->site];
    int c = 0;
    char ka[128], kb[128];
    switch (sort_ui->sort) {
    case SORT_ID: c = -cmp_u64(a->site, b->site); break;
    case SORT_LIVE: c = cmp_u64(a->live, b->live); break;
    case SORT_COUNT: c = cmp_u64(a->count, b->count); break;
    case SORT_CHANGE: c = a->change < b->change ? -1 : a->change > b->change; break;
    case SORT_PEAK: c = cmp_u64(a->peak, b->peak); break;
    case SORT_ALLOCS: c = cmp_u64(a->allocs, b->allocs); break;
    case SORT_KIND: c = -strcmp(ui_kinds(a->kinds, ka, sizeof ka), ui_kinds(b->kinds, kb, sizeof kb)); break;
    case SORT_SITE: c = -strcmp(sa->label, sb->label); break;
    case SORT_MODULE: c = -strcmp(sa->module, sb->module); break;
    }
    if (c == 0) /* stable order: larger live first, then lower id */
        c = cmp_u64(a->live, b->live);
    if (c == 0)
        c = -cmp_u64(a->site, b->site);
    return sort_ui->sort_reverse ? c : -c;
}

void ui_rows(struct ui *u)
{
    struct tracker *t = &u->tr;
    size_t n = t->nsites;
    if (n > u->caprows) {
        struct row *v = realloc(u->rows, n * sizeof *v);
        if (!v)
            return;
        u->rows = v;
        u->caprows = n;
    }
    struct row *r = u->rows;
    for (size_t i = 0; i < n; i++)
        r[i] = (struct row){.site = (uint32_t)i};
    int all = u->proc_filter < 0;
    if (u->diff_active) {
        const struct snapshot *a = u->diff_a >= 0 && (size_t)u->diff_a < u->snaps.n ? &u->snaps.v[u->diff_a] : NULL;
        const struct snapshot *b = u->diff_b >= 0 && (size_t)u->diff_b < u->snaps.n ? &u->snaps.v[u->diff_b] : NULL;
        for (size_t pi = 0; pi < t->nprocs; pi++) {
            if (!all && (int)pi != u->proc_filter)
                continue;
            struct proc *p = t->procs[pi];
            for (size_t k = 0; k < p->nst; k++) {
                struct row *x = &r[p->st[k].site];
                uint64_t ab = a ? snap_bytes(a, (int)pi, k) : 0, ac = a ? snap_count(a, (int)pi, k) : 0;
                uint64_t bb = b ? snap_bytes(b, (int)pi, k) : p->st[k].live_bytes;
                uint64_t bc = b ? snap_count(b, (int)pi, k) : p->st[k].live_count;
                x->a_bytes += ab;
                x->live += bb;
                x->count += bc;
                x->change += (int64_t)(bb - ab);
                x->count_change += (int64_t)(bc - ac);
                x->kinds |= p->st[k].kinds;
                x->allocs += p->st[k].allocs;
            }
        }
    } else if (all) {
        for (size_t i = 0; i < n; i++) {
            const struct site *s = &t->sites[i];
            r[i].live = s->live_bytes;
            r[i].count = s->live_count;
            r[i].peak = s->peak_bytes;
            r[i].allocs = s->allocs;
            r[i].change = (int64_t)(s->live_bytes - s->base_bytes);
            r[i].kinds = s->kinds;
        }
    } else if ((size_t)u->proc_filter < t->nprocs) {
        struct proc *p = t->procs[u->proc_filter];
        for (size_t k = 0; k < p->nst; k++) {
            struct row *x = &r[p->st[k].site];
            x->live += p->st[k].live_bytes;
            x->count += p->st[k].live_count;
            x->allocs += p->st[k].allocs;
            x->change += (int64_t)(p->st[k].live_bytes - p->st[k].base_bytes);
            if (p->st[k].peak_bytes > x->peak)
                x->peak = p->st[k].peak_bytes;
            x->kinds |= p->st[k].kinds;
        }
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!all && r[i].allocs == 0)
            continue; /* not a site of this process */
        if (u->diff_active && r[i].change == 0 && r[i].count_change == 0)
            continue;
        if (!row_matches(u, &r[i]))
            continue;
        r[m++] = r[i];
    }
    u->nrows = m;
    sort_ui = u;
    if (m > 1)
        qsort(r, m, sizeof *r, row_cmp);
    sort_ui = NULL;
    if (u->sel_valid) {
        for (size_t i = 0; i < m; i++) {
            if (r[i].site == u->sel_site) {
                u->sel = i;
                return;
            }
        }
    }
    if (u->sel >= m)
        u->sel = m ? m - 1 : 0;
    if (m) {
        u->sel_site = r[u->sel].site;
        u->sel_valid = 1;
    }
}

long ui_find_site(struct ui *u, const char *spec)
{
    struct tracker *t = &u->tr;
    uint64_t id;
    if (spec[0] == '#')
        spec++;
    if (parse_u64(spec, &id) == 0)
        return id >= 1 && id <= t->nsites ? (long)(id - 1) : -1;
    /* a pattern: a site whose representative stack has a matching frame, biggest first */
    long best = -1;
    for (size_t i = 0; i < t->nsites; i++) {
        const struct site *s = &t->sites[i];
        if (s->proc < 0 || (size_t)s->proc >= t->nprocs)
            continue;
        if (strcmp(s->label, spec) == 0 || track_stack_matches(t, t->procs[s->proc], s->leaf, spec)) {
            if (best < 0 || s->live_bytes > t->sites[best].live_bytes)
                best = (long)i;
        }
    }
    return best;
}

void ui_sample(struct ui *u)
{
    if (u->nspark == SPARK_N) {
        memmove(u->spark, u->spark + 1, (SPARK_N - 1) * sizeof *u->spark);
        u->nspark--;
    }
    u->spark[u->nspark++] = u->tr.live_bytes;
}

void layout_compute(int h, int w, struct layout *l)
{
    memset(l, 0, sizeof *l);
    if (h < 8)
        h = 8;
    int hdr = 2, status = 1, prompt = 1;
    int rest = h - hdr - status - prompt;
    int table = rest * 45 / 100, stack = rest * 22 / 100;
    if (table < 3)
        table = 3;
    if (stack < 2)
        stack = 2;
    int output = rest - table - stack;
    if (output < 2) {
        output = 2;
        table = rest - stack - output;
    }
    l->header = (struct rect){0, 0, hdr, w};
    l->table = (struct rect){hdr, 0, table, w};
    l->stack = (struct rect){hdr + table, 0, stack, w};
    l->output = (struct rect){hdr + table + stack, 0, output, w};
    l->status = (struct rect){h - 2, 0, status, w};
    l->prompt = (struct rect){h - 1, 0, prompt, w};
}

void ui_render(struct ui *u, struct grid *g, const struct layout *l)
{
    grid_clear(g);
    header_view.render(u, g, l->header);
    table_view.render(u, g, l->table);
    stack_view.render(u, g, l->stack);
    output_view.render(u, g, l->output);
    status_view.render(u, g, l->status);
    prompt_view.render(u, g, l->prompt);
}

void ui_key(struct ui *u, int key, const struct layout *l)
{
    if (u->focus_output)
        output_view.key(u, key, l->output);
    else
        table_view.key(u, key, l->table);
}
