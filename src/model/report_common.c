/* What every report format shares: the query a report makes, sizes and kinds in words. */
#include "report_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void report_options_init(struct report_options *o)
{
    memset(o, 0, sizeof *o);
    o->what = REPORT_LEAKS;
    o->group = MODEL_GROUP_SITE;
    o->proc = MODEL_ALL;
}

void report_format_bytes(char *buf, size_t len, uint64_t bytes)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(buf, len, "%" PRIu64 " byte%s", bytes, bytes == 1 ? "" : "s");
        return;
    }
    double v = (double)bytes / 1024;
    int u = 0;
    while (v >= 1024 && u < 5) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, "%.1f %s (%" PRIu64 " bytes)", v, units[u], bytes);
}

void report_format_kinds(char *buf, size_t len, uint32_t kinds)
{
    size_t n = 0;
    buf[0] = 0;
    for (unsigned k = 0; k < CULEAK_KIND_COUNT && n < len; k++)
        if (kinds >> k & 1)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "+" : "", culeak_kind_name(k));
    if (!buf[0])
        snprintf(buf, len, "none");
}

int report_query(struct model *m, const struct report_options *o, struct model_table *t)
{
    struct model_query q;
    model_query_init(&q);
    q.group = o->group;
    q.proc = o->proc;
    q.only_live = 1;
    switch (o->what) {
    case REPORT_PEAK: q.source = MODEL_SOURCE_PEAK; break;
    case REPORT_SNAPSHOT:
        q.source = MODEL_SOURCE_SNAPSHOT;
        q.snapshot = o->snapshot;
        if (!o->snapshot || model_snapshot_find(m, o->snapshot) < 0)
            return -1;
        break;
    case REPORT_NOW: q.source = MODEL_SOURCE_NOW; break;
    default: q.source = MODEL_SOURCE_LEAKS; break;
    }
    return model_table_build(m, &q, t);
}

void summarize_table(const struct model_table *t, struct report_summary *s)
{
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < t->n; i++) {
        const struct model_row *r = &t->rows[i];
        if (r->cache != MODEL_CACHE_NONE) {
            s->cache_bytes += r->live_bytes;
            s->cache_allocations += r->live_count;
            s->cache_sites++;
        } else {
            s->bytes += r->live_bytes;
            s->allocations += r->live_count;
            s->sites++;
            s->reset_bytes += r->reset_bytes;
            s->reset_allocations += r->reset_count;
        }
    }
}

int report_summarize(struct model *m, const struct report_options *o, struct report_summary *s)
{
    struct model_table t;
    memset(s, 0, sizeof *s);
    if (report_query(m, o, &t) != 0)
        return -1;
    summarize_table(&t, s);
    model_table_free(&t);
    return 0;
}

/* Frames of a stack from the site outward: the innermost frames inside looked-through
 * modules are counted in *hidden, not returned. */
size_t report_stack(struct model *m, int proc, uint64_t stack, struct model_frame *out, size_t max, size_t *hidden)
{
    size_t n = model_stack_frames(m, proc, stack, out, max);
    if (n > max)
        n = max;
    size_t skip = 0;
    while (skip < n && out[skip].skipped)
        skip++;
    if (skip == n) /* all inside libraries: show them all */
        skip = 0;
    memmove(out, out + skip, (n - skip) * sizeof *out);
    *hidden = skip;
    return n - skip;
}
