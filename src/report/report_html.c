/* The HTML report: one self-contained page (report_html.html, compiled in) with the
 * picture of the model embedded as JSON; the page draws the timeline, the flame graph
 * and the sites table itself. Nothing is fetched: no scripts, fonts or styles from
 * elsewhere. */
#include "compare.h"
#include "common/json.h"
#include "picture.h"
#include "model/suppress.h"
#include "report_internal.h"
#include "model/suspects.h"
#include "common/wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern const char culeak_report_html_page[]; /* report_html.html, made a C string by the build */

#define DATA_SLOT "/*@CULEAK_DATA@*/"
#define MAX_MARKS 20000

static double ms_since(const struct model_process *p, uint64_t t_ns)
{
    return t_ns > p->start_monotonic_ns ? (double)(t_ns - p->start_monotonic_ns) / 1e6 : 0.0;
}

/* ,"holders":[{"by","blocks","bytes"}] of a site, and "at_marks":[{"mark","holders"}]
 * where walks at marks said they changed: for the sites table's column and the chain a
 * click shows. Said of a site's blocks, or of its other memory when it has no blocks. */
static void write_site_holders(FILE *f, struct model *m, const struct picture *pc, size_t i)
{
    const struct picture_site *s = &pc->sites[i];
    for (size_t k = 0; !s->pool && k < pc->nsites; k++)
        if (pc->sites[k].id == s->id && pc->sites[k].pool)
            return; /* its blocks' entry says it */
    struct model_holders h[8];
    size_t n = model_row_holders(m, MODEL_GROUP_SITE, s->id, h, 8);
    if (!n)
        return;
    fputs(",\"holders\":", f);
    report_json_holder_list(f, h, n);
    const struct model_holder_walk *w[REPORT_HOLDER_CHANGES];
    size_t total, nw = model_row_holder_changes(m, MODEL_GROUP_SITE, s->id, w, REPORT_HOLDER_CHANGES, &total);
    if (total < 2)
        return;
    fprintf(f, ",\"holders_changes\":%zu,\"at_marks\":[", total);
    for (size_t j = 0; j < nw; j++) {
        size_t k = model_row_holders_walk(m, MODEL_GROUP_SITE, s->id, w[j]->proc, w[j]->walk, h, 8);
        fputs(j ? ",{\"mark\":" : "{\"mark\":", f);
        json_write_cstr(f, w[j]->mark ? w[j]->mark : "");
        fputs(",\"holders\":", f);
        report_json_holder_list(f, h, k);
        putc('}', f);
    }
    putc(']', f);
}

static void write_processes(FILE *f, struct model *m)
{
    fputs("\"processes\":[", f);
    for (int i = 0; i < model_process_count(m); i++) {
        const struct model_process *p = model_process(m, i);
        fprintf(f, "%s{\"pid\":%" PRIu64 ",\"rank\":%d,\"exe\":", i ? "," : "", p->pid, p->rank);
        json_write_cstr(f, p->exe);
        fputs(",\"argv\":[", f);
        for (size_t k = 0; k < p->argc; k++) {
            if (k)
                putc(',', f);
            json_write_cstr(f, p->argv[k]);
        }
        fprintf(f, "],\"exited\":%s,\"exit_status\":", p->exited ? "true" : "false");
        if (p->exit_status >= 0)
            fprintf(f, "%d", p->exit_status >> 8 & 0xff);
        else
            fputs("null", f);
        fprintf(f, ",\"truncated\":%s,\"running\":%s,\"aggregated_s\":%g}", p->truncated ? "true" : "false",
                model_process_running(p) ? "true" : "false", (double)p->aggregated_ns / 1e9);
    }
    putc(']', f);
}

static void write_series(FILE *f, struct model *m, const char *key)
{
    struct model_sample *s = malloc(4096 * sizeof *s);
    fprintf(f, ",\"%s\":[", key);
    int first = 1;
    for (int i = 0; s && i < model_process_count(m); i++) {
        const struct model_process *p = model_process(m, i);
        int dev[64];
        int nd = model_devices(m, i, dev, 64);
        nd = nd > 64 ? 64 : nd;
        for (int k = -1; k < nd; k++) {
            if (k >= 0 && nd < 2) /* one device: its line is the total's */
                break;
            size_t n = model_timeline(m, i, k < 0 ? MODEL_ALL : dev[k], s, 4096);
            n = n > 4096 ? 4096 : n;
            fprintf(f, "%s{\"proc\":%d,\"device\":%d,\"t\":[", first ? "" : ",", i, k < 0 ? -1 : dev[k]);
            first = 0;
            for (size_t j = 0; j < n; j++)
                fprintf(f, "%s%.3f", j ? "," : "", ms_since(p, s[j].t_ns));
            fputs("],\"bytes\":[", f);
            for (size_t j = 0; j < n; j++)
                fprintf(f, "%s%" PRIu64, j ? "," : "", s[j].live_bytes);
            fputs("],\"max\":[", f);
            for (size_t j = 0; j < n; j++)
                fprintf(f, "%s%" PRIu64, j ? "," : "", s[j].max_bytes);
            fputs("],\"min\":[", f);
            for (size_t j = 0; j < n; j++)
                fprintf(f, "%s%" PRIu64, j ? "," : "", s[j].min_bytes);
            fputs("]}", f);
        }
    }
    putc(']', f);
    free(s);
}

