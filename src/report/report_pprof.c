/* report --format pprof: the report as a gzipped profile.proto (github.com/google/pprof,
 * proto/profile.proto), which go tool pprof, Pyroscope, Parca, speedscope and Perfetto
 * read. One sample per stack of each process, its values in Go's heap profile's sample
 * types (alloc_objects, alloc_space: every allocation made there; inuse_objects,
 * inuse_space: what the report's source holds there) and labels rank, host, device,
 * allocator and kind. A sample's stack starts at the call site, as the text report's
 * rows do (the allocator's frames below it are left out), and keeps the Python and
 * native frames outside looked-through code above it: pprof's bytes per function are
 * the text report's --group function rows. With --diff A B the values are B's minus
 * A's, negative where memory went away (what pprof -diff_base shows). */
#include "common/strpool.h"
#include "common/u64map.h"
#include "protobuf.h"
#include "report_internal.h"
#include "stack_fold.h"
#include "model/suppress.h"

#include <stdlib.h>
#include <string.h>

/* profile.proto's field numbers */
enum {
    PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_LOCATION = 4, PROFILE_FUNCTION = 5,
    PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9, PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11,
    PROFILE_PERIOD = 12, PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
    VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2,
    SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
    LABEL_KEY = 1, LABEL_STR = 2,
    LOCATION_ID = 1, LOCATION_LINE = 4,
    LINE_FUNCTION_ID = 1, LINE_LINE = 2,
    FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
};

struct pprof {
    struct model *m;
    struct pb out;           /* the Profile message (fields in any order, as protobuf allows) */
    struct pb msg, sub;      /* scratch for the nested messages */
    struct pb labels;        /* the current process's labels, framed as Sample.label fields */
    struct strpool strings;  /* the string table: dense ids, "" first */
    struct u64map functions; /* (name, file) string ids -> Function.id */
    struct u64map locations; /* (Function.id, line) -> Location.id */
    uint32_t nfunctions, nlocations;
    int failed;
};

static int64_t str(struct pprof *pp, const char *s)
{
    uint32_t id = strpool_id(&pp->strings, s, strlen(s));
    pp->failed |= id == UINT32_MAX;
    return id == UINT32_MAX ? 0 : id;
}

static uint64_t function_id(struct pprof *pp, const char *name, const char *file)
{
    int64_t n = str(pp, name), f = str(pp, file);
    uint64_t key = (uint64_t)n << 32 | (uint64_t)f;
    uint32_t id = u64map_get(&pp->functions, key);
    if (id != UINT32_MAX)
        return id;
    id = ++pp->nfunctions;
    pp->failed |= u64map_put(&pp->functions, key, id) != 0;
    pb_clear(&pp->msg);
    pb_uint(&pp->msg, FUNCTION_ID, id);
    pb_int(&pp->msg, FUNCTION_NAME, n);
    pb_int(&pp->msg, FUNCTION_FILENAME, f);
    pb_message(&pp->out, PROFILE_FUNCTION, &pp->msg);
    return id;
}

/* One location per function and line: pprof shows lines, not instruction addresses. */
static uint64_t location_id(struct pprof *pp, const char *name, const char *file, unsigned line)
{
    uint64_t fn = function_id(pp, name, file), key = fn << 32 | line;
    uint32_t id = u64map_get(&pp->locations, key);
    if (id != UINT32_MAX)
        return id;
    id = ++pp->nlocations;
    pp->failed |= u64map_put(&pp->locations, key, id) != 0;
    pb_clear(&pp->sub);
    pb_uint(&pp->sub, LINE_FUNCTION_ID, fn);
    pb_int(&pp->sub, LINE_LINE, line);
    pb_clear(&pp->msg);
    pb_uint(&pp->msg, LOCATION_ID, id);
    pb_message(&pp->msg, LOCATION_LINE, &pp->sub);
    pb_message(&pp->out, PROFILE_LOCATION, &pp->msg);
    return id;
}

