/* Two runs compared (compare.h): each run's sites (every process added up) keyed by their
 * names, the keys merged in order, then the rows written as text or JSON. */
#include "compare.h"
#include "common/json.h"
#include "report_internal.h"
#include "model/suspects.h"
#include "common/text_escape.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

const char *compare_change_name(enum compare_change c)
{
    static const char *const names[] = {"same", "new", "gone", "grown", "shrunk"};
    return (unsigned)c < sizeof names / sizeof *names ? names[c] : "?";
}

/* One site of one run, before the runs are merged. */
struct entry {
    char *key;
    int run;
    const struct model_row *row;
    int suspect;
};

static const char *base_name(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : path ? path : "?";
}

/* What matches a site in the other run: its names, not its address. */
static char *site_key(const struct model_row *r)
{
    char *k;
    int blocks = r->kinds == 1u << CULEAK_KIND_BLOCK, n;
    if (r->function && r->file)
        n = asprintf(&k, "%d\x1f%s\x1f%s:%u", blocks, r->function, r->file, r->line);
    else if (r->function)
        n = asprintf(&k, "%d\x1f%s\x1f%s", blocks, r->function, base_name(r->module));
    else
        n = asprintf(&k, "%d\x1f%s", blocks, r->text ? r->text : "?");
    return n < 0 ? NULL : k;
}

static int by_key(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : x->run - y->run;
}

