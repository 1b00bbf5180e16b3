/* One rank's summary for the cross-rank view (ranks.h), taken from a model holding its
 * process, so that the model can be freed and the next recording read. */
#include "ranks.h"
#include "report_internal.h"
#include "common/wire.h"
#include "model/suspects.h"

#include <stdlib.h>
#include <string.h>

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

static int by_bytes(const void *a, const void *b)
{
    const struct rank_site *x = a, *y = b;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

/* The leak rows of a site (not a pool's segments, not memory from before an attach), the
 * most bytes first, at most RANK_SITES_MAX. */
static int take_sites(struct model *m, int proc, const struct report_options *o, struct rank_summary *s)
{
    struct report_options lo = *o;
    lo.what = REPORT_LEAKS;
    lo.group = MODEL_GROUP_SITE;
    lo.proc = proc;
    struct model_table t;
    if (report_query(m, &lo, &t) != 0)
        return -1;
    struct report_summary sum;
    summarize_table(&t, &sum);
    s->leaked_bytes = sum.bytes;
    s->leaked_count = sum.allocations;
    s->sites = calloc(t.n ? t.n : 1, sizeof *s->sites);
    for (size_t i = 0; s->sites && i < t.n; i++) {
        const struct model_row *r = &t.rows[i];
        if ((r->pool && r->cache == MODEL_CACHE_NONE) || r->cache != MODEL_CACHE_NONE || r->before_attach)
            continue;
        struct rank_site *x = &s->sites[s->nsites];
        if (!(x->text = dup_or_empty(r->text)))
            break;
        x->bytes = r->live_bytes;
        x->count = r->live_count;
        s->nsites++;
    }
    model_table_free(&t);
    if (!s->sites)
        return -1;
    qsort(s->sites, s->nsites, sizeof *s->sites, by_bytes);
    if (s->nsites > RANK_SITES_MAX) {
        for (size_t i = RANK_SITES_MAX; i < s->nsites; i++)
            free(s->sites[i].text);
        s->nsites = RANK_SITES_MAX;
    }
    return 0;
}

/* A suspect's growth on its site's row, or a row of its own (a site growing that is not
 * live at the end of the recording: freed at exit). */
static int add_growth(struct rank_summary *s, const char *text, int64_t per_mark)
{
    for (size_t i = 0; i < s->nsites; i++)
        if (!strcmp(s->sites[i].text, text)) {
            if (per_mark > s->sites[i].per_mark)
                s->sites[i].per_mark = per_mark;
            return 0;
        }
    struct rank_site *v = realloc(s->sites, (s->nsites + 1) * sizeof *v);
    if (!v)
        return -1;
    s->sites = v;
    v[s->nsites] = (struct rank_site){.text = strdup(text), .per_mark = per_mark};
    if (!v[s->nsites].text)
        return -1;
    s->nsites++;
    return 0;
}

/* Growth: the fastest suspect's; the forecast: the soonest to fill a device. */
static int take_suspects(struct model *m, int proc, struct rank_summary *s)
{
    struct model_suspects sus;
    if (model_suspects(m, proc, 1, &sus) != 0)
        return -1;
    const struct model_suspect *fast = NULL, *soon = NULL;
    int rc = 0;
    for (size_t i = 0; i < sus.n && rc == 0; i++) {
        const struct model_suspect *x = &sus.v[i];
        if (!fast || x->per_mark > fast->per_mark)
            fast = x;
        if (x->forecast && (!soon || x->fill_s < soon->fill_s))
            soon = x;
        rc = add_growth(s, x->text ? x->text : "?", x->per_mark);
    }
    if (rc == 0 && fast) {
        s->growth = fast->per_mark;
        s->suspect = dup_or_empty(fast->text);
        s->series = dup_or_empty(fast->series);
        rc = s->suspect && s->series ? 0 : -1;
    }
    if (soon) {
        s->forecast = 1;
        s->fill_device = soon->device;
        s->fill_s = soon->fill_s;
        s->fill_marks = soon->fill_marks;
    }
    model_suspects_free(&sus);
    return rc;
}

/* Live bytes at its marks (range ends aside); every k-th when there are more than
 * RANK_MARKS_MAX, k a power of two, so ranks with as many marks keep the same ones. */
static int take_marks(struct model *m, int proc, struct rank_summary *s)
{
    size_t n, kept = 0;
    const struct model_mark *mk = model_marks(m, proc, &n);
    for (size_t i = 0; i < n; i++)
        kept += !(mk[i].flags & CULEAK_MARK_POP);
    size_t step = 1;
    while (kept / step > RANK_MARKS_MAX)
        step *= 2;
    s->marks = calloc(kept / step + 1, sizeof *s->marks);
    if (!s->marks)
        return -1;
    for (size_t i = 0, k = 0; i < n; i++) {
        if (mk[i].flags & CULEAK_MARK_POP)
            continue;
        if (k++ % step)
            continue;
        if (!(s->marks[s->nmarks].label = dup_or_empty(mk[i].label)))
            return -1;
        s->marks[s->nmarks++].live_bytes = mk[i].live_bytes;
    }
    return 0;
}

static int take_samples(struct model *m, int proc, struct rank_summary *s)
{
    size_t n = model_timeline(m, proc, MODEL_ALL, NULL, 0);
    struct model_sample *all = calloc(n ? n : 1, sizeof *all);
    s->samples = calloc(RANK_SAMPLES_MAX, sizeof *s->samples);
    if (!all || !s->samples) {
        free(all);
        return -1;
    }
    n = model_timeline(m, proc, MODEL_ALL, all, n);
    size_t want = n < RANK_SAMPLES_MAX ? n : RANK_SAMPLES_MAX;
    for (size_t i = 0; i < want; i++) { /* evenly, the last one kept */
        size_t k = want > 1 ? i * (n - 1) / (want - 1) : n - 1;
        s->samples[i] = (struct rank_sample){all[k].t_ns, all[k].live_bytes};
    }
    s->nsamples = want;
    free(all);
    return 0;
}

int rank_summarize(struct model *m, int proc, const char *file, const struct report_options *o,
                   struct rank_summary *s)
{
    memset(s, 0, sizeof *s);
    const struct model_process *p = model_process(m, proc);
    s->rank = p->rank;
    s->pid = p->pid;
    s->unended = model_process_unended(p);
    s->truncated = p->truncated || p->corrupt;
    int dev[1];
    s->devices = model_devices(m, proc, dev, 1);
    s->device = s->devices > 0 ? dev[0] : -1;
    struct model_counter c;
    model_totals(m, proc, MODEL_ALL, MODEL_KIND_DEVICE_MEMORY, &c);
    s->peak_bytes = c.peak_bytes;
    s->live_bytes = c.live_bytes;
    if (!(s->file = strdup(file)) || !(s->host = dup_or_empty(p->host)) || take_sites(m, proc, o, s) != 0 ||
        take_suspects(m, proc, s) != 0 || take_marks(m, proc, s) != 0 || take_samples(m, proc, s) != 0) {
        rank_summary_free(s);
        return -1;
    }
    return 0;
}

void rank_summary_free(struct rank_summary *s)
{
    for (size_t i = 0; i < s->nsites; i++)
        free(s->sites[i].text);
    for (size_t i = 0; i < s->nmarks; i++)
        free(s->marks[i].label);
    free(s->sites);
    free(s->marks);
    free(s->samples);
    free(s->file);
    free(s->host);
    free(s->error);
    free(s->suspect);
    free(s->series);
    memset(s, 0, sizeof *s);
}
