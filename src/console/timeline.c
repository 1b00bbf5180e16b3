/* Recordings merged into one timeline and replayed into the tracker. */
#include "timeline.h"
#include "apis.h"
#include "fmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct loader {
    struct timeline *tl;
    struct tracker *t;
    struct proc *p;
    uint64_t t0_real, t0_mono;
    size_t first;           /* first entry of this file */
};

static struct tl_entry *push(struct timeline *tl)
{
    if (tl->n == tl->cap) {
        size_t cap = tl->cap ? tl->cap * 2 : 4096;
        struct tl_entry *v = realloc(tl->v, cap * sizeof *v);
        if (!v)
            return NULL;
        tl->v = v;
        tl->cap = cap;
    }
    struct tl_entry *e = &tl->v[tl->n++];
    memset(e, 0, sizeof *e);
    return e;
}

static int on_hello(void *ctx, const struct culeak_hello *h)
{
    struct loader *l = ctx;
    l->p = tracker_add_proc(l->t);
    if (!l->p)
        return 1;
    track_hello(l->t, l->p, h);
    l->t0_real = h->realtime_ns;
    l->t0_mono = h->monotonic_ns;
    return 0;
}

static int on_modules(void *ctx, const struct culeak_modules *m)
{
    struct loader *l = ctx;
    if (l->p)
        track_modules(l->t, l->p, m);
    return 0;
}

static int on_frame(void *ctx, uint64_t id, uint64_t parent, uint64_t ip)
{
    struct loader *l = ctx;
    if (l->p)
        track_frame(l->p, id, parent, ip);
    return 0;
}

/* Absolute wall time of a process time, in ns. */
static double wall(const struct loader *l, uint64_t t_ns) { return (double)l->t0_real + (double)(t_ns - l->t0_mono); }

static int on_event(void *ctx, const struct culeak_event *e)
{
    struct loader *l = ctx;
    if (!l->p)
        return 0;
    struct tl_entry *x = push(l->tl);
    if (!x)
        return 1;
    x->t = wall(l, e->t_ns);
    x->proc = l->p->idx;
    x->e = *e;
    return 0;
}

static int on_mark(void *ctx, const struct culeak_mark *m)
{
    struct loader *l = ctx;
    struct timeline *tl = l->tl;
    if (!l->p)
        return 0;
    if (tl->nlabels == tl->caplabels) {
        size_t cap = tl->caplabels ? tl->caplabels * 2 : 64;
        char **v = realloc(tl->labels, cap * sizeof *v);
        if (!v)
            return 1;
        tl->labels = v;
        tl->caplabels = cap;
    }
    tl->labels[tl->nlabels] = strndup(m->label.p, m->label.n);
    struct tl_entry *x = push(tl);
    if (!x)
        return 1;
    x->t = wall(l, m->t_ns);
    x->proc = l->p->idx;
    x->is_mark = 1;
    x->label = (uint32_t)tl->nlabels++;
    return 0;
}

static int on_exit_rec(void *ctx, const struct culeak_exit *x)
{
    struct loader *l = ctx;
    if (l->p)
        l->p->state = PROC_EXITED;
    (void)x;
    return 0;
}

static int by_time(const void *a, const void *b)
{
    const struct tl_entry *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->proc != y->proc)
        return x->proc - y->proc;
    return x->e.seq < y->e.seq ? -1 : x->e.seq > y->e.seq;
}

static void apply(struct timeline *tl, struct tracker *t, size_t i)
{
    const struct tl_entry *x = &tl->v[i];
    if (!x->is_mark)
        track_event(t, t->procs[x->proc], &x->e);
}

