/* Live-bytes timelines: per process and device, every change at its own time while they
 * fit, then samples at a fixed interval that doubles (merging neighbours) whenever the
 * series is full, so a series always covers the whole run in bounded memory. */
#include "model_internal.h"

#include <stdlib.h>
#include <string.h>

void series_free(struct series *s)
{
    free(s->s);
    memset(s, 0, sizeof *s);
}

/* Folds the newer sample b into a (a covers both): the bytes at b's end, the extremes of both. */
static void merge(struct model_sample *a, const struct model_sample *b)
{
    a->live_bytes = b->live_bytes;
    a->events = b->events;
    if (b->max_bytes > a->max_bytes)
        a->max_bytes = b->max_bytes;
    if (b->min_bytes < a->min_bytes)
        a->min_bytes = b->min_bytes;
}

static void halve(struct series *s)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n; i += 2, k++) {
        struct model_sample a = s->s[i];
        if (i + 1 < s->n)
            merge(&a, &s->s[i + 1]);
        s->s[k] = a;
    }
    s->n = k;
    s->step *= 2;
}

/* The series held every change at its own time and is full: from now on it keeps time
 * buckets, the smallest step0 * 2^k that leaves at most half of it used. */
static void bucket(struct series *s, uint64_t step0)
{
    uint64_t span = s->s[s->n - 1].t_ns - s->s[0].t_ns, step = step0 ? step0 : 1;
    while (step < UINT64_MAX / 2 && span / step + 1 > s->cap / 2)
        step *= 2;
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        uint64_t start = s->s[i].t_ns - s->s[i].t_ns % step;
        if (k && s->s[k - 1].t_ns == start) {
            merge(&s->s[k - 1], &s->s[i]);
        } else {
            s->s[k] = s->s[i];
            s->s[k++].t_ns = start;
        }
    }
    s->n = k;
    s->step = step;
}

static void fold_into_last(struct series *s, uint64_t live, uint64_t events)
{
    struct model_sample *last = &s->s[s->n - 1];
    merge(last, &(struct model_sample){last->t_ns, live, live, events, live});
}

/* A series keeps every change at its own time (step 0) until it is full; then time buckets
 * of step ns, each with the bytes at its end and the least and most within it, the step
 * doubling (neighbours merged) whenever it is full again. A short run is drawn exactly;
 * a long one keeps its extremes. */
void series_add(struct series *s, uint64_t t, uint64_t live, uint64_t events, unsigned cap, uint64_t step0)
{
    if (!s->s) { /* small at first: most processes of a job of thousands change little */
        size_t first = cap < 64 ? cap : 64;
        if (!(s->s = malloc(first * sizeof *s->s)))
            return;
        s->cap = first;
        s->step = 0;
    }
    if (s->n) {
        struct model_sample *last = &s->s[s->n - 1];
        if (!s->step && (t <= last->t_ns || live == last->live_bytes)) {
            /* the same moment, or no change: a change is kept at its own time */
            fold_into_last(s, live, events);
            return;
        }
        if (s->step && t < last->t_ns + s->step) { /* same interval (or time went backwards) */
            fold_into_last(s, live, events);
            return;
        }
    }
    if (s->n == s->cap && s->cap < cap) { /* room grows to cap before changes share buckets */
        size_t more = s->cap * 2 < cap ? s->cap * 2 : cap;
        struct model_sample *ns = realloc(s->s, more * sizeof *ns);
        if (ns) {
            s->s = ns;
            s->cap = more;
        }
    }
    if (s->n == s->cap && !s->step)
        bucket(s, step0);
    while (s->n == s->cap)
        halve(s);
    if (s->n && s->step && t < s->s[s->n - 1].t_ns + s->step) { /* the newest interval may now cover t */
        fold_into_last(s, live, events);
        return;
    }
    uint64_t start = s->step ? t - t % s->step : t;
    s->s[s->n++] = (struct model_sample){start, live, live, events, live};
}

static const struct series *find_series(const struct model *m, int proc, int device)
{
    const struct process *p = model_proc(m, proc);
    if (!p)
        return NULL;
    if (device == MODEL_ALL)
        return &p->series[0];
    for (int i = 0; i < p->ndev; i++)
        if (p->devices[i] == device)
            return &p->series[i + 1];
    return NULL;
}

size_t model_timeline(const struct model *m, int proc, int device, struct model_sample *out, size_t max)
{
    const struct series *s = find_series(m, proc, device);
    if (!s)
        return 0;
    if (out && s->n)
        memcpy(out, s->s, (s->n < max ? s->n : max) * sizeof *out);
    return s->n;
}

double model_event_rate(const struct model *m, int proc, uint64_t window_ns)
{
    const struct series *s = find_series(m, proc, MODEL_ALL);
    if (!s || s->n < 2)
        return 0;
    if (!window_ns)
        window_ns = 1000000000ull;
    const struct model_sample *last = &s->s[s->n - 1];
    size_t i = s->n - 1;
    while (i > 0 && last->t_ns - s->s[i - 1].t_ns <= window_ns)
        i--;
    if (i == s->n - 1)
        i--;
    const struct model_sample *first = &s->s[i];
    uint64_t dt = last->t_ns - first->t_ns;
    if (dt == 0)
        return 0;
    return (double)(last->events - first->events) * 1e9 / (double)dt;
}