static uint64_t frame_location(struct pprof *pp, const struct model_frame *fr)
{
    char text[1200];
    const char *name = fr->function;
    if (!name || fr->marker) {
        model_frame_format(fr, text, sizeof text);
        name = text;
    }
    return location_id(pp, name, fr->file ? fr->file : fr->module ? fr->module : "", fr->file ? fr->line : 0);
}

/* The locations of a stack, leaf first: the call site, then the frames outside
 * looked-through code (the interpreter between Python frames, CUDA's libraries) above it,
 * as the text report reads the stack. Returns how many went to ids. */
static size_t stack_locations(struct pprof *pp, int proc, uint64_t stack, uint64_t *ids, size_t max)
{
    static struct model_frame frames[REPORT_MAX_FRAMES];
    size_t n = model_stack_frames(pp->m, proc, stack, frames, REPORT_MAX_FRAMES), k = 0;
    if (n > REPORT_MAX_FRAMES)
        n = REPORT_MAX_FRAMES;
    int all;
    size_t site = n ? stack_site(frames, n, &all) : 0;
    for (size_t i = site; i < n && k < max; i++)
        if (i == site || all || !frames[i].skipped || frames[i].marker)
            ids[k++] = frame_location(pp, &frames[i]);
    if (k == 0)
        ids[k++] = location_id(pp, "[no stack]", "", 0);
    return k;
}

static void add_label(struct pprof *pp, struct pb *to, const char *key, const char *value)
{
    pb_clear(&pp->sub);
    pb_int(&pp->sub, LABEL_KEY, str(pp, key));
    pb_int(&pp->sub, LABEL_STR, str(pp, value));
    pb_message(to, SAMPLE_LABEL, &pp->sub);
}

/* rank, host and device of process proc, kept framed for each of its samples */
static void process_labels(struct pprof *pp, int proc)
{
    const struct model_process *p = model_process(pp->m, proc);
    char buf[256];
    pb_clear(&pp->labels);
    if (p->rank >= 0) {
        snprintf(buf, sizeof buf, "%d", p->rank);
        add_label(pp, &pp->labels, "rank", buf);
    }
    add_label(pp, &pp->labels, "host", p->host ? p->host : "");
    int dev[16], nd = model_devices(pp->m, proc, dev, 16);
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < nd && i < 16 && n < sizeof buf; i++) /* one GPU per rank, mostly */
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%d", i ? "," : "", dev[i]);
    if (nd > 0)
        add_label(pp, &pp->labels, "device", buf);
}

struct sample {
    int proc;
    uint64_t stack;
    const char *pool_text; /* a tracked pool's own row: no stack of its own */
    uint32_t kinds;
    enum model_cache allocator;
    int64_t values[4];
    size_t nvalues;
};

static void add_sample(struct pprof *pp, const struct sample *s)
{
    uint64_t ids[REPORT_MAX_FRAMES], values[4];
    size_t n = s->pool_text ? (ids[0] = location_id(pp, s->pool_text, "", 0), 1)
                            : stack_locations(pp, s->proc, s->stack, ids, REPORT_MAX_FRAMES);
    for (size_t i = 0; i < s->nvalues; i++)
        values[i] = (uint64_t)s->values[i];
    struct pb sample = {0};
    pb_packed(&sample, SAMPLE_LOCATION_ID, ids, n);
    pb_packed(&sample, SAMPLE_VALUE, values, s->nvalues);
    pb_raw(&sample, pp->labels.p, pp->labels.n);
    char kinds[128];
    if (s->kinds) {
        report_format_kinds(kinds, sizeof kinds, s->kinds);
        add_label(pp, &sample, "kind", kinds);
    }
    add_label(pp, &sample, "allocator", s->allocator == MODEL_CACHE_NONE ? "cuda" : model_cache_name(s->allocator));
    pb_message(&pp->out, PROFILE_SAMPLE, &sample);
    pp->failed |= sample.oom;
    pb_free(&sample);
}

