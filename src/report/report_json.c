/* JSON reports: {"processes": [...], "leaks" | "sites": [...], "cache": [...],
 * "suspects": [...], "summary": {...}} or, for diffs, {"processes", "diff": {...},
 * "suspects": [...]}. */
#include "common/json.h"
#include "report_internal.h"
#include "model/suppress.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void json_frame(FILE *f, const struct model_frame *fr)
{
    fputs("{\"function\":", f);
    json_write_cstr(f, fr->function);
    fputs(",\"file\":", f);
    json_write_cstr(f, fr->file);
    if (fr->line)
        fprintf(f, ",\"line\":%u", fr->line);
    else
        fputs(",\"line\":null", f);
    fputs(",\"module\":", f);
    json_write_cstr(f, fr->module);
    fprintf(f, ",\"offset\":\"0x%" PRIx64 "\",\"ip\":\"0x%" PRIx64 "\",\"inlined\":%s}", fr->offset, fr->ip,
            fr->inlined ? "true" : "false");
}

void report_json_stack(FILE *f, struct model *m, int proc, uint64_t stack, int depth)
{
    static struct model_frame frames[REPORT_MAX_FRAMES];
    size_t hidden;
    size_t n = report_stack(m, proc, stack, depth, frames, REPORT_MAX_FRAMES, &hidden);
    fputs("\"stack\":[", f);
    for (size_t i = 0; i < n; i++) {
        if (i)
            putc(',', f);
        json_frame(f, &frames[i]);
    }
    fprintf(f, "],\"library_frames_hidden\":%zu", hidden);
}

static void json_kinds(FILE *f, uint32_t kinds)
{
    char buf[128];
    report_format_kinds(buf, sizeof buf, kinds);
    fputs("\"kind\":", f);
    json_write_cstr(f, buf);
    fputs(",\"kinds\":[", f);
    int first = 1;
    for (unsigned k = 0; k < CULEAK_KIND_COUNT; k++)
        if (kinds >> k & 1) {
            fprintf(f, "%s\"%s\"", first ? "" : ",", culeak_kind_name(k));
            first = 0;
        }
    putc(']', f);
}

static void json_site(FILE *f, const struct model_row *r)
{
    fputs("\"site\":{\"function\":", f);
    json_write_cstr(f, r->function);
    fputs(",\"file\":", f);
    json_write_cstr(f, r->file);
    if (r->line)
        fprintf(f, ",\"line\":%u", r->line);
    else
        fputs(",\"line\":null", f);
    fputs(",\"module\":", f);
    json_write_cstr(f, r->module);
    fputs(",\"text\":", f);
    json_write_cstr(f, r->text);
    fputs(",\"via\":", f); /* the installed library's line the user's line called */
    json_write_cstr(f, r->via);
    if (r->autograd_backward) /* made on autograd's threads for a backward() at this line */
        fputs(",\"autograd_backward\":true", f);
    putc('}', f);
}

void report_json_holder_list(FILE *f, const struct model_holders *h, size_t n)
{
    putc('[', f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",{\"by\":" : "{\"by\":", f);
        json_write_cstr(f, h[i].words);
        fprintf(f, ",\"blocks\":%" PRIu64 ",\"bytes\":%" PRIu64 "}", h[i].blocks, h[i].bytes);
    }
    putc(']', f);
}

/* ,"holders":[{"by","blocks","bytes"}]: who keeps the row's blocks alive; absent if unknown. */
static void json_holders(FILE *f, struct model *m, const struct report_options *o, const struct model_row *r)
{
    struct model_holders h[8];
    size_t n = model_row_holders(m, o->group, r->id, h, 8);
    if (!n)
        return;
    fputs(",\"holders\":", f);
    report_json_holder_list(f, h, n);
}

/* ,"holders_at_marks":[{"mark","seq","holders"}]: the walks at marks (record --holders)
 * whose holders of the row differ from the walk before, the latest ones; absent unless
 * they changed. */
