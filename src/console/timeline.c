/* Recordings in the model, and the positions of `goto`. */
#include "timeline.h"
#include "common/decode.h"
#include "fmt.h"
#include "common/strpool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- pass over the files before loading: mark labels, event count, start time ---- */

struct scan {
    struct timeline *tl;
    uint64_t real0, mono0; /* the stream's process start */
    uint64_t seq;          /* the stream's highest event or mark number */
};

static void scan_time(struct scan *sc, uint64_t t_ns)
{
    uint64_t wall = sc->real0 + (t_ns - sc->mono0);
    if (wall > sc->tl->t_end_real)
        sc->tl->t_end_real = wall;
}

static int scan_hello(void *ctx, const struct culeak_hello *h)
{
    struct scan *sc = ctx;
    struct timeline *tl = sc->tl;
    if (!tl->t0_real || h->realtime_ns < tl->t0_real)
        tl->t0_real = h->realtime_ns;
    sc->real0 = h->realtime_ns;
    sc->mono0 = h->monotonic_ns;
    if (h->realtime_ns > tl->t_end_real)
        tl->t_end_real = h->realtime_ns;
    return 0;
}

static int scan_event(void *ctx, const struct culeak_event *e)
{
    struct scan *sc = ctx;
    sc->tl->nevents++;
    if (e->seq > sc->seq)
        sc->seq = e->seq;
    scan_time(sc, e->t_ns);
    return 0;
}

static int scan_mark(void *ctx, const struct culeak_mark *mk)
{
    scan_time(ctx, mk->t_ns);
    if (mk->seq > ((struct scan *)ctx)->seq)
        ((struct scan *)ctx)->seq = mk->seq;
    struct timeline *tl = ((struct scan *)ctx)->tl;
    if (!mk->label.n)
        return 0;
    size_t before = tl->names.count;
    const char *label = strpool_intern(&tl->names, mk->label.p, mk->label.n);
    if (!label || tl->names.count == before)
        return 0; /* seen before (or out of memory: goto cannot name it) */
    if (tl->nlabels == tl->labels_cap) {
        size_t cap = tl->labels_cap ? 2 * tl->labels_cap : 64;
        const char **v = realloc(tl->labels, cap * sizeof *v);
        if (!v)
            return 0;
        tl->labels = v;
        tl->labels_cap = cap;
    }
    tl->labels[tl->nlabels++] = label;
    return 0;
}

/* ---- loading up to a wall time: a sink in front of the model's ---- */

struct cut {
    const struct culeak_sink *to;
    uint64_t real0, mono0, limit;
    int past;               /* this stream went past the limit: the rest is dropped */
    uint64_t seq;           /* the highest event or mark number taken */
};

static int over(struct cut *c, uint64_t t_ns)
{
    if (!c->past && c->real0 + (t_ns - c->mono0) > c->limit)
        c->past = 1;
    return c->past;
}

static int cut_hello(void *ctx, const struct culeak_hello *h)
{
    struct cut *c = ctx;
    c->real0 = h->realtime_ns;
    c->mono0 = h->monotonic_ns;
    return c->to->hello(c->to->ctx, h);
}

static int cut_modules(void *ctx, const struct culeak_modules *m)
{
    struct cut *c = ctx;
    return c->to->modules(c->to->ctx, m);
}

static int cut_frame(void *ctx, uint64_t id, uint64_t parent, uint64_t ip)
{
    struct cut *c = ctx;
    return c->to->frame(c->to->ctx, id, parent, ip);
}

static int cut_event(void *ctx, const struct culeak_event *e)
{
    struct cut *c = ctx;
    if (over(c, e->t_ns))
        return 0;
    if (e->seq > c->seq)
        c->seq = e->seq;
    return c->to->event(c->to->ctx, e);
}

static int cut_mark(void *ctx, const struct culeak_mark *mk)
{
    struct cut *c = ctx;
    if (over(c, mk->t_ns))
        return 0;
    if (mk->seq > c->seq)
        c->seq = mk->seq;
    return c->to->mark(c->to->ctx, mk);
}

static int cut_exit(void *ctx, const struct culeak_exit *x)
{
    struct cut *c = ctx;
    return over(c, x->t_ns) ? 0 : c->to->exit(c->to->ctx, x);
}

static int cut_note(void *ctx, struct culeak_str text)
{
    struct cut *c = ctx;
    return c->to->note(c->to->ctx, text);
}

/* An aggregated recording's counts: taken when the last free they fold is before the
 * cut (an interval is all in or all out). */
static int cut_churn(void *ctx, const struct culeak_churn *ch)
{
    struct cut *c = ctx;
    return ch->t_last && over(c, ch->t_last) ? 0 : c->to->churn(c->to->ctx, ch);
}

