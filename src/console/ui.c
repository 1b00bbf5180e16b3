/* The screen's data: table rows (filter, process, diff, sort), selection, history. */
#include "ui.h"
#include "common/apis.h"
#include "fmt.h"
#include "row_order.h"
#include "model/view_support.h"
#include "common/wire.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

int ui_init(struct ui *u)
{
    memset(u, 0, sizeof *u);
    outbuf_init(&u->out, 10000);
    u->m = model_new(NULL);
    if (u->m) /* moments for `export FILE.html` */
        model_keep_moments(u->m, UI_HTML_MOMENTS, 0);
    u->sort = SORT_LIVE;
    u->group = MODEL_GROUP_SITE;
    u->src.kind = MODEL_SOURCE_NOW;
    u->proc_filter = -1;
    u->prompt = "(culeak) ";
    u->line = "";
    if (!getcwd(u->cwd, sizeof u->cwd)) /* the job starts where the console does */
        u->cwd[0] = 0;
    return u->m ? 0 : -1;
}

void ui_free(struct ui *u)
{
    model_free(u->m);
    bp_free(&u->bps);
    outbuf_free(&u->out);
    free(u->rows);
    row_sort_scratch_free(&u->sort_scratch);
    free(u->base_cache.bytes);
    free(u->base_cache.count);
    free(u->gone);
    u->m = NULL;
}

void ui_message(struct ui *u, int error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(u->msg, sizeof u->msg, fmt, ap);
    va_end(ap);
    u->msg_error = error;
}

size_t ui_mark_count(const struct ui *u)
{
    size_t total = 0;
    for (int p = 0; p < model_process_count(u->m); p++) {
        size_t n = 0;
        const struct model_mark *v = model_marks(u->m, p, &n);
        for (size_t i = 0; i < n; i++)
            total += !(v[i].flags & CULEAK_MARK_POP);
    }
    return total;
}

char *ui_marks_text(const struct ui *u, char *buf, size_t len)
{
    size_t marks = ui_mark_count(u);
    int snaps = model_snapshot_named_count(u->m); /* a mark's own is counted as its mark */
    buf[0] = 0;
    if (marks && snaps)
        snprintf(buf, len, " %zu mark%s, %d snapshot%s ", marks, marks == 1 ? "" : "s", snaps, snaps == 1 ? "" : "s");
    else if (marks)
        snprintf(buf, len, " %zu mark%s ", marks, marks == 1 ? "" : "s");
    else if (snaps)
        snprintf(buf, len, " %d snapshot%s ", snaps, snaps == 1 ? "" : "s");
    return buf;
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
    char kinds[128], id[24];
    snprintf(id, sizeof id, "%u", ui_site_id(r->id));
    return contains_ci(r->text ? r->text : "", u->filter) || contains_ci(r->module ? r->module : "", u->filter) ||
           contains_ci(ui_kinds(r->kinds, kinds, sizeof kinds), u->filter) || strcmp(id, u->filter) == 0;
}

/* The model's values of a row; what the console adds (a_bytes, the change columns) is left as is. */
static void row_set(struct row *o, const struct model_row *r)
{
    o->id = r->id;
    o->live = r->live_bytes;
    o->count = r->live_count;
    o->peak = r->peak_bytes;
    o->allocs = r->allocs;
    o->kinds = r->kinds;
    o->nstacks = r->nstacks;
    o->text = r->text;
    o->module = r->module;
    o->named = r->named;
    o->stack_proc = r->stack_proc;
    o->stack = r->stack;
}

static struct row row_of(const struct model_row *r)
{
    struct row o = {0};
    row_set(&o, r);
    return o;
}

/* Names resolved change the model's generation, but rows whose order and filter read no
 * names show new names as they are drawn (ui_name_row): such kept rows stay kept. */
static void names_resolved(struct ui *u, uint64_t before)
{
    int read_names = u->filter[0] || u->sort == SORT_SITE || u->sort == SORT_MODULE ||
                     u->group == MODEL_GROUP_FUNCTION || u->group == MODEL_GROUP_FILE;
    if (u->rows_kept && u->rows_key.generation == before && !read_names)
        u->rows_key.generation = model_generation(u->m);
}

void ui_name_row(struct ui *u, struct row *r)
{
    if (r->named)
        return;
    struct model_row mr = {.id = r->id, .stack = r->stack, .stack_proc = r->stack_proc};
    uint64_t before = model_generation(u->m);
    int rc = model_row_name(u->m, u->group, &mr);
    names_resolved(u, before);
    if (rc < 0)
        return;
    r->text = mr.text;
    r->module = mr.module;
    r->named = mr.named;
}