static void json_holder_changes(FILE *f, struct model *m, const struct report_options *o, const struct model_row *r)
{
    const struct model_holder_walk *w[REPORT_HOLDER_CHANGES];
    size_t total, n = model_row_holder_changes(m, o->group, r->id, w, REPORT_HOLDER_CHANGES, &total);
    if (total < 2)
        return;
    fprintf(f, ",\"holders_changes\":%zu,\"holders_at_marks\":[", total);
    for (size_t i = 0; i < n; i++) {
        struct model_holders h[8];
        size_t k = model_row_holders_walk(m, o->group, r->id, w[i]->proc, w[i]->walk, h, 8);
        fputs(i ? ",{\"mark\":" : "{\"mark\":", f);
        json_write_cstr(f, w[i]->mark ? w[i]->mark : "");
        fprintf(f, ",\"seq\":%" PRIu64 ",\"holders\":", w[i]->mark_seq);
        report_json_holder_list(f, h, k);
        putc('}', f);
    }
    putc(']', f);
}

static void json_row(FILE *f, struct model *m, const struct report_options *o, const struct model_row *r)
{
    fprintf(f, "{\"id\":%" PRIu32 ",\"bytes\":%" PRIu64 ",\"count\":%" PRIu64 ",", r->id, r->live_bytes,
            r->live_count);
    json_kinds(f, r->kinds);
    fprintf(f, ",\"reset_count\":%" PRIu64 ",\"peak_bytes\":%" PRIu64 ",\"allocs\":%" PRIu64 ",\"frees\":%" PRIu64
               ",\"failed\":%" PRIu64 ",\"stacks\":%" PRIu32 ",",
            r->reset_count, r->peak_bytes, r->allocs, r->frees, r->failed, r->nstacks);
    if (r->cache != MODEL_CACHE_NONE)
        fprintf(f, "\"allocator\":\"%s\",", model_cache_name(r->cache));
    json_site(f, r);
    /* the row's process; merged over processes: that of the stack shown */
    const struct model_process *p = model_process(m, r->stack_proc);
    fprintf(f, ",\"pid\":%" PRIu64 ",\"rank\":%d,", p->pid, p->rank);
    if (r->threads) /* the thread that allocated here (the first of several) */
        fprintf(f, "\"thread\":{\"tid\":%" PRIu64 ",\"main\":%s,\"several\":%s},", r->tid,
                r->main_thread ? "true" : "false", r->threads > 1 ? "true" : "false");
    report_json_stack(f, m, r->stack_proc, r->stack, o->depth);
    json_holders(f, m, o, r);
    json_holder_changes(f, m, o, r);
    putc('}', f);
}

void report_json_processes(FILE *f, struct model *m, const struct report_options *o)
{
    fputs("\"processes\":[", f);
    int first = 1;
    for (int i = 0; i < model_process_count(m); i++) {
        if (o->proc != MODEL_ALL && o->proc != i)
            continue;
        const struct model_process *p = model_process(m, i);
        struct model_counter c;
        model_totals(m, i, MODEL_ALL, MODEL_KIND_DEVICE_MEMORY, &c);
        fprintf(f, "%s{\"pid\":%" PRIu64 ",\"ppid\":%" PRIu64 ",\"rank\":%d,\"host\":", first ? "" : ",", p->pid,
                p->ppid, p->rank);
        first = 0;
        json_write_cstr(f, p->host);
        fputs(",\"argv\":[", f);
        for (size_t a = 0; a < p->argc; a++) {
            if (a)
                putc(',', f);
            json_write_cstr(f, p->argv[a]);
        }
        fprintf(f, "],\"exited\":%s,\"truncated\":%s,\"corrupt\":%s,\"events\":%" PRIu64
                   ",\"peak_device_bytes\":%" PRIu64 ",\"failed_allocs\":%" PRIu64 ",\"unknown_frees\":%" PRIu64
                   ",\"lost_events\":%" PRIu64,
                p->exited ? "true" : "false", p->truncated ? "true" : "false", p->corrupt ? "true" : "false",
                p->events, c.peak_bytes, p->failed_allocs, p->unknown_frees, p->lost_events);
        if (p->aggregated_ns) /* record --aggregate: allocations freed within an interval were counted only */
            fprintf(f, ",\"aggregated\":{\"interval_s\":%g,\"folded_allocs\":%" PRIu64 "}",
                    (double)p->aggregated_ns / 1e9, p->folded);
        putc('}', f);
    }
    putc(']', f);
}

