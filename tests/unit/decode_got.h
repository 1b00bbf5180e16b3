/* Test helper: decoder callbacks that keep the events and frames they are handed, in
 * order, in a struct got (the sink's ctx, or the first member of the ctx). */
#ifndef CULEAK_TEST_DECODE_GOT_H
#define CULEAK_TEST_DECODE_GOT_H

#include "common/decode.h"

#include <stdint.h>

struct got {
    struct culeak_event ev[16];
    int nev;
    uint64_t frame[16][3]; /* id, parent, ip */
    int nframe;
};

static inline int on_event(void *ctx, const struct culeak_event *e)
{
    struct got *g = ctx;
    g->ev[g->nev++] = *e;
    return 0;
}

static inline int on_frame(void *ctx, uint64_t id, uint64_t parent, uint64_t ip)
{
    struct got *g = ctx;
    g->frame[g->nframe][0] = id;
    g->frame[g->nframe][1] = parent;
    g->frame[g->nframe][2] = ip;
    g->nframe++;
    return 0;
}

#endif