size_t ui_resolve_names(struct ui *u, double budget_s)
{
    uint64_t before = model_generation(u->m);
    size_t n = model_resolve_names(u->m, SIZE_MAX, budget_s > 0 ? (uint64_t)(budget_s * 1e9) : 0);
    names_resolved(u, before);
    return n;
}

static void query_of(const struct ui *u, struct model_query *q)
{
    model_query_init(q);
    q->group = u->group;
    q->proc = u->proc_filter < 0 ? MODEL_ALL : u->proc_filter;
    q->source = u->src.kind;
    q->snapshot = u->src.snapshot;
    q->failure = u->src.failure;
    q->lazy_names = 1;
}

/* to: zeroed, n bytes */
static void copy_str(char *to, size_t n, const char *from) { memcpy(to, from, strnlen(from, n - 1)); }

/* Everything the rows depend on: while it stays the same, a frame keeps the rows. */
static void rows_key_of(const struct ui *u, struct rows_key *k)
{
    memset(k, 0, sizeof *k); /* padding included: keys are compared with memcmp */
    k->m = u->m;
    k->generation = model_generation(u->m);
    k->group = u->group;
    k->src_kind = u->src.kind;
    k->failure = u->src.failure;
    k->proc_filter = u->proc_filter;
    k->diff_active = u->diff_active;
    k->sort = u->sort;
    k->sort_reverse = u->sort_reverse;
    copy_str(k->snapshot, sizeof k->snapshot, u->src.snapshot);
    copy_str(k->base, sizeof k->base, u->base);
    copy_str(k->diff_a, sizeof k->diff_a, u->diff_a);
    copy_str(k->diff_b, sizeof k->diff_b, u->diff_b);
    copy_str(k->filter, sizeof k->filter, u->filter);
}

size_t ui_table_top(size_t top, size_t sel, size_t fit, size_t n)
{
    if (sel < top)
        top = sel;
    if (sel >= top + fit)
        top = sel - fit + 1;
    if (top + fit > n)
        top = n > fit ? n - fit : 0;
    return top;
}

static void keep_selection(struct ui *u);

static int all_sorted(const struct ui *u) { return u->sorted_lo == 0 && u->sorted_hi >= u->nrows; }

int ui_rows_need(struct ui *u, size_t lo, size_t hi)
{
    if (all_sorted(u) || (u->sorted_lo <= lo && hi <= u->sorted_hi))
        return 0;
    rows_sort(&u->rows, &u->caprows, u->nrows, u->sort, u->sort_reverse, &u->sort_scratch);
    u->sorted_lo = 0;
    u->sorted_hi = u->nrows;
    keep_selection(u);
    return 1;
}

/* The selection stays on the same row (by id) when rows move, else in range. */
static void keep_selection(struct ui *u)
{
    size_t m = u->nrows;
    if (!all_sorted(u) && !(u->sel_valid && u->sel >= u->sorted_lo && u->sel < u->sorted_hi &&
                            u->rows[u->sel].id == u->sel_site)) {
        ui_rows_need(u, 0, m); /* the selection is to be found among rows out of order */
        return;
    }
    if (u->sel_valid) {
        if (u->sel < m && u->rows[u->sel].id == u->sel_site)
            return;
        for (size_t i = 0; i < m; i++) {
            if (u->rows[i].id == u->sel_site) {
                u->sel = i;
                return;
            }
        }
    }
    if (u->sel >= m)
        u->sel = m ? m - 1 : 0;
    if (m) {
        u->sel_site = u->rows[u->sel].id;
        u->sel_valid = 1;
    }
}

static void rows_make(struct ui *u, int names);

/* A frame's rows of a big table: only those on screen are put in order. The selection's
 * place comes from the keys; the view moves as the table pane will move it. 0: the rows
 * are to be sorted. */
static int screen_rows(struct ui *u)
{
    size_t n = u->nrows, fit = u->table_rows;
    struct row_sort_scratch *s = &u->sort_scratch;
    if (n < UI_PARTIAL_MIN || !fit || rows_keys(u->rows, n, u->sort, u->sort_reverse, s) != 0)
        return 0;
    size_t sel = n, rank = n;
    for (size_t i = 0; u->sel_valid && i < n; i++) { /* a site's two rows: the first in order */
        if (u->rows[i].id != u->sel_site)
            continue;
        size_t r = rows_rank(s, n, i);
        if (r < rank) {
            rank = r;
            sel = i;
        }
    }
    if (sel == n) /* gone, or no row selected: the same place */
        rank = u->sel < n ? u->sel : n - 1;
    size_t top = ui_table_top(u->top, rank, fit, n), hi = top + fit < n ? top + fit : n;
    if (sel == n && hi > n / 4)
        return 0; /* no row to find the window around: it would be [0, hi) */
    u->sorted_lo = rows_window(u->rows, n, sel, sel == n ? 0 : top, hi, s);
    u->sorted_hi = hi;
    u->sel = rank;
    u->sel_site = u->rows[rank].id;
    u->sel_valid = 1;
    rows_key_of(u, &u->rows_key);
    u->rows_kept = 1;
    return 1;
}