static int by_change(const void *a, const void *b)
{
    const struct compare_row *x = a, *y = b;
    int sx = x->change == COMPARE_SAME, sy = y->change == COMPARE_SAME;
    if (sx != sy)
        return sx - sy;
    if (x->delta_bytes != y->delta_bytes)
        return x->delta_bytes > y->delta_bytes ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* Is the table row a growth suspect of its run? */
static int row_suspect(const struct model_suspects *sus, const struct model_row *r)
{
    int blocks = r->kinds == 1u << CULEAK_KIND_BLOCK;
    for (size_t i = 0; i < sus->n; i++) {
        int sb = sus->v[i].kind == CULEAK_KIND_BLOCK || sus->v[i].kind == CULEAK_KIND_USER;
        if (sus->v[i].site == r->id && sb == blocks)
            return 1;
    }
    return 0;
}

static void take_suspects(struct compare *c, int run, const struct model_suspects *sus)
{
    struct compare_suspect *v = realloc(c->suspects, (c->nsuspects + sus->n + 1) * sizeof *v);
    if (!v)
        return;
    c->suspects = v;
    for (size_t i = 0; i < sus->n; i++) {
        struct compare_suspect *s = &c->suspects[c->nsuspects++];
        s->run = run;
        s->text = sus->v[i].text ? sus->v[i].text : "?";
        s->per_mark = sus->v[i].per_mark;
        model_suspect_forecast(&sus->v[i], s->forecast, sizeof s->forecast);
    }
}

int compare_runs(struct model *a, struct model *b, const struct report_options *o, struct compare *c)
{
    memset(c, 0, sizeof *c);
    c->m[0] = a;
    c->m[1] = b;
    struct report_options ro = *o;
    ro.group = MODEL_GROUP_SITE;
    ro.proc = MODEL_ALL;
    if (ro.what != REPORT_LEAKS && ro.what != REPORT_PEAK)
        return -1;
    struct model_table t[2];
    struct model_suspects sus[2];
    memset(t, 0, sizeof t);
    memset(sus, 0, sizeof sus);
    struct entry *e = NULL;
    size_t ne = 0;
    int rc = -1;
    for (int run = 0; run < 2; run++) {
        struct model *m = c->m[run];
        if (report_query(m, &ro, &t[run]) != 0)
            goto out;
        for (size_t i = 0; i < t[run].n; i++) /* a run's bytes, whose words say which (run_what) */
            t[run].rows[i].unended = 0;
        summarize_table(&t[run], &c->sum[run]);
        if (model_suspects(m, MODEL_ALL, 1, &sus[run]) != 0)
            goto out;
        take_suspects(c, run, &sus[run]);
    }
    if (!(e = calloc(t[0].n + t[1].n + 1, sizeof *e)))
        goto out;
    for (int run = 0; run < 2; run++)
        for (size_t i = 0; i < t[run].n; i++) {
            const struct model_row *r = &t[run].rows[i];
            if (r->cache != MODEL_CACHE_NONE || r->pool || r->before_attach) /* as the leak summary */
                continue;
            if (!(e[ne].key = site_key(r)))
                goto out;
            e[ne].run = run;
            e[ne].row = r;
            e[ne++].suspect = row_suspect(&sus[run], r);
        }
    qsort(e, ne, sizeof *e, by_key);
    if (!(c->rows = calloc(ne + 1, sizeof *c->rows)))
        goto out;
    for (size_t i = 0; i < ne;) {
        struct compare_row *cr = &c->rows[c->n++];
        const char *key = e[i].key;
        if (!(cr->key = strdup(key)))
            goto out;
        cr->side[0].proc = cr->side[1].proc = -1;
        for (; i < ne && !strcmp(e[i].key, key); i++) {
            const struct model_row *r = e[i].row;
            struct compare_side *s = &cr->side[e[i].run];
            if (s->proc < 0 || r->live_bytes > 0) { /* the first, or one with more to show */
                s->proc = r->stack_proc;
                s->stack = r->stack;
            }
            s->bytes += r->live_bytes;
            s->count += r->live_count;
            s->suspect |= e[i].suspect;
            if (!cr->text || e[i].run == 1) {
                cr->text = r->text;
                cr->function = r->function;
                cr->file = r->file;
                cr->line = r->line;
                cr->module = r->module;
                cr->blocks = r->kinds == 1u << CULEAK_KIND_BLOCK;
            }
        }
        cr->delta_bytes = (int64_t)cr->side[1].bytes - (int64_t)cr->side[0].bytes;
        cr->delta_count = (int64_t)cr->side[1].count - (int64_t)cr->side[0].count;
        if (!cr->side[0].count && cr->side[1].count)
            cr->change = COMPARE_NEW;
        else if (cr->side[0].count && !cr->side[1].count)
            cr->change = COMPARE_GONE;
        else if (cr->delta_bytes > 0 || (!cr->delta_bytes && cr->delta_count > 0))
            cr->change = COMPARE_GROWN;
        else if (cr->delta_bytes < 0 || cr->delta_count < 0)
            cr->change = COMPARE_SHRUNK;
        else
            cr->change = COMPARE_SAME;
        c->changes[cr->change]++;
    }
    qsort(c->rows, c->n, sizeof *c->rows, by_change);
    c->delta_bytes = (int64_t)c->sum[1].bytes - (int64_t)c->sum[0].bytes;
    c->delta_count = (int64_t)c->sum[1].allocations - (int64_t)c->sum[0].allocations;
    rc = 0;
out:
    for (size_t i = 0; i < ne; i++)
        free(e[i].key);
    free(e);
    for (int run = 0; run < 2; run++) {
        /* the rows' strings are the models'; the tables go */
        model_table_free(&t[run]);
        model_suspects_free(&sus[run]);
    }
    if (rc)
        compare_free(c);
    return rc;
}

void compare_free(struct compare *c)
{
    for (size_t i = 0; c->rows && i < c->n; i++)
        free((char *)c->rows[i].key);
    free(c->rows);
    free(c->suspects);
    memset(c, 0, sizeof *c);
}

/* "+2.0 MiB (2097152 bytes)" */
static void signed_bytes(char *buf, size_t len, int64_t delta)
{
    char b[60];
    report_format_bytes(b, sizeof b, (uint64_t)(delta < 0 ? -delta : delta));
    snprintf(buf, len, "%s%s", delta < 0 ? "-" : delta > 0 ? "+" : "", b);
}

/* What a run's bytes are: leaked at its exit, or still live: in a job that runs on (the
 * console's), or in a recording that ends before its process did (saved mid-run, cut). */
static const char *run_what(const struct compare *c, const struct report_options *o, int run)
{
    if (o->what == REPORT_PEAK)
        return "live at the peak";
    int running = 0, unended = 0;
    for (int i = 0; i < model_process_count(c->m[run]); i++) {
        const struct model_process *p = model_process(c->m[run], i);
        running |= model_process_running(p);
        unended |= !p->exited;
    }
    return running ? "live now" : unended ? "live when the recording ends" : "leaked";
}

static void run_line(FILE *f, const struct compare *c, const struct report_options *o, int run, const char *name)
{
    const struct report_summary *s = &c->sum[run];
    fprintf(f, "culeak: %s ", run ? "after:   " : "baseline:");
    text_write_escaped(f, name);
    fprintf(f, ": %d process%s, %" PRIu64 " bytes %s in %" PRIu64 " allocations from %" PRIu64 " call sites\n",
            model_process_count(c->m[run]), model_process_count(c->m[run]) == 1 ? "" : "es", s->bytes,
            run_what(c, o, run), s->allocations, s->sites);
}

static void print_suspects(FILE *f, const struct compare *c, int run)
{
    size_t n = 0;
    for (size_t i = 0; i < c->nsuspects; i++)
        n += c->suspects[i].run == run;
    fprintf(f, "growth suspects %s:%s\n", run ? "after" : "of the baseline", n ? "" : " none");
    for (size_t i = 0; i < c->nsuspects; i++) {
        if (c->suspects[i].run != run)
            continue;
        fputs("  ", f);
        text_write_escaped(f, c->suspects[i].text);
        fputs(": ", f);
        text_write_escaped(f, c->suspects[i].forecast);
        fputc('\n', f);
    }
}

int compare_text(FILE *f, const struct compare *c, const struct report_options *o, const char *const names[2])
{
    run_line(f, c, o, 0, names[0]);
    run_line(f, c, o, 1, names[1]);
    for (size_t i = 0; i < c->n; i++) {
        const struct compare_row *r = &c->rows[i];
        if (r->change == COMPARE_SAME)
            continue;
        char d[64];
        signed_bytes(d, sizeof d, r->delta_bytes);
        const char *word[] = {"SAME", "NEW", "GONE", "GROWN", "SHRUNK"};
        fprintf(f, "\n%s %s (%" PRIu64 " bytes in %" PRIu64 " allocations -> %" PRIu64 " bytes in %" PRIu64
                   ") from ",
                word[r->change], d, r->side[0].bytes, r->side[0].count, r->side[1].bytes, r->side[1].count);
        text_write_escaped(f, r->text);
        if (r->side[1].suspect || r->side[0].suspect)
            fprintf(f, " [growth suspect %s]", r->side[1].suspect && r->side[0].suspect ? "in both runs"
                                               : r->side[1].suspect                     ? "after"
                                                                                        : "of the baseline");
        fputc('\n', f);
        int run = r->side[1].proc >= 0 && r->change != COMPARE_GONE ? 1 : 0;
        if (r->side[run].proc >= 0)
            report_print_stack(f, c->m[run], r->side[run].proc, r->side[run].stack, o->depth);
    }
    fputc('\n', f);
    print_suspects(f, c, 0);
    print_suspects(f, c, 1);
    char d[64];
    report_format_bytes(d, sizeof d, (uint64_t)(c->delta_bytes < 0 ? -c->delta_bytes : c->delta_bytes));
    /* "live now 2.0 MiB more than the baseline leaked": each run's word where they differ */
    const char *what = run_what(c, o, 1), *base = run_what(c, o, 0), *sep = strcmp(what, base) ? " " : "";
    if (!*sep)
        base = "";
    if (c->delta_bytes)
        fprintf(f, "COMPARE SUMMARY: %s %s %s than the baseline%s%s", what, d, c->delta_bytes > 0 ? "more" : "less",
                sep, base);
    else
        fprintf(f, "COMPARE SUMMARY: %s as much as the baseline%s%s", what, sep, base);
    fprintf(f, " (%" PRIu64 " -> %" PRIu64 " bytes, %" PRIu64 " -> %" PRIu64
               " allocations): %zu call sites new, %zu gone, %zu grown, %zu shrunk, %zu the same\n",
            c->sum[0].bytes, c->sum[1].bytes, c->sum[0].allocations, c->sum[1].allocations, c->changes[COMPARE_NEW],
            c->changes[COMPARE_GONE], c->changes[COMPARE_GROWN], c->changes[COMPARE_SHRUNK], c->changes[COMPARE_SAME]);
    return ferror(f) ? -1 : 0;
}

static void json_run(FILE *f, const struct compare *c, int run, const char *name)
{
    const struct report_summary *s = &c->sum[run];
    fputs("{\"recordings\":", f);
    json_write_cstr(f, name);
    fprintf(f, ",\"processes\":%d,\"bytes\":%" PRIu64 ",\"allocations\":%" PRIu64 ",\"sites\":%" PRIu64
               ",\"suspects\":[",
            model_process_count(c->m[run]), s->bytes, s->allocations, s->sites);
    int first = 1;
    for (size_t i = 0; i < c->nsuspects; i++) {
        if (c->suspects[i].run != run)
            continue;
        fputs(first ? "{\"site\":" : ",{\"site\":", f);
        first = 0;
        json_write_cstr(f, c->suspects[i].text);
        fprintf(f, ",\"per_mark\":%" PRId64 ",\"forecast\":", c->suspects[i].per_mark);
        json_write_cstr(f, c->suspects[i].forecast);
        putc('}', f);
    }
    fputs("]}", f);
}

int compare_json(FILE *f, const struct compare *c, const struct report_options *o, const char *const names[2])
{
    fprintf(f, "{\"version\":%d,\"report\":\"%s\",\"baseline\":", REPORT_JSON_VERSION,
            o->what == REPORT_PEAK ? "peak" : "leaks");
    json_run(f, c, 0, names[0]);
    fputs(",\"after\":", f);
    json_run(f, c, 1, names[1]);
    fprintf(f, ",\"delta_bytes\":%" PRId64 ",\"delta_allocations\":%" PRId64 ",\"changes\":{", c->delta_bytes,
            c->delta_count);
    for (int k = 0; k < 5; k++)
        fprintf(f, "%s\"%s\":%zu", k ? "," : "", compare_change_name((enum compare_change)k), c->changes[k]);
    fputs("},\"sites\":[", f);
    for (size_t i = 0; i < c->n; i++) {
        const struct compare_row *r = &c->rows[i];
        fprintf(f, "%s{\"change\":\"%s\",\"text\":", i ? "," : "", compare_change_name(r->change));
        json_write_cstr(f, r->text);
        fputs(",\"function\":", f);
        json_write_cstr(f, r->function);
        fputs(",\"file\":", f);
        json_write_cstr(f, r->file);
        fprintf(f, ",\"line\":%u,\"module\":", r->line);
        json_write_cstr(f, r->module);
        fprintf(f, ",\"blocks\":%s,\"delta_bytes\":%" PRId64 ",\"delta_allocations\":%" PRId64, r->blocks ? "true" : "false",
                r->delta_bytes, r->delta_count);
        for (int run = 0; run < 2; run++)
            fprintf(f, ",\"%s\":{\"bytes\":%" PRIu64 ",\"allocations\":%" PRIu64 ",\"suspect\":%s}",
                    run ? "after" : "baseline", r->side[run].bytes, r->side[run].count,
                    r->side[run].suspect ? "true" : "false");
        int run = r->side[1].proc >= 0 && r->change != COMPARE_GONE ? 1 : 0;
        if (r->side[run].proc >= 0) {
            putc(',', f);
            report_json_stack(f, c->m[run], r->side[run].proc, r->side[run].stack, o->depth);
        }
        putc('}', f);
    }
    fputs("]}\n", f);
    return ferror(f) ? -1 : 0;
}
