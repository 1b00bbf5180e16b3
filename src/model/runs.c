/* Runs: processes that ran at the same time. Recordings of two runs of a job opened
 * together (or a job whose processes ran one after another) never had their memory live
 * together: their peaks do not add up. A process starts a new run when every process
 * before it had ended (its exit, or its stream's end) before it started; the peaks of
 * all processes are then the best run's, and a site's peak counts the live bytes of the
 * current run only. Within a run, peaks are as before. */
#include "model_internal.h"

#include <stdlib.h>
#include <string.h>

/* Wall-clock ns of a process's start and of its latest record. */
static uint64_t wall_start(const struct process *p) { return p->pub.start_realtime_ns; }
static uint64_t wall_end(const struct process *p)
{
    uint64_t ran = p->pub.last_t_ns > p->pub.start_monotonic_ns ? p->pub.last_t_ns - p->pub.start_monotonic_ns : 0;
    return p->pub.start_realtime_ns + ran;
}

static int new_run(const struct model *m, const struct process *p)
{
    int before = 0;
    for (int i = 0; i < m->nprocs; i++) {
        const struct process *q = m->procs[i];
        if (q == p)
            continue;
        before = 1;
        if (!(q->pub.exited || q->stream_ended) || wall_end(q) >= wall_start(p))
            return 0;
    }
    return before;
}

static void keep_best(struct model_counter *best, const struct model_counter *c)
{
    if (c->peak_bytes > best->peak_bytes) {
        best->peak_bytes = c->peak_bytes;
        best->peak_t_ns = c->peak_t_ns;
        best->peak_seq = c->peak_seq;
    }
}

void runs_on_start(struct model *m, struct process *p)
{
    if (!new_run(m, p)) {
        p->run = m->nruns ? m->nruns - 1 : 0;
        if (!m->nruns)
            m->nruns = 1;
        return;
    }
    /* the sites' live bytes now are the earlier runs': the new run's peaks start over */
    uint64_t *base = realloc(m->site_run_base, (m->nsites ? m->nsites : 1) * CULEAK_KIND_COUNT * sizeof *base);
    if (!base) {
        p->run = m->nruns - 1; /* out of memory: counted with the run before, as if together */
        return;
    }
    m->site_run_base = base;
    m->site_run_base_sites = m->nsites;
    for (size_t s = 0; s < m->nsites; s++)
        memcpy(&base[s * CULEAK_KIND_COUNT], m->sites[s].live, CULEAK_KIND_COUNT * sizeof *base);
    for (int k = 0; k < MODEL_KIND_SLOTS; k++) {
        keep_best(&m->run_best[k], &m->run_now[k]);
        memset(&m->run_now[k], 0, sizeof m->run_now[k]);
    }
    p->run = m->nruns++;
}

void runs_peak(const struct model *m, int kind, struct model_counter *out)
{
    if (m->nruns < 2)
        return;
    struct model_counter best = m->run_best[kind];
    keep_best(&best, &m->run_now[kind]);
    out->peak_bytes = best.peak_bytes;
    out->peak_t_ns = best.peak_t_ns;
    out->peak_seq = best.peak_seq;
}

/* A process's peak on device (0 when it never used it). */
static uint64_t device_peak(const struct process *p, int device, int kind)
{
    uint64_t sum = 0;
    for (int d = 0; d < p->ndev; d++)
        if (p->devices[d] == device)
            sum += p->counters[d + 1][kind].peak_bytes;
    return sum;
}

/* Each run's sum in one pass over the processes: a job of thousands of processes one
 * after another has as many runs, and the header asks at every redraw (a pass per run
 * made the console's time grow with the square of the processes). */
void runs_device_peak(const struct model *m, int device, int kind, struct model_counter *out)
{
    if (m->nruns < 2)
        return;
    uint64_t *sums = calloc(m->nruns, sizeof *sums), best = 0;
    for (int i = 0; sums && i < m->nprocs; i++)
        if (m->procs[i]->run < m->nruns)
            sums[m->procs[i]->run] += device_peak(m->procs[i], device, kind);
    for (uint32_t r = 0; r < m->nruns; r++) {
        uint64_t sum = 0;
        if (sums)
            sum = sums[r];
        else /* out of memory: a pass per run, as slow as it was */
            for (int i = 0; i < m->nprocs; i++)
                sum += m->procs[i]->run == r ? device_peak(m->procs[i], device, kind) : 0;
        best = sum > best ? sum : best;
    }
    free(sums);
    out->peak_bytes = best;
}

int model_runs(const struct model *m) { return m->nruns > 1 ? (int)m->nruns : 1; }
