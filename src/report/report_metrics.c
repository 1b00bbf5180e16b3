/* The scrape answer (metrics.h): the model's totals gathered per rank (host, rank) and
 * device first, then written family by family, as both text formats want every sample
 * of a family together under its one TYPE line. */
#include "metrics.h"
#include "model/suspects.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define METRICS_DEVICES 64

struct per_alloc {
    int seen, has_reserved;
    uint64_t live, peak, reserved;
};

/* One device of one rank. */
struct dev_row {
    int device;
    struct per_alloc a[MODEL_POOLS]; /* [0]: the driver's device memory; [pool]: a pool's blocks */
    uint64_t size;                   /* the device's memory as marks said; 0: unknown */
    double fill_s;                   /* soonest suspect's time to fill it; < 0: none */
};

struct rank_row {
    const char *host;
    int rank;
    uint64_t events, lost;
    unsigned running, suspects;
    int64_t growth; /* the fastest suspect's bytes per mark interval */
    struct dev_row *devs;
    size_t ndevs;
};

struct gathered {
    struct rank_row *ranks;
    size_t n;
};

enum metrics_format metrics_negotiate(const char *accept)
{
    return accept && strstr(accept, "application/openmetrics-text") ? METRICS_OPENMETRICS : METRICS_PROMETHEUS;
}

static struct rank_row *rank_of(struct gathered *g, const struct model_process *p)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->ranks[i].rank == p->rank && !strcmp(g->ranks[i].host, p->host))
            return &g->ranks[i];
    struct rank_row *r = realloc(g->ranks, (g->n + 1) * sizeof *r);
    if (!r)
        return NULL;
    g->ranks = r;
    r += g->n++;
    *r = (struct rank_row){.host = p->host, .rank = p->rank};
    return r;
}

static struct dev_row *dev_of(struct rank_row *r, int device)
{
    for (size_t i = 0; i < r->ndevs; i++)
        if (r->devs[i].device == device)
            return &r->devs[i];
    struct dev_row *d = realloc(r->devs, (r->ndevs + 1) * sizeof *d);
    if (!d)
        return NULL;
    r->devs = d;
    d += r->ndevs++;
    *d = (struct dev_row){.device = device, .fill_s = -1};
    return d;
}

static void add(struct per_alloc *a, const struct model_counter *c)
{
    a->seen = 1;
    a->live += c->live_bytes;
    a->peak += c->peak_bytes;
}

/* The device's memory from the process's latest mark that carried it. */
static uint64_t device_size(const struct model *m, int proc, int device)
{
    size_t n;
    const struct model_mark *mk = model_marks(m, proc, &n);
    for (size_t i = n; i-- > 0;)
        if (mk[i].mem_total && mk[i].mem_device == device)
            return mk[i].mem_total;
    return 0;
}

/* Process proc's numbers added to its rank's. */
static int gather_process(struct model *m, int proc, struct gathered *g)
{
    const struct model_process *p = model_process(m, proc);
    struct rank_row *r = rank_of(g, p);
    if (!r)
        return -1;
    r->events += p->events;
    r->lost += p->lost_events;
    r->running += (unsigned)model_process_running(p);
    int devs[METRICS_DEVICES];
    int nd = model_devices(m, proc, devs, METRICS_DEVICES);
    nd = nd > METRICS_DEVICES ? METRICS_DEVICES : nd;
    struct model_memory mm;
    model_memory_now(m, proc, &mm);
    unsigned pool = 0;
    while (pool + 1 < MODEL_POOLS && mm.pools && !(mm.pools >> pool & 1))
        pool++;
    for (int i = 0; i < nd; i++) {
        struct dev_row *d = dev_of(r, devs[i]);
        if (!d)
            return -1;
        struct model_counter c;
        model_totals(m, proc, devs[i], MODEL_KIND_DEVICE_MEMORY, &c);
        add(&d->a[0], &c);
        uint64_t size = device_size(m, proc, devs[i]);
        if (size)
            d->size = size;
        if (!mm.pools || !pool)
            continue;
        model_totals(m, proc, devs[i], CULEAK_KIND_BLOCK, &c);
        add(&d->a[pool], &c);
        /* the pool's segments are counted per process: a device's own only when it is
         * the process's one device */
        if (nd == 1) {
            d->a[pool].has_reserved = 1;
            d->a[pool].reserved += mm.reserved_bytes;
        }
    }
    return 0;
}

