/* The model behind record --metrics (record_metrics.h): one model stream per ring slot,
 * opened at the slot's first bytes and finished at its end, so a slot given to a later
 * process starts a new stream. */
#include "record_metrics.h"
#include "common/wire.h"
#include "model/model.h"
#include "report/metrics.h"

#include <stdio.h>
#include <stdlib.h>

struct record_metrics {
    struct model *m;
    struct metrics_server *srv;
    struct model_stream **streams; /* by ring slot; NULL: none open */
    size_t nstreams;
    struct culeak_collect_tap tap;
};

static struct model_stream *stream_of(struct record_metrics *r, size_t slot)
{
    if (slot >= r->nstreams) {
        struct model_stream **p = realloc(r->streams, (slot + 1) * sizeof *p);
        if (!p)
            return NULL;
        for (size_t i = r->nstreams; i <= slot; i++)
            p[i] = NULL;
        r->streams = p;
        r->nstreams = slot + 1;
    }
    if (!r->streams[slot] && (r->streams[slot] = model_stream_open(r->m)))
        model_stream_feed(r->streams[slot], CULEAK_MAGIC, CULEAK_MAGIC_LEN); /* a ring starts at HELLO */
    return r->streams[slot];
}

/* A stream that stopped making sense stays as far as it was read: the recording is the
 * record, the metrics only follow it. */
static void on_bytes(void *ctx, size_t slot, const void *p, size_t n)
{
    struct model_stream *s = stream_of(ctx, slot);
    if (s)
        model_stream_feed(s, p, n);
}

static void on_ended(void *ctx, size_t slot)
{
    struct record_metrics *r = ctx;
    if (slot >= r->nstreams || !r->streams[slot])
        return;
    model_stream_finish(r->streams[slot]);
    model_stream_close(r->streams[slot]);
    r->streams[slot] = NULL;
}

static void on_turn(void *ctx)
{
    struct record_metrics *r = ctx;
    metrics_server_service(r->srv);
}

struct record_metrics *record_metrics_new(const char *addr, char *err, size_t len)
{
    struct record_metrics *r = calloc(1, sizeof *r);
    if (!r || !(r->m = model_new(NULL))) {
        snprintf(err, len, "out of memory");
        free(r);
        return NULL;
    }
    if (!(r->srv = metrics_server_new(addr, r->m, err, len))) {
        model_free(r->m);
        free(r);
        return NULL;
    }
    r->tap = (struct culeak_collect_tap){.ctx = r, .bytes = on_bytes, .ended = on_ended, .turn = on_turn};
    return r;
}

const char *record_metrics_address(const struct record_metrics *r) { return metrics_server_address(r->srv); }

const struct culeak_collect_tap *record_metrics_tap(struct record_metrics *r) { return &r->tap; }

void record_metrics_free(struct record_metrics *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nstreams; i++)
        if (r->streams[i])
            model_stream_close(r->streams[i]);
    free(r->streams);
    metrics_server_free(r->srv);
    model_free(r->m);
    free(r);
}