static void json_diff_rows(FILE *f, struct model *m, const struct report_options *o, const struct model_diff *d,
                           int *first)
{
    for (size_t i = 0; i < d->n; i++) {
        const struct model_diff_row *r = &d->rows[i];
        if (r->pool)
            continue; /* in "pools" */
        const struct model_process *p = model_process(m, r->stack_proc);
        fprintf(f, "%s{\"id\":%" PRIu32 ",\"bytes_a\":%" PRIu64 ",\"bytes_b\":%" PRIu64 ",\"count_a\":%" PRIu64
                   ",\"count_b\":%" PRIu64 ",\"delta_bytes\":%" PRId64 ",\"delta_count\":%" PRId64 ",\"text\":",
                *first ? "" : ",", r->id, r->bytes_a, r->bytes_b, r->count_a, r->count_b, r->delta_bytes,
                r->delta_count);
        *first = 0;
        json_write_cstr(f, r->text);
        fputs(",\"via\":", f);
        json_write_cstr(f, r->via);
        if (r->autograd_backward)
            fputs(",\"autograd_backward\":true", f);
        fprintf(f, ",\"kind\":\"%s\"", r->blocks ? "block" : "memory");
        fputs(",\"module\":", f);
        json_write_cstr(f, r->module);
        fprintf(f, ",\"pid\":%" PRIu64 ",\"rank\":%d,", p->pid, p->rank);
        report_json_stack(f, m, r->stack_proc, r->stack, o->depth);
        putc('}', f);
    }
}

/* A tracked pool's segments: the pool's row, not a site's. */
static void json_diff_pools(FILE *f, struct model *m, const struct model_diff *d, int *first)
{
    for (size_t i = 0; i < d->n; i++) {
        const struct model_diff_row *r = &d->rows[i];
        if (!r->pool)
            continue;
        const struct model_process *p = model_process(m, r->stack_proc);
        fprintf(f, "%s{\"allocator\":\"%s\",\"text\":", *first ? "" : ",", model_cache_name(r->pool));
        *first = 0;
        json_write_cstr(f, r->text);
        fprintf(f, ",\"bytes_a\":%" PRIu64 ",\"bytes_b\":%" PRIu64 ",\"segments_a\":%" PRIu64
                   ",\"segments_b\":%" PRIu64 ",\"delta_bytes\":%" PRId64 ",\"delta_segments\":%" PRId64
                   ",\"pid\":%" PRIu64 ",\"rank\":%d}",
                r->bytes_a, r->bytes_b, r->count_a, r->count_b, r->delta_bytes, r->delta_count, p->pid, p->rank);
    }
}

/* ,"KEY":{...}: memory in PyTorch's words */
static void json_memory(FILE *f, const char *key, const struct model_memory *mm)
{
    fprintf(f, ",\"%s\":{\"allocated_bytes\":%" PRIu64 ",\"allocated_blocks\":%" PRIu64
               ",\"reserved_bytes\":%" PRIu64 ",\"reserved_segments\":%" PRIu64 ",\"other_bytes\":%" PRIu64
               ",\"other_count\":%" PRIu64 "}",
            key, mm->allocated_bytes, mm->allocated_blocks, mm->reserved_bytes, mm->reserved_segments, mm->other_bytes,
            mm->other_count);
}

static void json_diff_news(FILE *f, struct model *m, const struct report_options *o, const struct model_diff *d,
                           int *first)
{
    for (size_t i = 0; i < d->nnew; i++) {
        const struct model_process *p = model_process(m, d->news[i].proc);
        fprintf(f, "%s{\"pid\":%" PRIu64 ",\"rank\":%d,\"bytes\":%" PRIu64 ",\"count\":%" PRIu64
                   ",\"first_seq\":%" PRIu64 ",",
                *first ? "" : ",", p->pid, p->rank, d->news[i].bytes, d->news[i].count, d->news[i].first_seq);
        *first = 0;
        report_json_stack(f, m, d->news[i].proc, d->news[i].stack, o->depth);
        putc('}', f);
    }
}

/* Kept apart, the rows are those of each process between its own marks A and B, in
 * process order; merged, the rows add up every process. "per_process" has each one's
 * totals either way, and whether it reached both marks. */