static uint32_t lowest_kind(uint32_t kinds)
{
    return kinds ? (uint32_t)__builtin_ctz(kinds) : 0;
}

/* The rows of process proc in the report's source, one per stack: every stack that
 * allocated, with nothing live too (alloc_space counts it). */
static int live_samples(struct pprof *pp, const struct report_options *o, int proc)
{
    struct model_query q;
    model_query_init(&q);
    q.group = MODEL_GROUP_STACK;
    q.proc = proc;
    q.unsorted = 1;
    if (o->supp && o->what == REPORT_LEAKS && suppressions_count(o->supp))
        q.supp = o->supp; /* what they suppress is left out, as from the text report */
    switch (o->what) {
    case REPORT_PEAK: q.source = MODEL_SOURCE_PEAK; break;
    case REPORT_SNAPSHOT: q.source = MODEL_SOURCE_SNAPSHOT; q.snapshot = o->snapshot; break;
    case REPORT_NOW: q.source = MODEL_SOURCE_NOW; break;
    default: q.source = MODEL_SOURCE_LEAKS; break;
    }
    struct model_table t;
    if (model_table_build(pp->m, &q, &t) != 0)
        return -1;
    for (size_t i = 0; i < t.n; i++) {
        const struct model_row *r = &t.rows[i];
        if (!r->live_bytes && !r->live_count && !r->allocs)
            continue;
        struct sample s = {.proc = r->stack_proc, .stack = r->stack, .kinds = r->kinds, .nvalues = 4,
                           .values = {(int64_t)r->allocs, (int64_t)r->alloc_bytes, (int64_t)r->live_count,
                                      (int64_t)r->live_bytes}};
        s.pool_text = r->pool ? r->text : NULL;
        s.allocator = r->pool ? r->pool : model_stack_allocator(pp->m, s.proc, s.stack, lowest_kind(r->kinds));
        add_sample(pp, &s);
    }
    model_table_free(&t);
    return 0;
}

/* The change of process proc from mark A to B, one sample per stack that changed. */
static int diff_samples(struct pprof *pp, const struct report_options *o, int proc)
{
    if (!report_has_snapshot(pp->m, o->diff_a, proc) || (o->diff_b && !report_has_snapshot(pp->m, o->diff_b, proc)))
        return 0; /* it never got to A or B: nothing to compare (as the text report) */
    struct report_options so = *o;
    so.group = MODEL_GROUP_STACK;
    struct model_diff d;
    if (report_diff_query(pp->m, &so, proc, &d) != 0)
        return -1;
    for (size_t i = 0; i < d.n; i++) {
        const struct model_diff_row *r = &d.rows[i];
        if (!r->delta_bytes && !r->delta_count)
            continue;
        struct sample s = {.proc = r->stack_proc, .stack = r->stack, .nvalues = 2,
                           .values = {r->delta_count, r->delta_bytes}};
        s.kinds = r->blocks ? 1u << CULEAK_KIND_BLOCK : 0;
        s.pool_text = r->pool ? r->text : NULL;
        s.allocator = r->pool ? r->pool
                              : model_stack_allocator(pp->m, s.proc, s.stack,
                                                      r->blocks ? CULEAK_KIND_BLOCK : CULEAK_KIND_DEVICE);
        add_sample(pp, &s);
    }
    model_diff_free(&d);
    return 0;
}

static void value_type(struct pprof *pp, unsigned field, const char *type, const char *unit)
{
    pb_clear(&pp->msg);
    pb_int(&pp->msg, VALUE_TYPE_TYPE, str(pp, type));
    pb_int(&pp->msg, VALUE_TYPE_UNIT, str(pp, unit));
    pb_message(&pp->out, field, &pp->msg);
}

