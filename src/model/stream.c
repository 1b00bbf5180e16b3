/* Streams: one decoder per connection or file, whose callbacks apply records to the
 * model. */
#include "common/outpath.h"
#include "model_internal.h"
#include "pyframes.h"
#include "common/recording_part.h"
#include "common/recording_read.h"
#include "common/wire.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct model_stream {
    struct model *m;
    struct process *p;
    struct culeak_sink sink;
    struct culeak_decoder dec;
    char error[320];
    int duplicate;          /* its process is one the model has already: records ignored */
    int rolled;             /* a ROLL ended the part read: the stream goes on in roll_next */
    uint64_t roll_part, roll_offset;
    char roll_next[256];
};

int model_hello_rank(const struct culeak_hello *h)
{
    for (size_t v = 0; culeak_rank_vars[v]; v++) {
        size_t kl = strlen(culeak_rank_vars[v]);
        for (size_t i = 0; i < h->nenv; i++) {
            const struct culeak_str *e = &h->env[i];
            if (e->n > kl + 1 && e->n < kl + 12 && memcmp(e->p, culeak_rank_vars[v], kl) == 0 && e->p[kl] == '=') {
                long r = 0;
                size_t j = kl + 1;
                for (; j < e->n && e->p[j] >= '0' && e->p[j] <= '9'; j++)
                    r = r * 10 + (e->p[j] - '0');
                if (j == e->n)
                    return (int)r;
            }
        }
    }
    return -1;
}

static int same_start(const struct model_process *q, const struct culeak_hello *h)
{
    return q->pid == h->pid && q->start_realtime_ns == h->realtime_ns && q->start_monotonic_ns == h->monotonic_ns &&
           strlen(q->host) == h->host.n && (!h->host.n || memcmp(q->host, h->host.p, h->host.n) == 0);
}

/* A process's pid and start times, hashed. */
static uint64_t start_key(const struct culeak_hello *h)
{
    uint64_t k = h->pid * 0x9e3779b97f4a7c15ull ^ h->realtime_ns;
    k = (k ^ (k >> 31)) * 0xbf58476d1ce4e5b9ull ^ h->monotonic_ns;
    return k ^ (k >> 29);
}

/* The process of an earlier HELLO with h's pid, start and host, or -1. By its hash: a
 * job of 10,000 processes compared each HELLO with every process before it. */
static int earlier_start(struct model *m, const struct culeak_hello *h)
{
    uint32_t i = u64map_get(&m->proc_starts, start_key(h));
    if (i == UINT32_MAX)
        return -1;
    if (same_start(&m->procs[i]->pub, h))
        return (int)i;
    for (int k = 0; k < m->nprocs; k++) /* two starts of one hash: rare */
        if (same_start(&m->procs[k]->pub, h))
            return k;
    return -1;
}