static void write_marks(FILE *f, struct model *m)
{
    fputs(",\"marks\":[", f);
    int first = 1;
    for (int i = 0; i < model_process_count(m); i++) {
        const struct model_process *p = model_process(m, i);
        size_t n;
        const struct model_mark *mk = model_marks(m, i, &n);
        size_t step = n > MAX_MARKS ? (n + MAX_MARKS - 1) / MAX_MARKS : 1;
        for (size_t k = 0; k < n; k += step) {
            if (mk[k].flags & CULEAK_MARK_POP)
                continue;
            fprintf(f, "%s{\"proc\":%d,\"t\":%.3f,\"bytes\":%" PRIu64 ",\"label\":", first ? "" : ",", i,
                    ms_since(p, mk[k].t_ns), mk[k].live_bytes);
            json_write_cstr(f, mk[k].label);
            putc('}', f);
            first = 0;
        }
    }
    fputs("],\"failures\":[", f);
    size_t nf;
    const struct model_failure *fl = model_failures(m, &nf);
    for (size_t k = 0; k < nf; k++) {
        const struct model_process *p = model_process(m, fl[k].proc);
        fprintf(f, "%s{\"proc\":%d,\"t\":%.3f,\"size\":%" PRIu64 ",\"device\":%d,\"api\":\"%s\"}", k ? "," : "",
                fl[k].proc, p ? ms_since(p, fl[k].t_ns) : 0.0, fl[k].size, fl[k].device, culeak_api_name(fl[k].api));
    }
    putc(']', f);
}

static void write_values(FILE *f, const char *open, const struct picture_value *v, size_t n)
{
    fputs(open, f);
    for (size_t k = 0; k < n; k++)
        fprintf(f, "%s%" PRIu32 ",%" PRIu64 ",%" PRIu64, k ? "," : "", v[k].key, v[k].bytes, v[k].count);
    putc(']', f);
}

static void write_picture(FILE *f, struct model *m, const struct picture *pc)
{
    fputs(",\"names\":[", f);
    for (size_t i = 0; i < pc->nnames; i++) {
        if (i)
            putc(',', f);
        json_write_cstr(f, pc->names[i]);
    }
    fputs("],\"nodes\":[", f); /* parent, name, flags (1: folded, 2: a call site) */
    for (size_t i = 0; i < pc->nnodes; i++)
        fprintf(f, "%s%" PRIu32 ",%" PRIu32 ",%d", i ? "," : "", pc->nodes[i].parent, pc->nodes[i].name,
                (pc->nodes[i].folded ? 1 : 0) | (pc->nodes[i].site ? 2 : 0));
    fputs("],\"stacks\":[", f); /* proc, leaf node, site, pool (1: a pool's blocks) */
    for (size_t i = 0; i < pc->nstacks; i++)
        fprintf(f, "%s%d,%" PRIu32 ",%" PRIu32 ",%d", i ? "," : "", pc->stacks[i].proc, pc->stacks[i].leaf,
                pc->stacks[i].site, pc->stacks[i].pool);
    fputs("],\"sites\":[", f);
    for (size_t i = 0; i < pc->nsites; i++) {
        const struct picture_site *s = &pc->sites[i];
        fprintf(f, "%s{\"id\":%" PRIu32 ",\"text\":", i ? "," : "", s->id);
        json_write_cstr(f, s->text);
        fputs(",\"function\":", f);
        json_write_cstr(f, s->function);
        fputs(",\"file\":", f);
        json_write_cstr(f, s->file);
        fprintf(f, ",\"line\":%u,\"pool\":%d,\"module\":", s->line, s->pool);
        json_write_cstr(f, s->module);
        if (s->autograd_backward)
            fputs(",\"autograd_backward\":true", f);
        write_site_holders(f, m, pc, i);
        putc('}', f);
    }
    fputs("],\"moments\":[", f); /* v: stack, bytes, count, ...; s: site, bytes, count, ... */
    for (size_t i = 0; i < pc->nmoments; i++) {
        const struct picture_moment *mo = &pc->moments[i];
        const struct model_process *p = model_process(m, mo->proc);
        fprintf(f,
                "%s{\"proc\":%d,\"kind\":\"%s\",\"t\":%.3f,\"bytes\":%" PRIu64 ",\"pool_bytes\":%" PRIu64
                ",\"held_bytes\":%" PRIu64 ",\"reserved_bytes\":%" PRIu64 ",\"label\":",
                i ? "," : "", mo->proc, picture_moment_kind_name(mo->kind), ms_since(p, mo->t_ns), mo->bytes,
                mo->pool_bytes, mo->held_bytes, mo->reserved_bytes);
        json_write_cstr(f, mo->label);
        if (mo->has_stacks)
            write_values(f, ",\"v\":[", pc->values + mo->first, mo->n);
        write_values(f, ",\"s\":[", pc->values + mo->site_first, mo->site_n);
        putc('}', f);
    }
    putc(']', f);
}