void ui_rows_refresh(struct ui *u)
{
    struct rows_key k;
    rows_key_of(u, &k);
    if (u->rows_kept && memcmp(&k, &u->rows_key, sizeof k) == 0)
        keep_selection(u);
    else
        rows_make(u, 0);
}

static size_t row_slot(const struct model_row *r)
{
    return (size_t)r->id << 1 | (r->kinds == 1u << CULEAK_KIND_BLOCK);
}

/* The snapshot's values of t's rows (model_table_baseline): from scratch (names: the
 * straightforward way, for commands), or for frames from the values per row id kept by
 * the frame before while the snapshot and the table's kind stay the same. The rows a
 * table has never lack in the one the values were kept from: every unit's row is there,
 * nothing live or not. */
static int baseline(struct ui *u, const struct model_query *q, const char *snap, const struct model_table *t,
                    uint64_t *bb, uint64_t *bc, int names)
{
    struct base_cache *c = &u->base_cache;
    uint64_t stamp = model_snapshot_stamp(u->m, snap);
    const char *src_snap = q->source == MODEL_SOURCE_SNAPSHOT && q->snapshot ? q->snapshot : "";
    if (!names && stamp && c->stamp == stamp && c->m == u->m && c->group == q->group && c->proc == q->proc &&
        c->source == q->source && strcmp(c->name, snap) == 0 && strcmp(c->source_snapshot, src_snap) == 0) {
        for (size_t i = 0; i < t->n; i++) {
            size_t k = row_slot(&t->rows[i]);
            bb[i] = k < c->n ? c->bytes[k] : 0;
            bc[i] = k < c->n ? c->count[k] : 0;
        }
        return 0;
    }
    if (model_table_baseline(u->m, q, snap, t, bb, bc) != 0)
        return -1;
    c->stamp = 0;
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        if (row_slot(&t->rows[i]) >= n)
            n = row_slot(&t->rows[i]) + 1;
    if (n > c->n) {
        uint64_t *b = realloc(c->bytes, n * sizeof *b), *k = b ? realloc(c->count, n * sizeof *k) : NULL;
        if (b)
            c->bytes = b;
        if (!k)
            return 0; /* kept nothing: the next frame asks the model again */
        c->count = k;
        c->n = n;
    }
    memset(c->bytes, 0, c->n * sizeof *c->bytes);
    memset(c->count, 0, c->n * sizeof *c->count);
    for (size_t i = 0; i < t->n; i++) {
        size_t k = row_slot(&t->rows[i]);
        c->bytes[k] = bb[i];
        c->count[k] = bc[i];
    }
    c->m = u->m;
    c->stamp = stamp;
    c->group = q->group;
    c->proc = q->proc;
    c->source = q->source;
    snprintf(c->name, sizeof c->name, "%s", snap);
    snprintf(c->source_snapshot, sizeof c->source_snapshot, "%s", src_snap);
    return 0;
}