/* Sample types in the order of Go's heap profiles, which Pyroscope and Parca know. */
static void header(struct pprof *pp, const struct report_options *o)
{
    int diff = o->what == REPORT_DIFF;
    if (!diff) {
        value_type(pp, PROFILE_SAMPLE_TYPE, "alloc_objects", "count");
        value_type(pp, PROFILE_SAMPLE_TYPE, "alloc_space", "bytes");
    }
    value_type(pp, PROFILE_SAMPLE_TYPE, "inuse_objects", "count");
    value_type(pp, PROFILE_SAMPLE_TYPE, "inuse_space", "bytes");
    value_type(pp, PROFILE_PERIOD_TYPE, "space", "bytes");
    pb_int(&pp->out, PROFILE_PERIOD, 1);
    pb_int(&pp->out, PROFILE_DEFAULT_SAMPLE_TYPE, str(pp, "inuse_space"));
    char what[600];
    switch (o->what) {
    case REPORT_PEAK: snprintf(what, sizeof what, "culeak: GPU memory live at the peak"); break;
    case REPORT_SNAPSHOT: snprintf(what, sizeof what, "culeak: GPU memory live at mark %.500s", o->snapshot); break;
    case REPORT_NOW: snprintf(what, sizeof what, "culeak: GPU memory live now"); break;
    case REPORT_DIFF:
        snprintf(what, sizeof what, "culeak: GPU memory change from mark %.250s to %.250s", o->diff_a,
                 o->diff_b ? o->diff_b : "now");
        break;
    default: snprintf(what, sizeof what, "culeak: GPU memory leaked (live at exit)"); break;
    }
    pb_int(&pp->out, PROFILE_COMMENT, str(pp, what));
    uint64_t start = UINT64_MAX, end = 0;
    for (int i = 0; i < model_process_count(pp->m); i++) {
        const struct model_process *p = model_process(pp->m, i);
        if (o->proc != MODEL_ALL && o->proc != i)
            continue;
        if (p->start_realtime_ns < start)
            start = p->start_realtime_ns;
        uint64_t ran = p->last_t_ns - p->start_monotonic_ns; /* process times are CLOCK_MONOTONIC's */
        if (p->start_realtime_ns + ran > end)
            end = p->start_realtime_ns + ran;
    }
    if (start != UINT64_MAX) {
        pb_int(&pp->out, PROFILE_TIME_NANOS, (int64_t)start);
        pb_int(&pp->out, PROFILE_DURATION_NANOS, (int64_t)(end - start));
    }
}

int report_pprof(FILE *f, struct model *m, const struct report_options *o)
{
    if (o->what == REPORT_SNAPSHOT && (!o->snapshot || model_snapshot_find(m, o->snapshot) < 0))
        return -1;
    struct pprof pp = {.m = m};
    strpool_init(&pp.strings);
    u64map_init(&pp.functions);
    u64map_init(&pp.locations);
    str(&pp, ""); /* string_table[0] */
    header(&pp, o);
    int rc = 0;
    for (int i = 0; rc == 0 && i < model_process_count(m); i++) {
        if (o->proc != MODEL_ALL && o->proc != i)
            continue;
        process_labels(&pp, i);
        rc = o->what == REPORT_DIFF ? diff_samples(&pp, o, i) : live_samples(&pp, o, i);
    }
    for (uint32_t i = 0; i < pp.strings.count; i++) {
        const char *s = strpool_get(&pp.strings, i);
        pb_bytes(&pp.out, PROFILE_STRING_TABLE, s, strlen(s));
    }
    if (rc == 0 && (pp.failed || pp.out.oom || pb_write_gzip(&pp.out, f) != 0))
        rc = -1;
    pb_free(&pp.out);
    pb_free(&pp.msg);
    pb_free(&pp.sub);
    pb_free(&pp.labels);
    strpool_free(&pp.strings);
    u64map_free(&pp.functions);
    u64map_free(&pp.locations);
    return rc;
}