static int gather_suspects(struct model *m, struct gathered *g)
{
    struct model_suspects s;
    if (model_suspects(m, MODEL_ALL, 0, &s) != 0)
        return -1;
    for (size_t i = 0; i < s.n; i++) {
        const struct model_suspect *x = &s.v[i];
        struct rank_row *r = rank_of(g, model_process(m, x->proc));
        if (!r)
            break;
        r->suspects++;
        if (x->per_mark > r->growth)
            r->growth = x->per_mark;
        struct dev_row *d = x->forecast ? dev_of(r, x->device) : NULL;
        if (d && isfinite(x->fill_s) && (d->fill_s < 0 || x->fill_s < d->fill_s))
            d->fill_s = x->fill_s;
    }
    model_suspects_free(&s);
    return 0;
}

static void free_gathered(struct gathered *g)
{
    for (size_t i = 0; i < g->n; i++)
        free(g->ranks[i].devs);
    free(g->ranks);
}

/* A label value: backslash, double quote and line feed escaped, as both formats say. */
static void label_value(FILE *f, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\' || *v == '"')
            fprintf(f, "\\%c", *v);
        else if (*v == '\n')
            fputs("\\n", f);
        else
            fputc(*v, f);
    }
}

static void family(FILE *f, enum metrics_format fmt, const char *name, const char *type, const char *unit,
                   const char *help)
{
    int total = !strcmp(type, "counter");
    if (fmt == METRICS_OPENMETRICS) {
        fprintf(f, "# TYPE %s %s\n", name, type);
        if (unit)
            fprintf(f, "# UNIT %s %s\n", name, unit);
        fprintf(f, "# HELP %s %s\n", name, help);
    } else {
        fprintf(f, "# HELP %s%s %s\n", name, total ? "_total" : "", help);
        fprintf(f, "# TYPE %s%s %s\n", name, total ? "_total" : "", type);
    }
}

/* name{host="..",rank="..",device="..",allocator=".."} with the labels that apply
 * (device < 0, allocator NULL: none); the value follows. */
static void sample(FILE *f, const char *name, const struct rank_row *r, int device, const char *allocator)
{
    fprintf(f, "%s{host=\"", name);
    label_value(f, r->host);
    fputc('"', f);
    if (r->rank >= 0)
        fprintf(f, ",rank=\"%d\"", r->rank);
    if (device >= 0)
        fprintf(f, ",device=\"%d\"", device);
    if (allocator) {
        fputs(",allocator=\"", f);
        label_value(f, allocator);
        fputc('"', f);
    }
    fputs("} ", f);
}

static const char *allocator_name(unsigned a) { return a ? model_cache_name((enum model_cache)a) : "cuda"; }

enum bytes_of { LIVE, PEAK, RESERVED };

static void write_bytes(FILE *f, const struct gathered *g, const char *name, enum bytes_of which)
{
    for (size_t i = 0; i < g->n; i++)
        for (size_t k = 0; k < g->ranks[i].ndevs; k++)
            for (unsigned a = 0; a < MODEL_POOLS; a++) {
                const struct per_alloc *x = &g->ranks[i].devs[k].a[a];
                if (!x->seen || (which == RESERVED && !x->has_reserved))
                    continue;
                sample(f, name, &g->ranks[i], g->ranks[i].devs[k].device, allocator_name(a));
                fprintf(f, "%llu\n", (unsigned long long)(which == LIVE ? x->live : which == PEAK ? x->peak
                                                                                             : x->reserved));
            }
}