static int json_diff(FILE *f, struct model *m, const struct report_options *o)
{
    struct report_diff_parts dp;
    if (report_diff_parts(m, o, &dp) != 0)
        return -1;
    int split = report_split(m, o);
    struct model_diff merged;
    memset(&merged, 0, sizeof merged);
    if (!split) {
        if (report_diff_query(m, o, o->proc, &merged) != 0) {
            report_diff_parts_free(&dp);
            return -1;
        }
    }
    fprintf(f, "{\"version\":%d,\"culeak\":\"%s\",", REPORT_JSON_VERSION, CULEAK_VERSION);
    report_json_processes(f, m, o);
    fputs(",\"diff\":{\"a\":", f);
    json_write_cstr(f, o->diff_a);
    fputs(",\"b\":", f);
    json_write_cstr(f, o->diff_b ? o->diff_b : "now");
    fprintf(f, ",\"delta_bytes\":%" PRId64 ",\"sites\":[", split ? dp.delta_bytes : merged.delta_bytes);
    int first = 1;
    if (split)
        for (int i = 0; i < dp.n; i++)
            json_diff_rows(f, m, o, &dp.p[i].d, &first);
    else
        json_diff_rows(f, m, o, &merged, &first);
    fprintf(f, "],\"new\":{\"bytes\":%" PRIu64 ",\"count\":%" PRIu64 ",\"stacks\":[",
            split ? dp.new_bytes : merged.new_bytes, split ? dp.new_count : merged.new_count);
    first = 1;
    if (split)
        for (int i = 0; i < dp.n; i++)
            json_diff_news(f, m, o, &dp.p[i].d, &first);
    else
        json_diff_news(f, m, o, &merged, &first);
    /* pool blocks lie inside the memory counted above: their totals come apart */
    fprintf(f, "]},\"delta_block_bytes\":%" PRId64, split ? dp.delta_block_bytes : merged.delta_block_bytes);
    /* tensor tracking: the pools' segments apart from the sites, and each side in
     * PyTorch's words (memory_allocated, memory_reserved) */
    struct model_memory ma = merged.a, mb = merged.b;
    uint64_t new_reserved_bytes = merged.new_reserved_bytes, new_reserved_count = merged.new_reserved_count;
    for (int i = 0; split && i < dp.n; i++) {
        report_memory_add(&ma, &dp.p[i].d.a);
        report_memory_add(&mb, &dp.p[i].d.b);
        new_reserved_bytes += dp.p[i].d.new_reserved_bytes;
        new_reserved_count += dp.p[i].d.new_reserved_count;
    }
    if (ma.pools) {
        fputs(",\"pools\":[", f);
        first = 1;
        if (split)
            for (int i = 0; i < dp.n; i++)
                json_diff_pools(f, m, &dp.p[i].d, &first);
        else
            json_diff_pools(f, m, &merged, &first);
        putc(']', f);
        json_memory(f, "memory_a", &ma);
        json_memory(f, "memory_b", &mb);
        fprintf(f, ",\"new_reserved_bytes\":%" PRIu64 ",\"new_reserved_segments\":%" PRIu64, new_reserved_bytes,
                new_reserved_count);
    }
    fputs(",\"per_process\":[", f);
    for (int i = 0; i < dp.n; i++) {
        const struct report_diff_part *pt = &dp.p[i];
        const struct model_process *p = model_process(m, pt->proc);
        fprintf(f, "%s{\"pid\":%" PRIu64 ",\"rank\":%d,\"has_a\":%s,\"has_b\":%s,\"delta_bytes\":%" PRId64
                   ",\"new_bytes\":%" PRIu64 ",\"new_count\":%" PRIu64 "}",
                i ? "," : "", p->pid, p->rank, pt->has_a ? "true" : "false", pt->has_b ? "true" : "false",
                pt->d.delta_bytes, pt->d.new_bytes, pt->d.new_count);
    }
    fputs("]},", f);
    report_suspects_json(f, m, o);
    fputs("}\n", f);
    model_diff_free(&merged);
    report_diff_parts_free(&dp);
    return 0;
}