/* ,"fill":{...} of a suspect whose device fills at its pace: what the timeline draws
 * (a dashed line from the device's used bytes now to its capacity) and says. */
static void write_fill(FILE *f, const struct model_suspect *su)
{
    if (!su->forecast || !su->free_bytes || su->free_bytes > su->total_bytes)
        return;
    char count[48], when[48] = "", text[160];
    model_format_count(count, sizeof count, su->fill_marks);
    if (su->interval_s > 0)
        model_format_duration(when, sizeof when, su->fill_s);
    model_suspect_fill_text(su, text, sizeof text);
    fprintf(f, ",\"fill\":{\"device\":%d,\"used\":%" PRIu64 ",\"total\":%" PRIu64 ",\"seconds\":%.3f,\"iterations\":",
            su->device, su->total_bytes - su->free_bytes, su->total_bytes, su->interval_s > 0 ? su->fill_s : 0.0);
    json_write_cstr(f, count);
    fputs(",\"when\":", f);
    json_write_cstr(f, when);
    fputs(",\"text\":", f);
    json_write_cstr(f, text);
    putc('}', f);
}

/* Growth suspects, their site an index into the picture's sites: drawn first in the table,
 * soonest to fill its device first; the first with a "fill" is drawn on the timeline. */
static void write_suspects(FILE *f, struct model *m, const struct picture *pc)
{
    fputs(",\"suspects\":[", f);
    struct model_suspects sus;
    if (model_suspects(m, MODEL_ALL, 0, &sus) == 0) {
        int first = 1;
        for (size_t i = 0; i < sus.n; i++) {
            const struct model_suspect *su = &sus.v[i];
            size_t k = 0;
            int pool = su->kind == CULEAK_KIND_BLOCK || su->kind == CULEAK_KIND_USER;
            while (k < pc->nsites && (pc->sites[k].id != su->site || pc->sites[k].pool != pool))
                k++;
            if (k == pc->nsites) /* a kind the picture does not draw (pinned host...) */
                continue;
            char forecast[256];
            model_suspect_forecast(su, forecast, sizeof forecast);
            fprintf(f, "%s{\"proc\":%d,\"site\":%zu,\"per_mark\":%" PRId64 ",\"rises\":%u,\"intervals\":%u,"
                       "\"since\":",
                    first ? "" : ",", su->proc, k, su->per_mark, su->rises, su->intervals);
            json_write_cstr(f, su->since_label);
            fputs(",\"forecast\":", f);
            json_write_cstr(f, forecast);
            write_fill(f, su);
            putc('}', f);
            first = 0;
        }
        model_suspects_free(&sus);
    }
    putc(']', f);
}

/* Has process proc a kept moment of mark `label`? */
static int has_mark_moment(const struct picture *pc, int proc, const char *label)
{
    for (size_t i = 0; i < pc->nmoments; i++)
        if (pc->moments[i].proc == proc && pc->moments[i].kind == PICTURE_MARK && pc->moments[i].label &&
            !strcmp(pc->moments[i].label, label))
            return 1;
    return 0;
}

/* ,"all":{...},"open":N: the header's figures over every process (leaked and live at the
 * end added up, the peak of all together) and the process the page opens on: the one that
 * leaked most (of those that reached a diff's A and B). */