static int on_hello(void *ctx, const struct culeak_hello *h)
{
    struct model_stream *s = ctx;
    struct model *m = s->m;
    /* the same recording given twice (a.culeak a.culeak, or a copy): one process, counted
     * once. A process that execs starts again with a new start time. */
    int dup = earlier_start(m, h);
    if (dup >= 0) {
        s->duplicate = 1;
        snprintf(s->error, sizeof s->error, "process %llu on %s is in an earlier recording too: read once",
                 (unsigned long long)h->pid, m->procs[dup]->pub.host);
        return 0;
    }
    model_changed(s->m);
    struct process *p = model_add_process(m);
    if (!p) {
        snprintf(s->error, sizeof s->error, "too many processes (or out of memory)");
        return -1;
    }
    if (s->p) /* a second HELLO on one stream: the former process image is over */
        s->p->pub.ended = 1;
    s->p = p;
    p->pub.pid = h->pid;
    p->pub.ppid = h->ppid;
    p->pub.start_realtime_ns = h->realtime_ns;
    p->pub.start_monotonic_ns = h->monotonic_ns;
    p->pub.last_t_ns = h->monotonic_ns;
    if (u64map_get(&m->proc_starts, start_key(h)) == UINT32_MAX) /* the first of a hash is kept */
        u64map_put(&m->proc_starts, start_key(h), (uint32_t)p->pub.index);
    const char *host = strpool_intern(&m->strings, h->host.p ? h->host.p : "", h->host.n);
    const char *exe = strpool_intern(&m->strings, h->exe.p ? h->exe.p : "", h->exe.n);
    p->pub.host = host ? host : "";
    if (p->pub.index > 0 && strcmp(p->pub.host, m->procs[0]->pub.host) != 0)
        m->several_hosts = 1;
    p->pub.exe = exe ? exe : "";
    p->pub.rank = model_hello_rank(h);
    runs_on_start(m, p);
    p->pub.argv = calloc(h->argc + 1, sizeof *p->pub.argv);
    if (p->pub.argv) {
        for (size_t i = 0; i < h->argc; i++) {
            const char *a = strpool_intern(&m->strings, h->argv[i].p ? h->argv[i].p : "", h->argv[i].n);
            if (!a)
                break;
            p->pub.argv[p->pub.argc++] = (char *)a;
        }
    }
    if (m->obs.hello)
        m->obs.hello(m->obs.ctx, p->pub.index);
    return 0;
}

static int on_modules(void *ctx, const struct culeak_modules *mods)
{
    struct model_stream *s = ctx;
    if (s->duplicate)
        return 0;
    model_changed(s->m);
    modules_add(s->m, s->p, mods);
    return 0;
}

static int on_frame(void *ctx, uint64_t id, uint64_t parent, uint64_t ip)
{
    struct model_stream *s = ctx;
    if (s->duplicate)
        return 0;
    model_changed(s->m);
    if (apply_frame(s->m, s->p, id, parent, pyframes_ip(s->m, s->p, ip)) != 0) {
        snprintf(s->error, sizeof s->error, "out of memory");
        return -1;
    }
    return 0;
}

static int on_pyframe(void *ctx, const struct culeak_pyframe *f)
{
    struct model_stream *s = ctx;
    if (s->duplicate)
        return 0;
    model_changed(s->m);
    if (pyframes_add(s->m, s->p, f) != 0) {
        snprintf(s->error, sizeof s->error, "out of memory");
        return -1;
    }
    return 0;
}

static int on_event(void *ctx, const struct culeak_event *e)
{
    struct model_stream *s = ctx;
    if (s->duplicate)
        return 0;
    model_changed(s->m);
    apply_event(s->m, s->p, e);
    return 0;
}

static int on_mark(void *ctx, const struct culeak_mark *mk)
{
    struct model_stream *s = ctx;
    if (s->duplicate)
        return 0;
    model_changed(s->m);
    struct model *m = s->m;
    apply_mark(m, s->p, mk);
    if (m->obs.mark)
        m->obs.mark(m->obs.ctx, s->p->pub.index, mk);
    if (m->stop_label && mk->label.n == strlen(m->stop_label) &&
        memcmp(mk->label.p, m->stop_label, mk->label.n) == 0)
        return MODEL_FEED_STOPPED;
    return 0;
}

static int on_exit_record(void *ctx, const struct culeak_exit *x)
{
    struct model_stream *s = ctx;
    if (s->duplicate)
        return 0;
    model_changed(s->m);
    if (s->m->seq_triggers) /* snapshots "after seq N" for the last N */
        snapshots_on_seq(s->m, s->p, s->p->pub.last_seq + 1);
    s->p->pub.exited = 1;
    s->p->pub.exit_reason = x->reason;
    s->p->pub.last_t_ns = x->t_ns;
    if (s->m->obs.exit)
        s->m->obs.exit(s->m->obs.ctx, s->p->pub.index);
    return 0;
}

