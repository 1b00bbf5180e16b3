/* The model object: creation, processes, totals and the small lookups around them. */
#include "common/aggregate.h"
#include "model_internal.h"
#include "pyframes.h"
#include "common/wire.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

struct model *model_new(const struct model_options *opt)
{
    struct model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    if (opt)
        m->opt = *opt;
    if (!m->opt.timeline_capacity)
        m->opt.timeline_capacity = 2048;
    if (m->opt.timeline_capacity < 4)
        m->opt.timeline_capacity = 4;
    if (!m->opt.timeline_step_ns)
        m->opt.timeline_step_ns = 1000000;
    if (!m->opt.failure_snapshots)
        m->opt.failure_snapshots = 16;
    /* each model counts from its own start: 2^40 changes apart */
    static atomic_uint_fast64_t models_made;
    m->generation = (uint64_t)atomic_fetch_add(&models_made, 1) << 40;
    strpool_init(&m->strings);
    strpool_init(&m->module_paths);
    for (int g = 0; g < MODEL_GROUP_COUNT; g++)
        strpool_init(&m->group_keys[g]);
    live_table_init(&m->live);
    m->sym = symbolizer_new(&m->strings);
    if (!m->sym) {
        free(m);
        return NULL;
    }
    modules_configure(m);
    /* module 0: addresses in no known module */
    strpool_id(&m->module_paths, "?", 1);
    m->modules_cap = 16;
    m->modules = calloc(m->modules_cap, sizeof *m->modules);
    if (!m->modules) {
        model_free(m);
        return NULL;
    }
    m->modules[0].path = m->modules[0].name = strpool_intern(&m->strings, "?", 1);
    return m;
}

static void process_free(struct process *p)
{
    free(p->parent);
    free(p->ip);
    free(p->units);
    u64map_free(&p->unit_index);
    u64map_free(&p->ctx_index);
    u64map_free(&p->live_count);
    u64map_free(&p->retains);
    free(p->ranges);
    free(p->counters);
    for (int i = 0; i <= MODEL_MAX_DEVICES; i++)
        series_free(&p->series[i]);
    free(p->marks);
    moments_free(p);
    growth_free(p->growth);
    free(p->pub.argv);
    free(p);
}

void model_free(struct model *m)
{
    if (!m)
        return;
    streams_parked_free(m);
    for (int i = 0; i < m->nprocs; i++)
        process_free(m->procs[i]);
    free(m->procs);
    snapshots_free(m);
    for (size_t i = 0; i < m->nfailures; i++)
        state_free(&m->failures[i].state);
    free(m->failures);
    free(m->holdings);
    free(m->walks);
    free(m->failures_pub);
    live_table_free(&m->live);
    free(m->sites);
    free(m->site_peaks);
    free(m->site_run_base);
    free(m->site_names);
    free(m->row_slots);
    u64map_free(&m->site_index);
    u64map_free(&m->proc_starts);
    u64map_free(&m->site_index_abs);
    u64map_free(&m->stack_rows);
    free(m->stack_row_keys);
    for (int g = 0; g < MODEL_GROUP_COUNT; g++)
        strpool_free(&m->group_keys[g]);
    symbolizer_free(m->sym);
    pyframes_free(m);
    free(m->modules);
    for (size_t i = 0; i < m->nskip; i++)
        free(m->skip_globs[i]);
    free(m->skip_globs);
    for (size_t i = 0; i < m->nskip_fn; i++)
        free(m->skip_fn_globs[i]);
    free(m->skip_fn_globs);
    strpool_free(&m->module_paths);
    strpool_free(&m->strings);
    free(m->stop_label);
    free(m->supp_frames);
    u64map_free(&m->supp_shared);
    u64map_free(&m->frame_skips);
    free(m);
}

struct process *model_add_process(struct model *m)
{
    if (m->nprocs >= MODEL_MAX_PROCESSES)
        return NULL;
    struct process **np = realloc(m->procs, (size_t)(m->nprocs + 1) * sizeof *np);
    if (!np)
        return NULL;
    m->procs = np;
    struct process *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    /* small to start with: a job of thousands of processes has many that make few
     * stacks and use one device, and each row of counters is 1.4 KiB */
    p->frames_cap = 64;
    p->parent = malloc(p->frames_cap * sizeof *p->parent);
    p->ip = malloc(p->frames_cap * sizeof *p->ip);
    p->counters = calloc(1, sizeof *p->counters);
    if (!p->parent || !p->ip || !p->counters) {
        process_free(p);
        return NULL;
    }
    p->parent[0] = 0;
    p->ip[0] = 0;
    p->nframes = 1;
    p->peak_epoch = 1;
    p->supp_epoch = 1;
    p->pub.index = m->nprocs;
    p->pub.rank = -1;
    p->pub.exit_status = -1;
    p->pub.host = p->pub.exe = p->pub.last_note = "";
    u64map_init(&p->unit_index);
    u64map_init(&p->ctx_index);
    u64map_init(&p->live_count);
    u64map_init(&p->retains);
    m->procs[m->nprocs++] = p;
    return p;
}

/* the aggregated recording's filter counts the same kinds, so its peaks are the model's */
int model_kind_is_device_memory(unsigned kind) { return culeak_agg_kind_is_device_memory(kind); }

int model_process_count(const struct model *m) { return m->nprocs; }

int model_several_hosts(const struct model *m) { return m->several_hosts; }

