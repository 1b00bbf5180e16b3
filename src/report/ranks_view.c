/* The cross-rank view over the ranks' summaries (ranks.h): their order, the ranks whose
 * growth differs from the rest (median and MAD), the rank that fills its device first,
 * the call sites merged across ranks by their text, and the heat map's marks. */
#include "ranks.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_rank(const void *a, const void *b)
{
    const struct rank_summary *x = a, *y = b;
    if (!x->error != !y->error)
        return x->error ? 1 : -1;
    if ((x->rank < 0) != (y->rank < 0))
        return x->rank < 0 ? 1 : -1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    int h = strcmp(x->host ? x->host : "", y->host ? y->host : "");
    if (h)
        return h;
    return x->pid < y->pid ? -1 : x->pid > y->pid ? 1 : strcmp(x->file, y->file);
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The lower median: of an even count, the lower middle value, so that of two ranks, one
 * flat and one growing, the flat one is the rest the other is judged against. */
static double median_of(double *v, size_t n)
{
    qsort(v, n, sizeof *v, by_double);
    return n == 0 ? 0 : v[(n - 1) / 2];
}

/* Median and MAD of the growths of the readable summaries, then which differ. */
static int judge(struct ranks_view *r, size_t ok)
{
    double *g = calloc(ok ? ok : 1, sizeof *g);
    if (!g)
        return -1;
    for (size_t i = 0; i < ok; i++)
        g[i] = (double)r->v[i].growth;
    r->median = median_of(g, ok);
    for (size_t i = 0; i < ok; i++)
        g[i] = fabs((double)r->v[i].growth - r->median);
    r->mad = median_of(g, ok);
    free(g);
    for (size_t i = 0; i < ok && ok > 1; i++) {
        double dev = fabs((double)r->v[i].growth - r->median);
        r->differs[i] = dev > RANKS_MAD_TIMES * RANKS_MAD_SCALE * r->mad && dev >= RANKS_GROWTH_FLOOR;
        r->ndiffer += (size_t)r->differs[i];
    }
    r->first_full = SIZE_MAX;
    for (size_t i = 0; i < ok; i++)
        if (r->v[i].forecast && (r->first_full == SIZE_MAX || r->v[i].fill_s < r->v[r->first_full].fill_s))
            r->first_full = i;
    return 0;
}

/* Sites by text: an open-addressing table of indices into r->sites. */
static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int merge_sites(struct ranks_view *r, size_t ok)
{
    size_t total = 0;
    for (size_t i = 0; i < ok; i++)
        total += r->v[i].nsites;
    size_t cap = 16;
    while (cap < 2 * total)
        cap *= 2;
    size_t *slot = malloc(cap * sizeof *slot);
    r->sites = calloc(total ? total : 1, sizeof *r->sites);
    if (!slot || !r->sites) {
        free(slot);
        return -1;
    }
    for (size_t k = 0; k < cap; k++)
        slot[k] = SIZE_MAX;
    int rc = 0;
    for (size_t i = 0; i < ok && rc == 0; i++)
        for (size_t j = 0; j < r->v[i].nsites && rc == 0; j++) {
            const struct rank_site *x = &r->v[i].sites[j];
            size_t k = hash_str(x->text) & (cap - 1);
            while (slot[k] != SIZE_MAX && strcmp(r->sites[slot[k]].text, x->text))
                k = (k + 1) & (cap - 1);
            if (slot[k] == SIZE_MAX) {
                slot[k] = r->nsites;
                r->sites[r->nsites++] = (struct ranks_site){.text = x->text, .first = i, .fastest = SIZE_MAX};
            }
            struct ranks_site *s = &r->sites[slot[k]];
            s->bytes += x->bytes;
            s->count += x->count;
            if (s->nranks == 0 || s->last != i) { /* a site is one row of a rank */
                s->nranks++;
                s->last = i;
                if (!s->which && !(s->which = calloc(RANKS_SITE_LIST, sizeof *s->which)))
                    rc = -1;
                else if (s->nwhich < RANKS_SITE_LIST)
                    s->which[s->nwhich++] = i;
            }
            if (x->per_mark > 0 && (s->fastest == SIZE_MAX || x->per_mark > s->per_mark)) {
                s->fastest = i;
                s->per_mark = x->per_mark;
            }
        }
    free(slot);
    return rc;
}

static int by_weight(const void *a, const void *b)
{
    const struct ranks_site *x = a, *y = b;
    if (x->per_mark != y->per_mark) /* growing first: what the view is for */
        return x->per_mark < y->per_mark ? 1 : -1;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? 1 : -1;
    if (x->nranks != y->nranks)
        return x->nranks < y->nranks ? 1 : -1;
    return strcmp(x->text, y->text);
}

/* The heat map's columns: the marks of the rank with the most, every k-th of them. */
static int pick_columns(struct ranks_view *r, size_t ok)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < ok; i++)
        if (r->v[i].nmarks && (best == SIZE_MAX || r->v[i].nmarks > r->v[best].nmarks))
            best = i;
    if (best == SIZE_MAX)
        return 0;
    size_t n = r->v[best].nmarks, want = n < RANKS_COLUMNS_MAX ? n : RANKS_COLUMNS_MAX;
    if (!(r->columns = calloc(want, sizeof *r->columns)))
        return -1;
    for (size_t c = 0; c < want; c++) { /* evenly, the first and the last kept */
        size_t k = want > 1 ? c * (n - 1) / (want - 1) : 0;
        r->columns[r->ncolumns++] = r->v[best].marks[k].label;
    }
    return 0;
}