static int on_note(void *ctx, struct culeak_str text)
{
    struct model_stream *s = ctx;
    if (s->duplicate)
        return 0;
    model_changed(s->m);
    s->p->pub.notes++;
    const char *t = strpool_intern(&s->m->strings, text.p ? text.p : "", text.n);
    if (t)
        s->p->pub.last_note = t;
    static const char untraced[] = "untraced: ";
    if (t && !strncmp(t, untraced, sizeof untraced - 1) && !s->p->pub.untraced++)
        s->p->pub.untraced_note = t + sizeof untraced - 1;
    if (s->m->obs.note)
        s->m->obs.note(s->m->obs.ctx, s->p->pub.index, text.p, text.n);
    return 0;
}

static int on_holder(void *ctx, uint64_t addr, struct culeak_str words)
{
    struct model_stream *s = ctx;
    if (s->duplicate)
        return 0;
    model_changed(s->m);
    holders_add(s->m, s->p, addr, words.p ? words.p : "", words.n);
    return 0;
}

static int on_lost(void *ctx, uint64_t count, uint64_t first, uint64_t last)
{
    struct model_stream *s = ctx;
    (void)first;
    (void)last;
    if (s->duplicate)
        return 0;
    model_changed(s->m);
    s->p->pub.lost_events += count;
    if (s->m->obs.lost)
        s->m->obs.lost(s->m->obs.ctx, s->p->pub.index, count);
    return 0;
}

static int on_roll(void *ctx, const struct culeak_roll *r)
{
    struct model_stream *s = ctx;
    if (r->which != CULEAK_ROLL_NEXT || !s->p || s->duplicate)
        return 0;
    s->rolled = 1;
    s->roll_part = r->part;
    s->roll_offset = r->offset;
    size_t n = r->name.n < sizeof s->roll_next - 1 ? r->name.n : sizeof s->roll_next - 1;
    memcpy(s->roll_next, r->name.p, n);
    s->roll_next[n] = 0;
    return 0;
}

static int on_churn(void *ctx, const struct culeak_churn *c)
{
    struct model_stream *s = ctx;
    if (s->duplicate)
        return 0;
    model_changed(s->m);
    apply_churn(s->m, s->p, c);
    return 0;
}

struct model_stream *model_stream_open(struct model *m)
{
    struct model_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->m = m;
    s->sink = (struct culeak_sink){
        .ctx = s, .hello = on_hello, .modules = on_modules, .frame = on_frame, .event = on_event,
        .mark = on_mark, .exit = on_exit_record, .note = on_note, .pyframe = on_pyframe,
        .lost = on_lost, .holder = on_holder, .roll = on_roll, .churn = on_churn,
    };
    culeak_decoder_init(&s->dec, &s->sink, 1);
    return s;
}

const struct culeak_sink *model_stream_sink(struct model_stream *s) { return &s->sink; }

int model_stream_feed(struct model_stream *s, const void *bytes, size_t n)
{
    int rc = culeak_decoder_feed(&s->dec, bytes, n);
    if (rc == MODEL_FEED_STOPPED)
        return MODEL_FEED_STOPPED;
    if (rc != 0) {
        if (!s->error[0])
            snprintf(s->error, sizeof s->error, "%s", s->dec.error[0] ? s->dec.error : "stream error");
        if (s->p)
            s->p->pub.corrupt = 1;
        model_changed(s->m);
        return MODEL_FEED_CORRUPT;
    }
    return MODEL_FEED_OK;
}

int model_stream_finish(struct model_stream *s)
{
    if (culeak_decoder_finish(&s->dec) == 0 || s->duplicate)
        return 0;
    snprintf(s->error, sizeof s->error, "%s", s->dec.error);
    if (s->p)
        s->p->pub.truncated = 1;
    model_changed(s->m);
    return 1;
}

const char *model_stream_error(const struct model_stream *s) { return s->error; }


void model_stream_close(struct model_stream *s)
{
    if (!s)
        return;
    if (s->p) {
        s->p->pub.ended = 1;
        s->p->stream_ended = 1; /* its end is known: a process starting later is of another run */
    }
    culeak_decoder_free(&s->dec);
    free(s);
}