static void rows_make(struct ui *u, int names)
{
    struct model_query q;
    query_of(u, &q);
    q.unsorted = 1; /* sorted below, the console's way */
    /* frames name only the rows they show (ui_name_row), unless the filter or the sort
     * reads names */
    q.unnamed = !names && !u->filter[0] && u->sort != SORT_SITE && u->sort != SORT_MODULE;
    q.texts_only = 1; /* rows keep no function, file or line */
    u->rows_kept = 0;
    const char *base = u->base[0] && model_snapshot_find(u->m, u->base) >= 0 ? u->base : NULL;
    if (u->diff_active) {
        q.source = u->diff_b[0] ? MODEL_SOURCE_SNAPSHOT : MODEL_SOURCE_NOW;
        q.snapshot = u->diff_b;
        base = u->diff_a;
    }
    struct model_table t;
    uint64_t *bb = NULL, *bc = NULL;
    u->nrows = 0;
    u->total_bytes = u->total_count = 0;
    if (model_table_build(u->m, &q, &t) != 0)
        return;
    if (t.n > u->caprows) {
        struct row *v = realloc(u->rows, t.n * sizeof *v);
        if (!v) {
            model_table_free(&t);
            return;
        }
        u->rows = v;
        u->caprows = t.n;
    }
    if (base && t.n) {
        bb = malloc(t.n * sizeof *bb);
        bc = malloc(t.n * sizeof *bc);
        if (!bb || !bc || baseline(u, &q, base, &t, bb, bc, names) != 0) {
            free(bb);
            free(bc);
            bb = bc = NULL;
        }
    }
    u->total_bytes = t.total_bytes;
    u->total_count = t.total_count;
    u->memory = t.memory;
    size_t m = 0;
    for (size_t i = 0; i < t.n; i++) {
        struct row *r = &u->rows[m]; /* written in place: a row is big */
        row_set(r, &t.rows[i]);
        r->a_bytes = bb ? bb[i] : 0;
        r->change = (int64_t)(r->live - r->a_bytes);
        r->count_change = (int64_t)(r->count - (bc ? bc[i] : 0));
        if (u->diff_active && r->change == 0 && r->count_change == 0)
            continue;
        if (!row_matches(u, r))
            continue;
        m++;
    }
    free(bb);
    free(bc);
    model_table_free(&t);
    u->nrows = m;
    if (!names && screen_rows(u))
        return;
    rows_sort(&u->rows, &u->caprows, m, u->sort, u->sort_reverse, &u->sort_scratch);
    u->sorted_lo = 0;
    u->sorted_hi = m;
    keep_selection(u);
    rows_key_of(u, &u->rows_key);
    u->rows_kept = 1;
}

void ui_rows(struct ui *u) { rows_make(u, 1); }

/* Calls fn for every row of the current grouping, live now, over all processes. */
static int each_row(struct ui *u, int (*fn)(struct ui *u, const struct model_row *r, void *arg), void *arg)
{
    struct model_query q;
    model_query_init(&q);
    q.group = u->group;
    q.lazy_names = 1;
    struct model_table t;
    if (model_table_build(u->m, &q, &t) != 0)
        return -1;
    for (size_t i = 0; i < t.n; i++)
        if (fn(u, &t.rows[i], arg))
            break;
    model_table_free(&t);
    return 0;
}

struct find {
    const char *spec;
    uint32_t id;
    int by_id, found;
    struct row *out;
};

/* The rows come unresolved (lazy_names); a pattern is compared with names. */
static int find_one(struct ui *u, const struct model_row *r, void *arg)
{
    struct find *f = arg;
    if (f->by_id) {
        if (r->id != f->id)
            return 0;
        *f->out = row_of(r);
        ui_name_row(u, f->out);
        f->found = 1;
        return 1;
    }
    if (f->found && r->live_bytes <= f->out->live)
        return 0; /* the biggest match wins */
    struct row named = row_of(r);
    ui_name_row(u, &named);
    if ((named.text && strcmp(named.text, f->spec) == 0) ||
        model_stack_matches(u->m, r->stack_proc, r->stack, f->spec, 1)) {
        *f->out = named;
        f->found = 1;
    }
    return 0;
}

int ui_row_by_id(struct ui *u, uint32_t id, struct row *row)
{
    struct find f = {.id = id, .by_id = 1, .out = row};
    return each_row(u, find_one, &f) == 0 && f.found ? 0 : -1;
}

int ui_find_site(struct ui *u, const char *spec, struct row *row)
{
    uint64_t id;
    if (spec[0] == '#')
        spec++;
    if (parse_u64(spec, &id) == 0)
        return id >= 1 && id <= UINT32_MAX ? ui_row_by_id(u, (uint32_t)(id - 1), row) : -1;
    struct find f = {.spec = spec, .out = row};
    return each_row(u, find_one, &f) == 0 && f.found ? 0 : -1;
}

void ui_totals(struct ui *u, uint64_t *bytes, uint64_t *count)
{
    if (u->src.kind != MODEL_SOURCE_NOW) { /* recordings: the state the table shows */
        *bytes = u->total_bytes;
        *count = u->total_count;
        return;
    }
    *bytes = *count = 0;
    for (unsigned k = 0; k < CULEAK_KIND_COUNT; k++) {
        if (!culeak_kind_is_memory(k) || k == CULEAK_KIND_BLOCK) /* blocks lie inside segments */
            continue;
        struct model_counter c;
        model_totals(u->m, u->proc_filter < 0 ? MODEL_ALL : u->proc_filter, MODEL_ALL, (int)k, &c);
        *bytes += c.live_bytes;
        *count += c.live_count;
    }
}

