/* Growth suspects in reports (suspects.h has the rule): `culeak report --suspects` as
 * text, and the "suspects" array every JSON report carries. */
#include "common/json.h"
#include "report_internal.h"
#include "model/suspects.h"
#include "common/text_escape.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *kind_words(int kind)
{
    return kind == MODEL_KIND_DEVICE_MEMORY ? "device memory" : culeak_kind_name((unsigned)kind);
}

/* Marks (range pops aside) of the process with the most: says why there is no verdict. */
static size_t most_marks(const struct model *m, const struct report_options *o)
{
    size_t best = 0;
    for (int i = 0; i < model_process_count(m); i++) {
        if (o->proc != MODEL_ALL && o->proc != i)
            continue;
        size_t n, k = 0;
        const struct model_mark *mk = model_marks(m, i, &n);
        for (size_t j = 0; j < n; j++)
            k += !(mk[j].flags & 2u); /* CULEAK_MARK_POP */
        if (k > best)
            best = k;
    }
    return best;
}

static void print_suspect(FILE *f, struct model *m, const struct report_options *o, const struct model_suspect *x)
{
    char per[32], live[32], low[32], name[512], fc[256];
    model_format_size(per, sizeof per, (double)x->per_mark);
    model_format_size(live, sizeof live, (double)x->live_bytes);
    model_format_size(low, sizeof low, (double)x->since_bytes);
    report_process_name(m, o, x->proc, name, sizeof name);
    char text[1200], label[512];
    fprintf(f, "\nGROWS +%s per iteration (%s) at %s [%s]\n", per, kind_words(x->kind),
            text_escape(text, sizeof text, x->text), name);
    char rose[96];
    model_suspect_rise_words(x, rose, sizeof rose);
    fprintf(f, "    %s live at mark '%s'; %s \"%s\"\n", live, text_escape(label, sizeof label, x->last_label),
            rose, text_escape(text, sizeof text, x->series));
    if (x->since_label)
        fprintf(f, "    growing since mark '%s' (%" PRIu64 " marks ago, %s then)\n",
                text_escape(label, sizeof label, x->since_label), x->since_marks, low);
    model_suspect_forecast(x, fc, sizeof fc);
    fprintf(f, "    %s\n", fc);
    report_print_stack(f, m, x->proc, x->stack, o->depth);
}

int report_suspects_text(FILE *f, struct model *m, const struct report_options *o)
{
    struct model_suspects s;
    if (model_suspects(m, o->proc, 1, &s) != 0)
        return -1;
    for (int i = 0; i < model_process_count(m); i++) {
        if (o->proc != MODEL_ALL && o->proc != i)
            continue;
        char name[512];
        report_process_name(m, o, i, name, sizeof name);
        const struct model_process *p = model_process(m, i);
        fprintf(f, "culeak: %s:", name);
        for (size_t a = 0; a < p->argc && a < 8; a++) {
            fputc(' ', f);
            text_write_escaped(f, p->argv[a]);
        }
        fputc('\n', f);
    }
    for (size_t i = 0; i < s.n; i++)
        print_suspect(f, m, o, &s.v[i]);
    fputc('\n', f);
    if (s.n) {
        char per[32];
        double total = 0;
        for (size_t i = 0; i < s.n; i++)
            total += (double)s.v[i].per_mark;
        model_format_size(per, sizeof per, total);
        fprintf(f, "SUSPECT SUMMARY: %zu call site%s grow%s, +%s per iteration in all\n", s.n, s.n == 1 ? "" : "s",
                s.n == 1 ? "s" : "", per);
    } else {
        size_t k = most_marks(m, o);
        fprintf(f, "SUSPECT SUMMARY: no call site grows at most iterations");
        if (k < MODEL_SUSPECT_MIN_INTERVALS + 1)
            fprintf(f, " (a verdict needs %d marks with one label pattern, such as \"iteration N\"; "
                       "the recordings have %zu)",
                    MODEL_SUSPECT_MIN_INTERVALS + 1, k);
        fputc('\n', f);
    }
    fputs("(a suspect: its live bytes rose at 8 of the last 10 marks of one label pattern, or at 80%\n"
          " of them when there are fewer, at least 4, and are higher than at the first of them)\n",
          f);
    model_suspects_free(&s);
    return 0;
}

int report_suspects_json(FILE *f, struct model *m, const struct report_options *o)
{
    struct model_suspects s;
    if (model_suspects(m, o->proc, 1, &s) != 0)
        return -1;
    fputs("\"suspects\":[", f);
    for (size_t i = 0; i < s.n; i++) {
        const struct model_suspect *x = &s.v[i];
        const struct model_process *p = model_process(m, x->proc);
        fprintf(f, "%s{\"id\":%" PRIu32 ",\"text\":", i ? "," : "", x->site);
        json_write_cstr(f, x->text);
        fputs(",\"module\":", f);
        json_write_cstr(f, x->module);
        fprintf(f, ",\"pid\":%" PRIu64 ",\"rank\":%d,\"kind\":", p->pid, p->rank);
        json_write_cstr(f, x->kind == MODEL_KIND_DEVICE_MEMORY ? "device_memory" : culeak_kind_name((unsigned)x->kind));
        fputs(",\"series\":", f);
        json_write_cstr(f, x->series);
        fprintf(f, ",\"bytes_per_iteration\":%" PRId64 ",\"rises\":%u,\"intervals\":%u,\"marks\":%" PRIu64
                   ",\"live_bytes\":%" PRIu64 ",\"stepwise\":%s,\"last_mark\":",
                x->per_mark, x->rises, x->intervals, x->marks, x->live_bytes, x->stepwise ? "true" : "false");
        json_write_cstr(f, x->last_label);
        fputs(",\"since_mark\":", f);
        json_write_cstr(f, x->since_label);
        fprintf(f, ",\"since_seq\":%" PRIu64 ",\"since_bytes\":%" PRIu64 ",\"marks_since\":%" PRIu64
                   ",\"seconds_per_iteration\":%.6f,\"forecast\":",
                x->since_seq, x->since_bytes, x->since_marks, x->interval_s);
        if (x->forecast)
            fprintf(f, "{\"device\":%d,\"free_bytes\":%" PRIu64 ",\"total_bytes\":%" PRIu64
                       ",\"iterations_to_full\":%.0f,\"seconds_to_full\":%.1f}",
                    x->device, x->free_bytes, x->total_bytes, x->fill_marks, x->fill_s);
        else
            fputs("null", f);
        fprintf(f, ",\"running\":%s,", x->running ? "true" : "false");
        report_json_stack(f, m, x->proc, x->stack, o->depth); /* every frame: it is data */
        putc('}', f);
    }
    putc(']', f);
    model_suspects_free(&s);
    return 0;
}