struct load {
    struct model_stream *s;
    int rc;      /* model_stream_feed's, where it stopped the reading */
    size_t skip; /* a later part's header, not fed: the stream goes on after it */
};

static int feed_model(void *ctx, const uint8_t *bytes, size_t n)
{
    struct load *l = ctx;
    size_t k = l->skip < n ? l->skip : n;
    l->skip -= k;
    if (k == n)
        return 0;
    return (l->rc = model_stream_feed(l->s, bytes + k, n - k)) != MODEL_FEED_OK;
}

static int same_process(const struct process *p, const struct culeak_part_head *h)
{
    return p->pub.pid == h->pid && p->pub.start_realtime_ns == h->realtime_ns &&
           p->pub.start_monotonic_ns == h->monotonic_ns && !strcmp(p->pub.host, h->host);
}

/* The parked stream the part h continues, taken out of the parked ones (its process
 * running again until its part is read); NULL with why in err. */
static struct model_stream *unpark(struct model *m, const char *path, const struct culeak_part_head *h, char *err,
                                   size_t errlen)
{
    for (size_t i = 0; i < m->nparked; i++) {
        struct model_stream *s = m->parked[i];
        if (!same_process(s->p, h))
            continue;
        if (s->roll_part + 1 == h->part && s->roll_offset == h->offset) {
            m->parked[i] = m->parked[--m->nparked];
            s->rolled = 0;
            s->p->pub.ended = 0;
            s->p->stream_ended = 0;
            return s;
        }
        snprintf(err, errlen, "%s: %s, part %llu of the recording of process %llu, is missing: this part (%llu) and "
                 "those after it are not read", path, s->roll_next, (unsigned long long)s->roll_part + 1,
                 (unsigned long long)h->pid, (unsigned long long)h->part);
        return NULL;
    }
    snprintf(err, errlen, "%s: part %llu of the recording of process %llu goes on from %s, which was not read to "
             "its end before it (missing, cut off or given later): not read (culeak report run.*.culeak gives the "
             "parts in order)",
             path, (unsigned long long)h->part, (unsigned long long)h->pid, h->previous);
    return NULL;
}

/* A part read to its ROLL: its stream waits for the next part (the process ended as far
 * as read). 0, or -1 out of memory. */
static int park(struct model *m, struct model_stream *s)
{
    struct model_stream **np = realloc(m->parked, (m->nparked + 1) * sizeof *np);
    if (!np)
        return -1;
    m->parked = np;
    m->parked[m->nparked++] = s;
    s->p->pub.ended = 1;
    s->p->stream_ended = 1;
    return 0;
}

const char *model_unread_part(const struct model *m, size_t i, long *pid)
{
    if (i >= m->nparked)
        return NULL;
    *pid = (long)m->parked[i]->p->pub.pid;
    return m->parked[i]->roll_next;
}

void streams_parked_free(struct model *m)
{
    for (size_t i = 0; i < m->nparked; i++)
        model_stream_close(m->parked[i]);
    free(m->parked);
    m->parked = NULL;
    m->nparked = 0;
}

int model_load_file(struct model *m, const char *path, char *err, size_t errlen)
{
    struct culeak_part_head h;
    struct load l = {0};
    if (culeak_part_head(path, &h) == 1) {
        if (!(l.s = unpark(m, path, &h, err, errlen)))
            return -1;
        l.skip = h.header_len;
    } else if (!(l.s = model_stream_open(m))) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    int r = culeak_read_recording(path, feed_model, &l, err, errlen);
    if (r == 0 && l.s->rolled && park(m, l.s) == 0)
        return 0;
    int rc;
    if (r < 0) /* err says why */
        rc = -1;
    else if (r == 0)
        rc = model_stream_finish(l.s);
    else
        rc = l.rc == MODEL_FEED_STOPPED ? 2 : -1;
    if (rc == 0 && l.s->duplicate)
        rc = 1;
    if (r >= 0 && (rc == 1 || rc == -1))
        snprintf(err, errlen, "%s: %s", path, l.s->error);
    model_stream_close(l.s);
    return rc;
}