void ui_memory(struct ui *u, struct model_memory *out)
{
    if (u->src.kind != MODEL_SOURCE_NOW) /* recordings: the state the table shows */
        *out = u->memory;
    else
        model_memory_now(u->m, u->proc_filter < 0 ? MODEL_ALL : u->proc_filter, out);
}

const char *ui_sort_name(enum sort_field f)
{
    static const char *const names[] = {"id", "live", "count", "change", "peak", "allocs", "kind", "site", "module"};
    return (unsigned)f < sizeof names / sizeof *names ? names[f] : "?";
}

void ui_sample(struct ui *u)
{
    if (u->nspark == SPARK_N) {
        memmove(u->spark, u->spark + 1, (SPARK_N - 1) * sizeof *u->spark);
        u->nspark--;
    }
    uint64_t b, n;
    ui_totals(u, &b, &n);
    u->spark[u->nspark++] = b;
}

void layout_compute(int h, int w, struct layout *l)
{
    memset(l, 0, sizeof *l);
    if (h < LAYOUT_MIN_ROWS || w < LAYOUT_MIN_COLS) { /* the prompt still takes commands (quit) */
        l->too_small = 1;
        l->prompt = (struct rect){h > 0 ? h - 1 : 0, 0, h > 0 ? 1 : 0, w > 0 ? w : 0};
        l->status = (struct rect){h > 1 ? h - 2 : 0, 0, h > 1 ? 1 : 0, w > 0 ? w : 0}; /* (y or n) */
        return;
    }
    int hdr = 2, status = 1, prompt = 1, keys = h >= LAYOUT_KEYS_MIN_ROWS;
    int rest = h - hdr - status - prompt - keys;
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
    l->status = (struct rect){h - 2 - keys, 0, status, w};
    l->prompt = (struct rect){h - 1 - keys, 0, prompt, w};
    l->keys = (struct rect){h - 1, 0, keys, w};
}

/* While there are growth suspects the header has a third line, taken from the table. */
static void header_and_table(const struct ui *u, const struct layout *l, struct rect *hdr, struct rect *tab)
{
    *hdr = l->header;
    *tab = l->table;
    if (u->suspects.n && tab->h > 3) {
        hdr->h++;
        tab->y++;
        tab->h--;
    }
}

/* A screen too small for the panes says so on its first line, above the status line and
 * the prompt (what fits of the three). */
static void render_too_small(struct ui *u, struct grid *g, const struct layout *l)
{
    if (l->status.y > 0)
        grid_putf(g, 0, 0, g->w, AT_TITLE, "culeak: terminal too small (%dx%d; at least %dx%d)", g->w, g->h,
                  LAYOUT_MIN_COLS, LAYOUT_MIN_ROWS);
    if (l->status.h > 0)
        status_view.render(u, g, l->status);
    if (l->prompt.h > 0)
        prompt_view.render(u, g, l->prompt);
}

void ui_render(struct ui *u, struct grid *g, const struct layout *l)
{
    grid_clear(g);
    if (l->too_small) {
        render_too_small(u, g, l);
        return;
    }
    ui_suspects_refresh(u); /* a line of suspects takes one of the table's */
    struct rect hdr, tab;
    header_and_table(u, l, &hdr, &tab);
    u->table_rows = tab.h > 1 ? (size_t)tab.h - 1 : 0;
    ui_rows_refresh(u); /* the header's totals come from the rows when the source is not "now" */
    header_view.render(u, g, hdr);
    table_view.render(u, g, tab);
    stack_view.render(u, g, l->stack);
    output_view.render(u, g, l->output);
    if (u->help_open) /* over the table, stack and output panes */
        help_view.render(u, g, (struct rect){l->table.y, 0, l->status.y - l->table.y, l->table.w});
    status_view.render(u, g, l->status);
    prompt_view.render(u, g, l->prompt);
    if (l->keys.h)
        keybar_view.render(u, g, l->keys);
}

void ui_table_rect(const struct ui *u, const struct layout *l, struct rect *tab)
{
    struct rect hdr;
    header_and_table(u, l, &hdr, tab);
}

void ui_key(struct ui *u, int key, const struct layout *l)
{
    if (l->too_small)
        return; /* no pane to move in */
    if (u->help_open)
        help_view.key(u, key, (struct rect){l->table.y, 0, l->status.y - l->table.y, l->table.w});
    else if (u->focus_output)
        output_view.key(u, key, l->output);
    else {
        struct rect hdr, tab;
        header_and_table(u, l, &hdr, &tab);
        table_view.key(u, key, tab);
    }
}