/* The rows of one list: 0 "leaks"/"sites", 1 "cache", 2 "before_attach", 3 "live_at_end". */
static void json_rows(FILE *f, struct model *m, const struct report_options *o, const struct model_table *t,
                      int list, int *first)
{
    for (size_t i = 0; i < t->n; i++) {
        const struct model_row *r = &t->rows[i];
        int in = r->cache != MODEL_CACHE_NONE ? 1 : r->before_attach ? 2 : r->unended ? 3 : 0;
        if (in != list || r->pool)
            continue; /* a pool's segments are in "pools" */
        if (!*first)
            putc(',', f);
        *first = 0;
        json_row(f, m, o, &t->rows[i]);
    }
}

/* A tracked pool's segments: {"allocator","text","bytes","segments","peak_bytes","cached",
 * "pid","rank"} */
static void json_pools(FILE *f, struct model *m, const struct model_table *t, int *first)
{
    for (size_t i = 0; i < t->n; i++) {
        const struct model_row *r = &t->rows[i];
        if (!r->pool)
            continue;
        const struct model_process *p = model_process(m, r->stack_proc);
        fprintf(f, "%s{\"allocator\":\"%s\",\"text\":", *first ? "" : ",", model_cache_name(r->pool));
        *first = 0;
        json_write_cstr(f, r->text);
        fprintf(f, ",\"bytes\":%" PRIu64 ",\"segments\":%" PRIu64 ",\"peak_bytes\":%" PRIu64
                   ",\"cached\":%s,\"pid\":%" PRIu64 ",\"rank\":%d}",
                r->live_bytes, r->live_count, r->peak_bytes, r->cache != MODEL_CACHE_NONE ? "true" : "false", p->pid,
                p->rank);
    }
}

static void json_summary(FILE *f, const struct report_summary *s)
{
    fprintf(f, "\"bytes\":%" PRIu64 ",\"allocations\":%" PRIu64 ",\"sites\":%" PRIu64 ",\"reset_bytes\":%" PRIu64
               ",\"reset_allocations\":%" PRIu64 ",\"cache_bytes\":%" PRIu64 ",\"cache_allocations\":%" PRIu64,
            s->bytes, s->allocations, s->sites, s->reset_bytes, s->reset_allocations, s->cache_bytes,
            s->cache_allocations);
    if (s->before_allocations)
        fprintf(f, ",\"before_attach_bytes\":%" PRIu64 ",\"before_attach_allocations\":%" PRIu64, s->before_bytes,
                s->before_allocations);
    if (s->end_allocations)
        fprintf(f, ",\"live_at_end_bytes\":%" PRIu64 ",\"live_at_end_allocations\":%" PRIu64, s->end_bytes,
                s->end_allocations);
    if (s->memory.pools)
        json_memory(f, "memory", &s->memory);
}

/* "used":[{"name","file","line","bytes","allocations"}...] of one class of blocks (the
 * user's, or the default suppressions). */
static void json_used(FILE *f, const struct suppressions *supp, int defaults, const uint64_t *bytes,
                      const uint64_t *count)
{
    fputs(",\"used\":[", f);
    int first = 1;
    for (size_t i = 0; i < suppressions_count(supp); i++) {
        if ((!bytes[i] && !count[i]) || suppressions_is_default(supp, i) != defaults)
            continue;
        const char *file;
        unsigned line;
        const char *name = suppressions_name(supp, i, &file, &line);
        fputs(first ? "{\"name\":" : ",{\"name\":", f);
        first = 0;
        json_write_cstr(f, name);
        fputs(",\"file\":", f);
        json_write_cstr(f, file);
        fprintf(f, ",\"line\":%u,\"bytes\":%" PRIu64 ",\"allocations\":%" PRIu64 "}", line, bytes[i], count[i]);
    }
    fputs("]}", f);
}

/* ,"suppressed":{"bytes","allocations","sites","used":[...]}: what the user's suppressions
 * left out of a leak report; ,"held_by_libraries":{...}: what the default suppressions
 * matched, memory a library holds until exit (zeros without). */
