/* The table of report formats (formats.h). */
#include "formats.h"
#include "torch_snapshot.h"

#include <string.h>

static int write_text(FILE *f, struct model *m, const struct report_options *o, struct report_summary *s)
{
    return report_text(f, m, o, s);
}

static int write_json(FILE *f, struct model *m, const struct report_options *o, struct report_summary *s)
{
    return report_json(f, m, o, s);
}

static int write_folded(FILE *f, struct model *m, const struct report_options *o, struct report_summary *s)
{
    (void)s;
    return report_folded(f, m, o);
}

static int write_suppressions(FILE *f, struct model *m, const struct report_options *o, struct report_summary *s)
{
    (void)s;
    return report_suppressions(f, m, o);
}

static int write_html(FILE *f, struct model *m, const struct report_options *o, struct report_summary *s)
{
    (void)s;
    return report_html(f, m, o);
}

static int write_pprof(FILE *f, struct model *m, const struct report_options *o, struct report_summary *s)
{
    (void)s;
    return report_pprof(f, m, o);
}

static int write_torch_snapshot(FILE *f, struct model *m, const struct report_options *o,
                                struct report_summary *s)
{
    (void)s;
    return report_torch_snapshot(f, m, o);
}

static int baseline_text(FILE *f, struct model *m, const struct report_options *o, struct model *base,
                         const struct compare *c, const char *const names[2])
{
    (void)m, (void)base;
    return compare_text(f, c, o, names);
}

static int baseline_json(FILE *f, struct model *m, const struct report_options *o, struct model *base,
                         const struct compare *c, const char *const names[2])
{
    (void)m, (void)base;
    return compare_json(f, c, o, names);
}

static int baseline_html(FILE *f, struct model *m, const struct report_options *o, struct model *base,
                         const struct compare *c, const char *const names[2])
{
    (void)c;
    return report_html_compare(f, m, o, base, names);
}

static const struct report_format formats[] = {
    {"text", "call sites with their stacks and a summary, as people read them",
     FORMAT_OTHER_SOURCES | FORMAT_DIFF | FORMAT_SUSPECTS | FORMAT_BASELINE | FORMAT_CHECK | FORMAT_RANKS,
     write_text, report_suspects_text, baseline_text, ranks_report_text},
    {"json", "the same as JSON (\"version\": 1, culeak(1) gives the schema)",
     FORMAT_OTHER_SOURCES | FORMAT_DIFF | FORMAT_SUSPECTS | FORMAT_BASELINE | FORMAT_CHECK | FORMAT_RANKS,
     write_json, report_suspects_json, baseline_json, ranks_report_json},
    {"folded", "one line of folded stack and bytes per stack (flame graph tools)", FORMAT_OTHER_SOURCES,
     write_folded, NULL, NULL, NULL},
    {"suppressions", "one suppression block per leaking call site (culeak-suppressions(5))", 0,
     write_suppressions, NULL, NULL, NULL},
    {"html", "one self-contained page: timeline, flame graph and call sites",
     FORMAT_OTHER_SOURCES | FORMAT_DIFF | FORMAT_BASELINE | FORMAT_EXPORT | FORMAT_RANKS, write_html, NULL,
     baseline_html, ranks_report_html},
    {"pprof", "gzipped profile.proto: go tool pprof, Pyroscope, Parca, speedscope, Perfetto",
     FORMAT_OTHER_SOURCES | FORMAT_DIFF | FORMAT_BINARY, write_pprof, NULL, NULL, NULL},
    {"torch-snapshot", "PyTorch's memory snapshot pickle: pytorch.org/memory_viz, torch.cuda._memory_viz",
     FORMAT_BINARY, write_torch_snapshot, NULL, NULL, NULL},
};

const struct report_format *report_format_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof formats / sizeof *formats; i++)
        if (strcmp(formats[i].name, name) == 0)
            return &formats[i];
    return NULL;
}

const char *report_format_list(unsigned use, char *buf, size_t len)
{
    size_t n = 0, count = 0, total = 0;
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
        total += (formats[i].use & use) == use;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof formats / sizeof *formats && n < len; i++) {
        if ((formats[i].use & use) != use)
            continue;
        const char *sep = count == 0 ? "" : count + 1 == total ? " or " : ", ";
        int k = snprintf(buf + n, len - n, "%s%s", sep, formats[i].name);
        n += k > 0 ? (size_t)k : 0;
        count++;
    }
    return buf;
}

const struct report_format *report_format_of_path(const char *path)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash))
        return NULL;
    const struct report_format *f = report_format_find(dot + 1);
    return f && (f->use & FORMAT_EXPORT) ? f : NULL;
}