const struct model_process *model_process(const struct model *m, int proc)
{
    struct process *p = model_proc(m, proc);
    return p ? &p->pub : NULL;
}

void model_process_set_exit_status(struct model *m, int proc, int wstatus)
{
    struct process *p = model_proc(m, proc);
    if (p)
        p->pub.exit_status = wstatus;
    model_changed(m);
}

int model_process_exited_by_status(struct model *m, int proc, int wstatus)
{
    struct process *p = model_proc(m, proc);
    if (!p || p->pub.exited)
        return 0;
    p->pub.exit_status = wstatus;
    model_changed(m);
    if (!WIFEXITED(wstatus))
        return 0;
    p->pub.exited = 1;
    p->pub.exit_reason = CULEAK_EXIT_NORMAL;
    return 1;
}

void model_set_observer(struct model *m, const struct model_observer *obs)
{
    if (obs)
        m->obs = *obs;
    else
        memset(&m->obs, 0, sizeof m->obs);
}

void model_stop_at_mark(struct model *m, const char *label)
{
    free(m->stop_label);
    m->stop_label = label ? strdup(label) : NULL;
}

uint64_t model_event_count(const struct model *m) { return m->events; }

uint64_t model_generation(const struct model *m) { return m->generation; }

static void counter_sum(struct model_counter *to, const struct model_counter *c)
{
    to->live_bytes += c->live_bytes;
    to->live_count += c->live_count;
    to->peak_bytes += c->peak_bytes;
    if (c->peak_t_ns > to->peak_t_ns)
        to->peak_t_ns = c->peak_t_ns;
    to->allocs += c->allocs;
    to->frees += c->frees;
    to->failed += c->failed;
    to->failed_bytes += c->failed_bytes;
    to->reset_bytes += c->reset_bytes;
    to->reset_count += c->reset_count;
}

static int device_slot(const struct process *p, int device)
{
    if (device == MODEL_ALL)
        return 0;
    for (int i = 0; i < p->ndev; i++)
        if (p->devices[i] == device)
            return i + 1;
    return -1;
}

void model_totals(const struct model *m, int proc, int device, int kind, struct model_counter *out)
{
    memset(out, 0, sizeof *out);
    if (kind < 0 || kind >= MODEL_KIND_SLOTS)
        return;
    if (proc == MODEL_ALL && device == MODEL_ALL) {
        *out = m->global[kind];
        runs_peak(m, kind, out);
        return;
    }
    for (int i = 0; i < m->nprocs; i++) {
        if (proc != MODEL_ALL && proc != i)
            continue;
        int slot = device_slot(m->procs[i], device);
        if (slot < 0)
            continue;
        if (proc != MODEL_ALL) {
            *out = m->procs[i]->counters[slot][kind];
            return;
        }
        counter_sum(out, &m->procs[i]->counters[slot][kind]);
    }
    runs_device_peak(m, device, kind, out);
}

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int model_devices(const struct model *m, int proc, int *out, int max)
{
    int all[MODEL_MAX_DEVICES * 4], n = 0;
    for (int i = 0; i < m->nprocs; i++) {
        if (proc != MODEL_ALL && proc != i)
            continue;
        const struct process *p = m->procs[i];
        for (int d = 0; d < p->ndev; d++) {
            int seen = 0;
            for (int k = 0; k < n; k++)
                seen |= all[k] == p->devices[d];
            if (!seen && n < (int)(sizeof all / sizeof *all))
                all[n++] = p->devices[d];
        }
    }
    qsort(all, (size_t)n, sizeof *all, int_cmp);
    for (int i = 0; i < n && i < max; i++)
        out[i] = all[i];
    return n;
}

const struct model_mark *model_marks(const struct model *m, int proc, size_t *n)
{
    struct process *p = model_proc(m, proc);
    *n = p ? p->nmarks : 0;
    return p ? p->marks : NULL;
}

const struct model_failure *model_failures(const struct model *m, size_t *n)
{
    *n = m->nfailures;
    return m->failures_pub;
}

static const char *const group_names[MODEL_GROUP_COUNT] = {"site", "function", "file", "module", "stack"};
static const char *const field_names[MODEL_FIELD_COUNT] = {
    "id", "live_bytes", "live_count", "peak_bytes", "allocs", "frees", "failed",
    "first_seen", "last_seen", "text", "module", "leaked_bytes", "delta_bytes",
};

const char *model_group_name(enum model_group g) { return (unsigned)g < MODEL_GROUP_COUNT ? group_names[g] : "?"; }

int model_group_by_name(const char *name)
{
    for (int i = 0; i < MODEL_GROUP_COUNT; i++)
        if (strcmp(name, group_names[i]) == 0)
            return i;
    return -1;
}


int model_field_by_name(const char *name)
{
    for (int i = 0; i < MODEL_FIELD_COUNT; i++)
        if (strcmp(name, field_names[i]) == 0)
            return i;
    return -1;
}

int model_process_running(const struct model_process *p) { return !p->exited && !p->ended; }
int model_process_unended(const struct model_process *p) { return !p->exited && p->exit_status < 0; }

const char *model_cache_name(enum model_cache c)
{
    const struct culeak_framework *f = culeak_framework(c);
    return f ? f->name : "";
}

void model_query_init(struct model_query *q)
{
    memset(q, 0, sizeof *q);
    q->group = MODEL_GROUP_SITE;
    q->proc = MODEL_ALL;
    q->sort = MODEL_FIELD_LIVE_BYTES;
    q->source = MODEL_SOURCE_NOW;
}