static void arm(const struct timeline *tl, struct model *m)
{
    model_snapshot_take(m, "@start"); /* before any process: nothing live */
    /* each armed mark keeps a state per process: past the first ones, a mark's state is
     * rebuilt from the recordings when asked for (timeline_snapshot) */
    for (size_t i = 0; i < tl->nlabels && i < TIMELINE_ARMED_MARKS; i++) {
        if (model_label_is_seq(tl->labels[i]))
            continue; /* the model reads an all-digit label as an event number */
        model_snapshot_at_mark(m, tl->labels[i], tl->labels[i]); /* named as live --snapshot-at-marks names */
    }
}

/* Loads every file (cut_ns: up to that wall time; 0: all). Returns the events applied
 * (cut: the number the last event or mark taken has, added over the files), or -1 with err. */
static long long load(struct timeline *tl, struct model *m, uint64_t cut_ns, char *err, size_t errlen)
{
    arm(tl, m);
    long long events = 0;
    for (int i = 0; i < tl->npaths; i++) {
        if (!cut_ns) {
            char e[400];
            /* corrupt: kept up to the damage; 1: cut off, or a process read before */
            if (model_load_file(m, tl->paths[i], e, sizeof e) == 1 && !tl->warning[0])
                snprintf(tl->warning, sizeof tl->warning, "%s", e);
            continue;
        }
        struct model_stream *s = model_stream_open(m);
        if (!s) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        struct cut c = {.to = model_stream_sink(s), .limit = cut_ns};
        struct culeak_sink k = {.ctx = &c, .hello = cut_hello, .modules = cut_modules, .frame = cut_frame,
                                .event = cut_event, .mark = cut_mark, .exit = cut_exit, .note = cut_note,
                                .churn = cut_churn};
        char e[256];
        culeak_decode_file(tl->paths[i], &k, e, sizeof e); /* corrupt: up to the damage */
        model_stream_close(s);
        events += (long long)c.seq;
    }
    return cut_ns ? events : (long long)model_event_count(m);
}

int timeline_load(struct timeline *tl, struct model *m, char **files, int nfiles, char *err, size_t errlen)
{
    memset(tl, 0, sizeof *tl);
    tl->paths = files;
    tl->npaths = nfiles;
    struct scan sc = {.tl = tl};
    struct culeak_sink k = {.ctx = &sc, .hello = scan_hello, .event = scan_event, .mark = scan_mark};
    for (int i = 0; i < nfiles; i++) {
        char e[256];
        if (culeak_decode_file(files[i], &k, e, sizeof e) < 0 && !tl->damage[0])
            snprintf(tl->damage, sizeof tl->damage, "%s: %s", files[i], e);
        tl->last_seq += sc.seq;
        sc.seq = 0;
    }
    long long events = load(tl, m, 0, err, errlen);
    if (events < 0)
        return -1;
    tl->nevents = (uint64_t)events; /* a recording given twice is read once */
    if (model_process_count(m) == 0) {
        snprintf(err, errlen, "%s", tl->damage[0] ? tl->damage : "no process in the recordings");
        return -1;
    }
    snprintf(tl->where, sizeof tl->where, "at end: event %llu/%llu", (unsigned long long)tl->last_seq,
             (unsigned long long)tl->last_seq);
    return 0;
}

static int is_label(const struct timeline *tl, const char *what)
{
    for (size_t i = 0; i < tl->nlabels; i++)
        if (strcmp(tl->labels[i], what) == 0)
            return 1;
    return 0;
}

int timeline_has_mark(const struct timeline *tl, const char *name)
{
    return !model_label_is_seq(name) && is_label(tl, name);
}

int timeline_snapshot(struct timeline *tl, struct model *m, const char *name, char *err, size_t errlen)
{
    if (model_snapshot_find(m, name) >= 0)
        return 0;
    if (!timeline_has_mark(tl, name)) {
        snprintf(err, errlen, "no snapshot or mark named '%s'", name);
        return -1;
    }
    /* the recordings read again, each stream up to the mark, into a model of their own */
    struct model *cut = model_new(NULL);
    int rc = -1;
    if (cut && model_snapshot_at_mark(cut, name, name) == 0) {
        model_stop_at_mark(cut, name);
        for (int i = 0; i < tl->npaths; i++) {
            char e[256];
            model_load_file(cut, tl->paths[i], e, sizeof e); /* corrupt: up to the damage, as loaded */
        }
        rc = model_snapshot_adopt(m, name, cut, name);
    }
    if (rc != 0)
        snprintf(err, errlen, "cannot take the state at mark '%s' (out of memory)", name);
    model_free(cut);
    return rc;
}