static int json_suppressed(FILE *f, struct model *m, const struct report_options *o, struct report_summary *s)
{
    size_t nb = suppressions_count(o->supp);
    uint64_t *bytes = calloc(nb ? nb : 1, sizeof *bytes), *count = calloc(nb ? nb : 1, sizeof *count);
    if (!bytes || !count || report_count_suppressed(m, o, s, bytes, count) != 0) {
        free(bytes);
        free(count);
        return -1;
    }
    fprintf(f, ",\"suppressed\":{\"bytes\":%" PRIu64 ",\"allocations\":%" PRIu64 ",\"sites\":%" PRIu64,
            s->suppressed_bytes, s->suppressed_allocations, s->suppressed_sites);
    json_used(f, o->supp, 0, bytes, count);
    fprintf(f, ",\"held_by_libraries\":{\"bytes\":%" PRIu64 ",\"allocations\":%" PRIu64 ",\"sites\":%" PRIu64,
            s->held_bytes, s->held_allocations, s->held_sites);
    json_used(f, o->supp, 1, bytes, count);
    free(bytes);
    free(count);
    return 0;
}

/* Kept apart, the rows are (process, site) in process order, each with its pid and rank;
 * merged, one row per site. The summary has the totals, then "per_process". */
int report_json(FILE *f, struct model *m, const struct report_options *o, struct report_summary *s)
{
    struct report_summary local;
    if (!s)
        s = &local;
    memset(s, 0, sizeof *s);
    if (o->what == REPORT_DIFF)
        return json_diff(f, m, o);
    struct report_parts ps;
    if (report_query_parts(m, o, &ps) != 0)
        return -1;
    int split = report_split(m, o);
    struct model_table t;
    memset(&t, 0, sizeof t);
    const struct model_table *rows = &t;
    if (split)
        *s = ps.total;
    else if (ps.n == 1) { /* one process: its table is the report's */
        rows = &ps.p[0].t;
        *s = ps.p[0].s;
    } else {
        if (report_query(m, o, &t) != 0) {
            report_parts_free(&ps);
            return -1;
        }
        summarize_table(&t, s);
    }
    static const char *const source[] = {"leaks", "peak", "snapshot", "now", "diff"};
    fprintf(f, "{\"version\":%d,\"culeak\":\"%s\",\"source\":\"%s\",\"group\":\"%s\",", REPORT_JSON_VERSION,
            CULEAK_VERSION, source[o->what],
            model_group_name(o->group));
    report_json_processes(f, m, o);
    fprintf(f, ",\"%s\":[", o->what == REPORT_LEAKS ? "leaks" : "sites");
    static const char *const lists[] = {"", "],\"cache\":[", "],\"before_attach\":[", "],\"live_at_end\":["};
    for (int list = 0; list < 4; list++) {
        fputs(lists[list], f);
        int first = 1;
        if (split)
            for (int i = 0; i < ps.n; i++)
                json_rows(f, m, o, &ps.p[i].t, list, &first);
        else
            json_rows(f, m, o, rows, list, &first);
    }
    fputs("],", f);
    int pools = s->memory.pools != 0; /* a leak report has no blocks, but may have the pools' cache */
    for (int i = 0; i < ps.n && !pools; i++)
        for (size_t r = 0; r < ps.p[i].t.n && !pools; r++)
            pools = ps.p[i].t.rows[r].pool != MODEL_CACHE_NONE;
    if (pools) {
        int first = 1;
        fputs("\"pools\":[", f);
        if (split || ps.n == 1)
            for (int i = 0; i < ps.n; i++)
                json_pools(f, m, &ps.p[i].t, &first);
        else
            json_pools(f, m, rows, &first);
        fputs("],", f);
    }
    report_suspects_json(f, m, o);
    fputs(",\"summary\":{", f);
    json_summary(f, s);
    if (json_suppressed(f, m, o, s) != 0) {
        model_table_free(&t);
        report_parts_free(&ps);
        return -1;
    }
    fputs(",\"per_process\":[", f);
    for (int i = 0; i < ps.n; i++) {
        const struct model_process *p = model_process(m, ps.p[i].proc);
        fprintf(f, "%s{\"pid\":%" PRIu64 ",\"rank\":%d,", i ? "," : "", p->pid, p->rank);
        json_summary(f, &ps.p[i].s);
        if (o->what == REPORT_SNAPSHOT)
            fprintf(f, ",\"mark_seen\":%s", ps.p[i].present ? "true" : "false");
        putc('}', f);
    }
    fputs("]}}\n", f);
    model_table_free(&t);
    report_parts_free(&ps);
    return 0;
}