static void write_all(FILE *f, struct model *m, const struct report_options *o, const struct picture *pc)
{
    int n = model_process_count(m), open = 0, diff = o && o->what == REPORT_DIFF && o->diff_a && o->diff_b;
    uint64_t leaked = 0, end = 0, best = 0;
    int found = 0;
    for (int i = 0; i < n; i++) {
        uint64_t mine = 0;
        for (size_t k = 0; k < pc->nmoments; k++) {
            const struct picture_moment *mo = &pc->moments[k];
            if (mo->proc != i)
                continue;
            if (mo->kind == PICTURE_LEAKS) /* a program's own pool's blocks leak too */
                mine = mo->bytes + mo->pool_bytes;
            else if (mo->kind == PICTURE_END)
                end += mo->bytes;
        }
        leaked += mine;
        if (diff && !(has_mark_moment(pc, i, o->diff_a) && has_mark_moment(pc, i, o->diff_b)))
            continue;
        if (!found || mine > best) {
            best = mine;
            open = i;
            found = 1;
        }
    }
    struct model_counter c;
    model_totals(m, MODEL_ALL, MODEL_ALL, MODEL_KIND_DEVICE_MEMORY, &c);
    fprintf(f, ",\"all\":{\"processes\":%d,\"leaked\":%" PRIu64 ",\"end\":%" PRIu64 ",\"peak\":%" PRIu64
               "},\"open\":%d",
            n, leaked, end, c.peak_bytes, open);
}

/* The page's data: JSON in which every '<' is escaped, so no string can end the script
 * element that holds it. */
/* ,"baseline":{...}: the run compared with (report --baseline): its names, its series (as
 * "series"), and what it leaked. */
static void write_baseline(FILE *f, struct model *base, const struct report_options *o, const char *name)
{
    struct report_options ro = *o;
    ro.what = REPORT_LEAKS;
    ro.proc = MODEL_ALL;
    ro.merge_processes = 1;
    struct report_summary sum;
    if (report_summarize(base, &ro, &sum) != 0)
        memset(&sum, 0, sizeof sum);
    struct model_counter c;
    model_totals(base, MODEL_ALL, MODEL_ALL, MODEL_KIND_DEVICE_MEMORY, &c);
    fputs(",\"baseline\":{\"name\":", f);
    json_write_cstr(f, name);
    fprintf(f, ",\"processes\":%d,\"leaked\":%" PRIu64 ",\"peak\":%" PRIu64, model_process_count(base), sum.bytes,
            c.peak_bytes);
    write_series(f, base, "series");
    putc('}', f);
}

static int write_data(FILE *out, struct model *m, const struct report_options *o, const struct picture *pc,
                      struct model *base, const char *base_name)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return -1;
    fputs("{\"version\":1,", f);
    write_processes(f, m);
    write_series(f, m, "series");
    write_marks(f, m);
    write_picture(f, m, pc);
    write_suspects(f, m, pc);
    write_all(f, m, o, pc);
    if (base)
        write_baseline(f, base, o, base_name);
    fputs(",\"diff\":", f);
    if (o && o->what == REPORT_DIFF && o->diff_a && o->diff_b) {
        fputs("{\"a\":", f);
        json_write_cstr(f, o->diff_a);
        fputs(",\"b\":", f);
        json_write_cstr(f, o->diff_b);
        putc('}', f);
    } else {
        fputs("null", f);
    }
    fputs("}", f);
    if (fclose(f) != 0) {
        free(buf);
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        if (buf[i] == '<')
            fputs("\\u003c", out);
        else
            putc(buf[i], out);
    }
    free(buf);
    return 0;
}

static int html_page(FILE *f, struct model *m, const struct report_options *o, struct model *base,
                     const char *base_name)
{
    struct picture pc;
    struct picture_options po = {0};
    if (o && o->what == REPORT_DIFF) { /* the page opens on A -> B: both keep their stacks */
        po.labels[0] = o->diff_a;
        po.labels[1] = o->diff_b;
    }
    if (o && suppressions_count(o->supp))
        po.supp = o->supp;
    if (picture_build(m, &po, &pc) != 0)
        return -1;
    const char *page = culeak_report_html_page, *slot = strstr(page, DATA_SLOT);
    int rc = -1;
    if (slot) {
        fwrite(page, 1, (size_t)(slot - page), f);
        rc = write_data(f, m, o, &pc, base, base_name);
        fputs(slot + strlen(DATA_SLOT), f);
    }
    picture_free(&pc);
    return rc || ferror(f) ? -1 : 0;
}

int report_html(FILE *f, struct model *m, const struct report_options *o) { return html_page(f, m, o, NULL, NULL); }

int report_html_compare(FILE *f, struct model *m, const struct report_options *o, struct model *base,
                        const char *const names[2])
{
    return html_page(f, m, o, base, names[0]);
}