static void write_families(FILE *f, const struct gathered *g, enum metrics_format fmt)
{
    family(f, fmt, "culeak_live_bytes", "gauge", "bytes",
           "Device memory live now: allocator cuda is all the driver handed out, a pool's the blocks it lent.");
    write_bytes(f, g, "culeak_live_bytes", LIVE);
    family(f, fmt, "culeak_peak_bytes", "gauge", "bytes", "The highest culeak_live_bytes so far.");
    write_bytes(f, g, "culeak_peak_bytes", PEAK);
    family(f, fmt, "culeak_reserved_bytes", "gauge", "bytes",
           "Device memory a caching allocator holds from the driver (its segments).");
    write_bytes(f, g, "culeak_reserved_bytes", RESERVED);
    family(f, fmt, "culeak_device_size_bytes", "gauge", "bytes", "The device's memory, as the latest mark said.");
    for (size_t i = 0; i < g->n; i++)
        for (size_t k = 0; k < g->ranks[i].ndevs; k++)
            if (g->ranks[i].devs[k].size) {
                sample(f, "culeak_device_size_bytes", &g->ranks[i], g->ranks[i].devs[k].device, NULL);
                fprintf(f, "%llu\n", (unsigned long long)g->ranks[i].devs[k].size);
            }
    family(f, fmt, "culeak_time_to_full_seconds", "gauge", "seconds",
           "Until the device is full at the pace of its fastest-filling growth suspect.");
    for (size_t i = 0; i < g->n; i++)
        for (size_t k = 0; k < g->ranks[i].ndevs; k++)
            if (g->ranks[i].devs[k].fill_s >= 0) {
                sample(f, "culeak_time_to_full_seconds", &g->ranks[i], g->ranks[i].devs[k].device, NULL);
                fprintf(f, "%.9g\n", g->ranks[i].devs[k].fill_s);
            }
    family(f, fmt, "culeak_suspects", "gauge", NULL, "Call sites whose live bytes grow from mark to mark.");
    for (size_t i = 0; i < g->n; i++) {
        sample(f, "culeak_suspects", &g->ranks[i], -1, NULL);
        fprintf(f, "%u\n", g->ranks[i].suspects);
    }
    family(f, fmt, "culeak_suspect_growth_bytes", "gauge", "bytes",
           "The fastest growth suspect's growth per mark interval (an iteration); 0: none.");
    for (size_t i = 0; i < g->n; i++) {
        sample(f, "culeak_suspect_growth_bytes", &g->ranks[i], -1, NULL);
        fprintf(f, "%lld\n", (long long)g->ranks[i].growth);
    }
    family(f, fmt, "culeak_processes", "gauge", NULL, "Traced processes running.");
    for (size_t i = 0; i < g->n; i++) {
        sample(f, "culeak_processes", &g->ranks[i], -1, NULL);
        fprintf(f, "%u\n", g->ranks[i].running);
    }
    family(f, fmt, "culeak_events", "counter", NULL, "Allocations, frees and other memory events recorded.");
    for (size_t i = 0; i < g->n; i++) {
        sample(f, "culeak_events_total", &g->ranks[i], -1, NULL);
        fprintf(f, "%llu\n", (unsigned long long)g->ranks[i].events);
    }
    family(f, fmt, "culeak_lost_events", "counter", NULL, "Events dropped while culeak did not read.");
    for (size_t i = 0; i < g->n; i++) {
        sample(f, "culeak_lost_events_total", &g->ranks[i], -1, NULL);
        fprintf(f, "%llu\n", (unsigned long long)g->ranks[i].lost);
    }
    if (fmt == METRICS_OPENMETRICS)
        fputs("# EOF\n", f);
}

int report_metrics(FILE *f, struct model *m, enum metrics_format fmt)
{
    struct gathered g = {0};
    int rc = 0;
    for (int p = 0; p < model_process_count(m) && rc == 0; p++)
        rc = gather_process(m, p, &g);
    if (rc == 0)
        rc = gather_suspects(m, &g);
    if (rc == 0)
        write_families(f, &g, fmt);
    free_gathered(&g);
    return rc;
}