int timeline_load(struct timeline *tl, struct tracker *t, char **files, int nfiles, char *err, size_t errlen)
{
    memset(tl, 0, sizeof *tl);
    tl->paths = files;
    tl->npaths = nfiles;
    for (int i = 0; i < nfiles; i++) {
        struct loader l = {.tl = tl, .t = t, .first = tl->n};
        struct culeak_sink sink = {.ctx = &l, .hello = on_hello, .modules = on_modules, .frame = on_frame,
                                   .event = on_event, .mark = on_mark, .exit = on_exit_rec};
        char e[256];
        int rc = culeak_decode_file(files[i], &sink, e, sizeof e);
        if (rc < 0) {
            snprintf(err, errlen, "%s: %s", files[i], e);
            return -1;
        }
        if (l.p && l.p->state != PROC_EXITED)
            l.p->state = PROC_GONE;
    }
    double t0 = tl->n ? tl->v[0].t : 0;
    for (size_t i = 0; i < tl->n; i++)
        if (tl->v[i].t < t0)
            t0 = tl->v[i].t;
    for (size_t i = 0; i < tl->n; i++)
        tl->v[i].t = (tl->v[i].t - t0) / 1e9;
    qsort(tl->v, tl->n, sizeof *tl->v, by_time);
    /* one pass: the peak of live bytes and the first failed allocation */
    tl->oom_pos = tl->n;
    tracker_reset_counts(t);
    for (size_t i = 0; i < tl->n; i++) {
        apply(tl, t, i);
        const struct tl_entry *x = &tl->v[i];
        if (!x->is_mark && x->e.op == CULEAK_OP_ALLOC && x->e.result != 0 && tl->oom_pos == tl->n)
            tl->oom_pos = i + 1;
        if (t->live_bytes > tl->peak_bytes) {
            tl->peak_bytes = t->live_bytes;
            tl->peak_pos = i + 1;
        }
    }
    tl->pos = tl->n;
    return 0;
}

void timeline_seek(struct timeline *tl, struct tracker *t, size_t pos)
{
    if (pos > tl->n)
        pos = tl->n;
    if (pos < tl->pos) {
        tracker_reset_counts(t);
        tl->pos = 0;
    }
    while (tl->pos < pos)
        apply(tl, t, tl->pos++);
}

long timeline_find(const struct timeline *tl, const char *what, char *err, size_t errlen)
{
    if (strcmp(what, "end") == 0)
        return (long)tl->n;
    if (strcmp(what, "start") == 0)
        return 0;
    if (strcmp(what, "peak") == 0)
        return (long)tl->peak_pos;
    if (strcmp(what, "oom") == 0) {
        if (tl->oom_pos == tl->n && (tl->n == 0 || tl->v[tl->n - 1].is_mark || tl->v[tl->n - 1].e.result == 0)) {
            snprintf(err, errlen, "no allocation failed in these recordings");
            return -1;
        }
        return (long)tl->oom_pos;
    }
    for (size_t i = 0; i < tl->n; i++) /* a mark: stop right after it */
        if (tl->v[i].is_mark && strcmp(tl->labels[tl->v[i].label], what) == 0)
            return (long)i + 1;
    double s;
    if (parse_seconds(what, &s) == 0) {
        size_t i = 0;
        while (i < tl->n && tl->v[i].t <= s)
            i++;
        return (long)i;
    }
    snprintf(err, errlen, "no mark named '%s' (goto MARK|TIME|peak|oom|start|end)", what);
    return -1;
}

void timeline_describe(const struct timeline *tl, char *buf, size_t len)
{
    double t = tl->pos && tl->pos <= tl->n ? tl->v[tl->pos - 1].t : 0;
    char d[32];
    fmt_duration(d, sizeof d, t);
    const char *where = tl->pos == tl->n ? "end" : tl->pos == tl->peak_pos ? "peak" : tl->pos == 0 ? "start" : "";
    snprintf(buf, len, "at %s event %zu/%zu%s%s", d, tl->pos, tl->n, where[0] ? " " : "", where);
}

void timeline_free(struct timeline *tl)
{
    for (size_t i = 0; i < tl->nlabels; i++)
        free(tl->labels[i]);
    free(tl->labels);
    free(tl->v);
    memset(tl, 0, sizeof *tl);
}