uint64_t ranks_cell(const struct ranks_view *r, size_t i, size_t c, int *known)
{
    const struct rank_summary *s = &r->v[i];
    *known = 0;
    if (c >= r->ncolumns || s->error)
        return 0;
    /* ranks mark alike: the same label is near the same place */
    size_t n = s->nmarks, guess = r->ncolumns > 1 && n ? c * (n - 1) / (r->ncolumns - 1) : 0;
    for (size_t d = 0; d < n; d++) {
        size_t a = guess + d < n ? guess + d : SIZE_MAX, b = guess >= d ? guess - d : SIZE_MAX;
        if (a != SIZE_MAX && !strcmp(s->marks[a].label, r->columns[c]))
            return *known = 1, s->marks[a].live_bytes;
        if (b != SIZE_MAX && !strcmp(s->marks[b].label, r->columns[c]))
            return *known = 1, s->marks[b].live_bytes;
        if (a == SIZE_MAX && b == SIZE_MAX)
            break;
    }
    return 0;
}

int ranks_view_build(struct rank_summary *v, size_t n, struct ranks_view *r)
{
    memset(r, 0, sizeof *r);
    qsort(v, n, sizeof *v, by_rank);
    r->v = v;
    r->n = n;
    size_t ok = 0;
    while (ok < n && !v[ok].error)
        ok++;
    r->ok = ok;
    for (size_t i = 0; i < ok; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(v[i].host, v[j].host);
        r->hosts += !seen;
        r->leaked_bytes += v[i].leaked_bytes;
        r->leaked_count += v[i].leaked_count;
    }
    if (!(r->differs = calloc(n ? n : 1, sizeof *r->differs)) || judge(r, ok) != 0 || merge_sites(r, ok) != 0 ||
        pick_columns(r, ok) != 0) {
        ranks_view_free(r);
        return -1;
    }
    qsort(r->sites, r->nsites, sizeof *r->sites, by_weight);
    return 0;
}

void ranks_view_free(struct ranks_view *r)
{
    for (size_t i = 0; i < r->n; i++)
        rank_summary_free(&r->v[i]);
    for (size_t i = 0; i < r->nsites; i++)
        free(r->sites[i].which);
    free(r->v);
    free(r->differs);
    free(r->sites);
    free(r->columns);
    memset(r, 0, sizeof *r);
}

void ranks_name(const struct rank_summary *s, char *buf, size_t len)
{
    if (s->rank >= 0)
        snprintf(buf, len, "rank %d on %s", s->rank, s->host);
    else
        snprintf(buf, len, "pid %llu on %s", (unsigned long long)s->pid, s->host);
}
