/* JSON reports: {"processes": [...], "leaks" | "sites": [...], "cache": [...],
 * "summary": {...}} or, for diffs, {"processes", "diff": {...}}. */
#include "json.h"
#include "report_internal.h"

#include <inttypes.h>
#include <stdio.h>
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

static void json_stack(FILE *f, struct model *m, int proc, uint64_t stack, int depth)
{
    static struct model_frame frames[REPORT_MAX_FRAMES];
    size_t hidden;
    size_t n = report_stack(m, proc, stack, frames, REPORT_MAX_FRAMES, &hidden);
    if (depth > 0 && n > (size_t)depth)
        n = (size_t)depth;
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
    putc('}', f);
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
    fprintf(f, ",\"pid\":%" PRIu64 ",", model_process(m, r->stack_proc)->pid);
    json_stack(f, m, r->stack_proc, r->stack, o->depth);
    putc('}', f);
}

static void json_processes(FILE *f, struct model *m, const struct report_options *o)
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
                   ",\"peak_device_bytes\":%" PRIu64 ",\"failed_allocs\":%" PRIu64 ",\"unknown_frees\":%" PRIu64 "}",
                p->exited ? "true" : "false", p->truncated ? "true" : "false", p->corrupt ? "true" : "false",
                p->events, c.peak_bytes, p->failed_allocs, p->unknown_frees);
    }
    putc(']', f);
}

static int json_diff(FILE *f, struct model *m, const struct report_options *o)
{
    struct model_query q;
    model_query_init(&q);
    q.group = o->group;
    q.proc = o->proc;
    struct model_diff d;
    if (model_diff(m, o->diff_a, o->diff_b_is_now ? NULL : o->diff_b, &q, &d) != 0)
        return -1;
    fputs("{", f);
    json_processes(f, m, o);
    fputs(",\"diff\":{\"a\":", f);
    json_write_cstr(f, o->diff_a);
    fputs(",\"b\":", f);
    json_write_cstr(f, o->diff_b ? o->diff_b : "now");
    fprintf(f, ",\"delta_bytes\":%" PRId64 ",\"sites\":[", d.delta_bytes);
    for (size_t i = 0; i < d.n; i++) {
        const struct model_diff_row *r = &d.rows[i];
        fprintf(f, "%s{\"id\":%" PRIu32 ",\"bytes_a\":%" PRIu64 ",\"bytes_b\":%" PRIu64 ",\"count_a\":%" PRIu64
                   ",\"count_b\":%" PRIu64 ",\"delta_bytes\":%" PRId64 ",\"delta_count\":%" PRId64 ",\"text\":",
                i ? "," : "", r->id, r->bytes_a, r->bytes_b, r->count_a, r->count_b, r->delta_bytes, r->delta_count);
        json_write_cstr(f, r->text);
        fputs(",\"module\":", f);
        json_write_cstr(f, r->module);
        putc(',', f);
        json_stack(f, m, r->stack_proc, r->stack, o->depth);
        putc('}', f);
    }
    fprintf(f, "],\"new\":{\"bytes\":%" PRIu64 ",\"count\":%" PRIu64 ",\"stacks\":[", d.new_bytes, d.new_count);
    for (size_t i = 0; i < d.nnew; i++) {
        fprintf(f, "%s{\"pid\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"count\":%" PRIu64 ",\"first_seq\":%" PRIu64 ",",
                i ? "," : "", model_process(m, d.news[i].proc)->pid, d.news[i].bytes, d.news[i].count,
                d.news[i].first_seq);
        json_stack(f, m, d.news[i].proc, d.news[i].stack, o->depth);
        putc('}', f);
    }
    fputs("]}}}\n", f);
    model_diff_free(&d);
    return 0;
}

int report_json(FILE *f, struct model *m, const struct report_options *o, struct report_summary *s)
{
    struct report_summary local;
    if (!s)
        s = &local;
    memset(s, 0, sizeof *s);
    if (o->what == REPORT_DIFF)
        return json_diff(f, m, o);
    struct model_table t;
    if (report_query(m, o, &t) != 0)
        return -1;
    summarize_table(&t, s);
    static const char *const source[] = {"leaks", "peak", "snapshot", "now", "diff"};
    fprintf(f, "{\"source\":\"%s\",\"group\":\"%s\",", source[o->what], model_group_name(o->group));
    json_processes(f, m, o);
    fprintf(f, ",\"%s\":[", o->what == REPORT_LEAKS ? "leaks" : "sites");
    int first = 1;
    for (size_t i = 0; i < t.n; i++) {
        if (t.rows[i].cache != MODEL_CACHE_NONE)
            continue;
        if (!first)
            putc(',', f);
        first = 0;
        json_row(f, m, o, &t.rows[i]);
    }
    fputs("],\"cache\":[", f);
    first = 1;
    for (size_t i = 0; i < t.n; i++) {
        if (t.rows[i].cache == MODEL_CACHE_NONE)
            continue;
        if (!first)
            putc(',', f);
        first = 0;
        json_row(f, m, o, &t.rows[i]);
    }
    fprintf(f, "],\"summary\":{\"bytes\":%" PRIu64 ",\"allocations\":%" PRIu64 ",\"sites\":%" PRIu64
               ",\"reset_bytes\":%" PRIu64 ",\"reset_allocations\":%" PRIu64 ",\"cache_bytes\":%" PRIu64
               ",\"cache_allocations\":%" PRIu64 "}}\n",
            s->bytes, s->allocations, s->sites, s->reset_bytes, s->reset_allocations, s->cache_bytes,
            s->cache_allocations);
    model_table_free(&t);
    return 0;
}