/* The state at a time since the start, as snapshot `name` of m: the recordings loaded
 * up to then into a model of their own, whose state m takes over. */
static int snapshot_at_time(struct timeline *tl, struct model *m, uint64_t cut_ns, const char *name, long long *events,
                            char *err, size_t errlen)
{
    struct model *cut = model_new(NULL);
    if (!cut) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    long long n = load(tl, cut, cut_ns, err, errlen);
    int rc = n < 0 ? -1 : model_snapshot_import(m, name, cut);
    if (n >= 0 && rc != 0)
        snprintf(err, errlen, "cannot take the state at that time (out of memory)");
    model_free(cut);
    *events = n;
    return rc;
}

int timeline_goto(struct timeline *tl, struct model **mp, const char *what, struct view_source *src, char *err,
                  size_t errlen)
{
    struct model *m = *mp; /* the whole recordings stay loaded: positions are sources of it */
    unsigned long long total = (unsigned long long)tl->last_seq; /* numbered as info marks numbers */
    double s;
    struct view_source to = {.kind = MODEL_SOURCE_NOW};
    char where[160];
    if (strcmp(what, "end") == 0) {
        snprintf(where, sizeof where, "at end: event %llu/%llu", total, total);
    } else if (strcmp(what, "peak") == 0) {
        to.kind = MODEL_SOURCE_PEAK;
        snprintf(where, sizeof where, "at peak (each process at its own) of events numbered to %llu", total);
    } else if (strcmp(what, "oom") == 0) {
        size_t nf;
        const struct model_failure *f = model_failures(m, &nf);
        size_t i = 0;
        while (i < nf && !f[i].has_state)
            i++;
        if (i == nf) {
            snprintf(err, errlen, "no allocation failed in these recordings");
            return -1;
        }
        to.kind = MODEL_SOURCE_FAILURE;
        to.failure = (int)i;
        snprintf(where, sizeof where, "at oom: pid %llu event %llu of %llu",
                 (unsigned long long)model_process(m, f[i].proc)->pid, (unsigned long long)f[i].seq, total);
    } else if (strcmp(what, "start") == 0 || model_snapshot_find(m, what) >= 0 || timeline_has_mark(tl, what)) {
        if (strcmp(what, "start") != 0 && timeline_snapshot(tl, m, what, err, errlen) != 0)
            return -1;
        to.kind = MODEL_SOURCE_SNAPSHOT;
        snprintf(to.snapshot, sizeof to.snapshot, "%s", strcmp(what, "start") == 0 ? "@start" : what);
        if (strcmp(what, "start") == 0)
            snprintf(where, sizeof where, "at start: event 0/%llu", total);
        else
            snprintf(where, sizeof where, "at %s %.60s of events numbered to %llu", is_label(tl, what) ? "mark" : "snapshot",
                     what, total);
    } else if (parse_seconds(what, &s) == 0) {
        double length = tl->t_end_real > tl->t0_real ? (double)(tl->t_end_real - tl->t0_real) / 1e9 : 0;
        char d[32], l[32];
        fmt_duration(d, sizeof d, s);
        if (s > length) {
            snprintf(err, errlen, "%s is past the end: the recordings last %s (goto end)", d,
                     fmt_duration(l, sizeof l, length));
            return -1;
        }
        to.kind = MODEL_SOURCE_SNAPSHOT;
        snprintf(to.snapshot, sizeof to.snapshot, "@%s", d);
        long long n = 0;
        if (snapshot_at_time(tl, m, tl->t0_real + (uint64_t)(s * 1e9) + 1, to.snapshot, &n, err, errlen) != 0)
            return -1;
        snprintf(where, sizeof where, "at %s: event %lld/%llu", d, n, total);
    } else {
        const char *near[3];
        size_t k = model_nearest_marks(m, what, near, 3);
        int n = snprintf(err, errlen, "no mark named '%s'%s", what,
                         k ? "; the nearest:" : " (goto MARK|TIME|peak|oom|start|end)");
        for (size_t i = 0; i < k && n >= 0 && (size_t)n < errlen; i++) {
            int w = snprintf(err + n, errlen - (size_t)n, "%s '%.60s'", i ? "," : "", near[i]);
            n = w < 0 ? -1 : n + w;
        }
        return -1;
    }
    *src = to;
    snprintf(tl->where, sizeof tl->where, "%s", where);
    return 0;
}

void timeline_free(struct timeline *tl)
{
    free(tl->labels);
    strpool_free(&tl->names);
    memset(tl, 0, sizeof *tl);
}
