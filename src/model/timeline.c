/* Live-bytes timelines: per process and device, samples at a fixed interval that doubles
 * (merging neighbours) whenever the series is full, so a series always covers the whole
 * run in bounded memory. */
#include "model_internal.h"

#include <stdlib.h>
#include <string.h>

void series_free(struct series *s)
{
    free(s->s);
    memset(s, 0, sizeof *s);
}

static void halve(struct series *s)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n; i += 2, k++) {
        struct model_sample a = s->s[i];
        if (i + 1 < s->n) {
            const struct model_sample *b = &s->s[i + 1];
            a.live_bytes = b->live_bytes;
            a.events = b->events;
            if (b->max_bytes > a.max_bytes)
                a.max_bytes = b->max_bytes;
        }
        s->s[k] = a;
    }
    s->n = k;
    s->step *= 2;
}

void series_add(struct series *s, uint64_t t, uint64_t live, uint64_t events, unsigned cap, uint64_t step0)
{
    if (!s->s) {
        if (!(s->s = malloc(cap * sizeof *s->s)))
            return;
        s->cap = cap;
        s->step = step0;
    }
    if (s->n) {
        struct model_sample *last = &s->s[s->n - 1];
        if (t < last->t_ns + s->step) { /* same interval (or time went backwards) */
            last->live_bytes = live;
            last->events = events;
            if (live > last->max_bytes)
                last->max_bytes = live;
            return;
        }
    }
    while (s->n == s->cap) {
        halve(s);
        /* the newest interval may now cover t */
        struct model_sample *last = &s->s[s->n - 1];
        if (t < last->t_ns + s->step) {
            last->live_bytes = live;
            last->events = events;
            if (live > last->max_bytes)
                last->max_bytes = live;
            return;
        }
    }
    s->s[s->n++] = (struct model_sample){t - t % s->step, live, live, events};
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
    uint64_t dt = last->t_ns + s->step - (first->t_ns + s->step);
    if (dt == 0)
        return 0;
    return (double)(last->events - first->events) * 1e9 / (double)dt;
}
