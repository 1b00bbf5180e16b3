/* What every report format shares: the query a report makes, sizes and kinds in words. */
#include "report_internal.h"
#include "stack_fold.h"
#include "model/suppress.h"
#include "common/text_escape.h"
#include "common/units.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void report_options_init(struct report_options *o)
{
    memset(o, 0, sizeof *o);
    o->what = REPORT_LEAKS;
    o->group = MODEL_GROUP_SITE;
    o->proc = MODEL_ALL;
}

void report_format_bytes(char *buf, size_t len, uint64_t bytes)
{
    if (bytes < 1024) {
        snprintf(buf, len, "%" PRIu64 " byte%s", bytes, bytes == 1 ? "" : "s");
        return;
    }
    char size[32];
    culeak_units_size(size, sizeof size, bytes, CULEAK_UNITS_ONE_DECIMAL);
    snprintf(buf, len, "%s (%" PRIu64 " bytes)", size, bytes);
}

void report_format_kinds(char *buf, size_t len, uint32_t kinds)
{
    size_t n = 0;
    buf[0] = 0;
    for (unsigned k = 0; k < CULEAK_KIND_COUNT && n < len; k++)
        if (kinds >> k & 1)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "+" : "", culeak_kind_name(k));
    if (!buf[0])
        snprintf(buf, len, "none");
}

static uint64_t count_distinct(uint32_t *ids, size_t n);

int report_stack_suppression(struct model *m, const struct suppressions *supp, int proc, uint64_t stack,
                             unsigned kind)
{
    return model_stack_suppression(m, supp, proc, stack, kind);
}

/* The leaks that one class of blocks (enum model_suppressed) suppresses. */
static int count_class(struct model *m, const struct report_options *o, int which, uint64_t *bytes,
                       uint64_t *allocations, uint64_t *sites)
{
    struct model_query q;
    model_query_init(&q);
    q.proc = o->proc;
    q.only_live = 1;
    q.source = MODEL_SOURCE_LEAKS;
    q.supp = o->supp;
    q.suppressed = which;
    struct model_table t;
    if (model_table_build(m, &q, &t) != 0)
        return -1;
    uint32_t *ids = malloc((t.n ? t.n : 1) * sizeof *ids);
    if (!ids) {
        model_table_free(&t);
        return -1;
    }
    for (size_t i = 0; i < t.n; i++) {
        *bytes += t.rows[i].live_bytes;
        *allocations += t.rows[i].live_count;
        ids[i] = t.rows[i].id; /* a site held by a cache and not is one site */
    }
    *sites = count_distinct(ids, t.n);
    free(ids);
    model_table_free(&t);
    return 0;
}

int report_count_suppressed(struct model *m, const struct report_options *o, struct report_summary *s,
                            uint64_t *used_bytes, uint64_t *used_count)
{
    s->suppressed_bytes = s->suppressed_allocations = s->suppressed_sites = 0;
    s->held_bytes = s->held_allocations = s->held_sites = 0;
    size_t nb = suppressions_count(o->supp), nuser = suppressions_user_count(o->supp);
    if (!o->supp || o->what != REPORT_LEAKS || !nb)
        return 0;
    if (nuser && count_class(m, o, MODEL_SUPP_ONLY_USER, &s->suppressed_bytes, &s->suppressed_allocations,
                             &s->suppressed_sites) != 0)
        return -1;
    if (nuser < nb &&
        count_class(m, o, MODEL_SUPP_ONLY_DEFAULT, &s->held_bytes, &s->held_allocations, &s->held_sites) != 0)
        return -1;
    if (!used_bytes)
        return 0;
    memset(used_bytes, 0, nb * sizeof *used_bytes);
    memset(used_count, 0, nb * sizeof *used_count);
    struct model_query q;
    model_query_init(&q);
    q.proc = o->proc;
    q.only_live = 1;
    q.source = MODEL_SOURCE_LEAKS;
    q.supp = o->supp;
    q.suppressed = MODEL_SUPP_ONLY;
    q.group = MODEL_GROUP_STACK; /* each stack (and kind) is suppressed by one block */
    struct model_table t;
    if (model_table_build(m, &q, &t) != 0)
        return -1;
    for (size_t i = 0; i < t.n; i++) {
        const struct model_row *r = &t.rows[i];
        unsigned kind = 0;
        while (kind < CULEAK_KIND_COUNT && !(r->kinds >> kind & 1))
            kind++;
        int b = report_stack_suppression(m, o->supp, r->proc, r->stack, kind);
        if (b >= 0) {
            used_bytes[b] += r->live_bytes;
            used_count[b] += r->live_count;
        }
    }
    model_table_free(&t);
    return 0;
}

int report_query(struct model *m, const struct report_options *o, struct model_table *t)
{
    struct model_query q;
    model_query_init(&q);
    if (o->supp && o->what == REPORT_LEAKS && suppressions_count(o->supp))
        q.supp = o->supp; /* what they suppress is left out */
    q.group = o->group;
    q.proc = o->proc;
    q.only_live = 1;
    switch (o->what) {
    case REPORT_PEAK: q.source = MODEL_SOURCE_PEAK; break;
    case REPORT_SNAPSHOT:
        q.source = MODEL_SOURCE_SNAPSHOT;
        q.snapshot = o->snapshot;
        if (!o->snapshot || model_snapshot_find(m, o->snapshot) < 0)
            return -1;
        break;
    case REPORT_NOW: q.source = MODEL_SOURCE_NOW; break;
    default: q.source = MODEL_SOURCE_LEAKS; break;
    }
    int rc = model_table_build(m, &q, t);
    if (q.source == MODEL_SOURCE_LEAKS) /* no blocks there: allocated would read 0 */
        memset(&t->memory, 0, sizeof t->memory);
    return rc;
}

void report_memory_add(struct model_memory *to, const struct model_memory *from)
{
    to->pools |= from->pools;
    to->allocated_bytes += from->allocated_bytes;
    to->allocated_blocks += from->allocated_blocks;
    to->reserved_bytes += from->reserved_bytes;
    to->reserved_segments += from->reserved_segments;
    to->other_bytes += from->other_bytes;
    to->other_count += from->other_count;
}

void summarize_table(const struct model_table *t, struct report_summary *s)
{
    memset(s, 0, sizeof *s);
    s->memory = t->memory;
    for (size_t i = 0; i < t->n; i++) {
        const struct model_row *r = &t->rows[i];
        if (r->pool && r->cache == MODEL_CACHE_NONE)
            continue; /* the memory the blocks lie in: in s->memory, no call site */
        if (r->cache != MODEL_CACHE_NONE) {
            s->cache_bytes += r->live_bytes;
            s->cache_allocations += r->live_count;
            s->cache_sites++;
        } else if (r->before_attach) {
            s->before_bytes += r->live_bytes;
            s->before_allocations += r->live_count;
        } else if (r->unended) {
            s->end_bytes += r->live_bytes;
            s->end_allocations += r->live_count;
        } else {
            s->bytes += r->live_bytes;
            s->allocations += r->live_count;
            s->sites++;
            s->reset_bytes += r->reset_bytes;
            s->reset_allocations += r->reset_count;
        }
    }
}

int report_summarize(struct model *m, const struct report_options *o, struct report_summary *s)
{
    struct model_table t;
    memset(s, 0, sizeof *s);
    if (report_split(m, o)) {
        struct report_parts ps;
        if (report_query_parts(m, o, &ps) != 0)
            return -1;
        *s = ps.total;
        report_parts_free(&ps);
        return report_count_suppressed(m, o, s, NULL, NULL);
    }
    if (report_query(m, o, &t) != 0)
        return -1;
    summarize_table(&t, s);
    model_table_free(&t);
    return report_count_suppressed(m, o, s, NULL, NULL);
}

/* Frames of a stack from the site outward: the innermost frames inside looked-through
 * modules are counted in *hidden, not returned; at most depth frames (0: all). */
size_t report_stack(struct model *m, int proc, uint64_t stack, int depth, struct model_frame *out, size_t max,
                    size_t *hidden)
{
    size_t n = model_stack_frames(m, proc, stack, out, max);
    if (n > max)
        n = max;
    int all;
    size_t skip = stack_site(out, n, &all);
    if (all) /* all inside libraries: show them all */
        skip = 0;
    memmove(out, out + skip, (n - skip) * sizeof *out);
    *hidden = skip;
    n -= skip;
    if (depth > 0 && n > (size_t)depth)
        n = (size_t)depth;
    return n;
}

int report_split(const struct model *m, const struct report_options *o)
{
    return o->proc == MODEL_ALL && !o->merge_processes && model_process_count(m) > 1;
}

/* Mirrors how model_snapshot_at_mark() takes its parts: at the process's first mark with
 * that label, or for a label of digits N before the first event after seq N (or at exit). */
int report_has_snapshot(const struct model *m, const char *name, int proc)
{
    const struct model_process *p = model_process(m, proc);
    if (!p || !name)
        return 0;
    if (model_label_is_seq(name)) {
        unsigned long long seq = strtoull(name, NULL, 10);
        return p->last_seq > seq || (p->exited && p->last_seq >= seq);
    }
    size_t n;
    const struct model_mark *mk = model_marks(m, proc, &n);
    for (size_t k = 0; k < n; k++)
        if (!strcmp(mk[k].label, name))
            return 1;
    return 0;
}

void report_process_name(const struct model *m, const struct report_options *o, int proc, char *buf, size_t len)
{
    const struct model_process *p = model_process(m, proc);
    /* pids are only unique per host: kept once, not compared per name */
    int hosts = o->proc == MODEL_ALL ? model_several_hosts(m)
                                     : strcmp(model_process(m, o->proc)->host, p->host) != 0;
    int n = snprintf(buf, len, "process %" PRIu64, p->pid);
    if (p->rank >= 0 && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " (rank %d)", p->rank);
    if (hosts && n >= 0 && (size_t)n + 4 < len) {
        memcpy(buf + n, " on ", 4);
        text_escape(buf + n + 4, len - (size_t)n - 4, p->host);
    }
}

static int id_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static uint64_t count_distinct(uint32_t *ids, size_t n)
{
    if (n > 1)
        qsort(ids, n, sizeof *ids, id_cmp);
    uint64_t d = 0;
    for (size_t i = 0; i < n; i++)
        d += i == 0 || ids[i] != ids[i - 1];
    return d;
}

void report_parts_free(struct report_parts *ps)
{
    for (int i = 0; i < ps->n; i++)
        model_table_free(&ps->p[i].t);
    free(ps->p);
    memset(ps, 0, sizeof *ps);
}

int report_query_parts(struct model *m, const struct report_options *o, struct report_parts *ps)
{
    memset(ps, 0, sizeof *ps);
    int np = model_process_count(m);
    if (!(ps->p = calloc(np > 0 ? (size_t)np : 1, sizeof *ps->p)))
        return -1;
    size_t nrows = 0;
    for (int i = 0; i < np; i++) {
        if (o->proc != MODEL_ALL && o->proc != i)
            continue;
        struct report_part *pt = &ps->p[ps->n];
        struct report_options po = *o;
        po.proc = i;
        if (report_query(m, &po, &pt->t) != 0) {
            report_parts_free(ps);
            return -1;
        }
        ps->n++;
        pt->proc = i;
        pt->present = o->what != REPORT_SNAPSHOT || report_has_snapshot(m, o->snapshot, i);
        summarize_table(&pt->t, &pt->s);
        struct report_summary *t = &ps->total;
        t->bytes += pt->s.bytes;
        t->allocations += pt->s.allocations;
        t->cache_bytes += pt->s.cache_bytes;
        t->cache_allocations += pt->s.cache_allocations;
        t->before_bytes += pt->s.before_bytes;
        t->before_allocations += pt->s.before_allocations;
        t->end_bytes += pt->s.end_bytes;
        t->end_allocations += pt->s.end_allocations;
        t->reset_bytes += pt->s.reset_bytes;
        t->reset_allocations += pt->s.reset_allocations;
        report_memory_add(&t->memory, &pt->s.memory);
        nrows += pt->t.n;
    }
    /* the same site in several processes is one call site of the program */
    uint32_t *ids = malloc((nrows ? nrows : 1) * sizeof *ids), *cids = malloc((nrows ? nrows : 1) * sizeof *cids);
    if (!ids || !cids) {
        free(ids);
        free(cids);
        report_parts_free(ps);
        return -1;
    }
    size_t n = 0, nc = 0;
    for (int i = 0; i < ps->n; i++)
        for (size_t r = 0; r < ps->p[i].t.n; r++) {
            const struct model_row *row = &ps->p[i].t.rows[r];
            if (row->pool && row->cache == MODEL_CACHE_NONE)
                continue; /* a pool's segments: no call site */
            if (row->cache != MODEL_CACHE_NONE)
                cids[nc++] = row->id;
            else if (!row->before_attach && !row->unended)
                ids[n++] = row->id;
        }
    ps->total.sites = count_distinct(ids, n);
    ps->total.cache_sites = count_distinct(cids, nc);
    free(ids);
    free(cids);
    return 0;
}

void report_diff_parts_free(struct report_diff_parts *dp)
{
    for (int i = 0; i < dp->n; i++)
        model_diff_free(&dp->p[i].d);
    free(dp->p);
    memset(dp, 0, sizeof *dp);
}

int report_diff_query(struct model *m, const struct report_options *o, int proc, struct model_diff *d)
{
    struct model_query q;
    model_query_init(&q);
    q.group = o->group;
    q.proc = proc;
    return model_diff(m, o->diff_a, o->diff_b_is_now ? NULL : o->diff_b, &q, d);
}

int report_diff_parts(struct model *m, const struct report_options *o, struct report_diff_parts *dp)
{
    memset(dp, 0, sizeof *dp);
    const char *b = o->diff_b_is_now ? NULL : o->diff_b;
    if (!o->diff_a || model_snapshot_find(m, o->diff_a) < 0 || (b && model_snapshot_find(m, b) < 0))
        return -1;
    int np = model_process_count(m);
    if (!(dp->p = calloc(np > 0 ? (size_t)np : 1, sizeof *dp->p)))
        return -1;
    for (int i = 0; i < np; i++) {
        if (o->proc != MODEL_ALL && o->proc != i)
            continue;
        struct report_diff_part *pt = &dp->p[dp->n++];
        pt->proc = i;
        pt->has_a = report_has_snapshot(m, o->diff_a, i);
        /* B is "now" only for the processes that stopped at it; the others never got there */
        pt->has_b = !o->diff_b || report_has_snapshot(m, o->diff_b, i);
        if (!pt->has_a || !pt->has_b) {
            dp->missing++;
            continue;
        }
        if (report_diff_query(m, o, i, &pt->d) != 0) {
            report_diff_parts_free(dp);
            return -1;
        }
        dp->delta_bytes += pt->d.delta_bytes;
        dp->delta_block_bytes += pt->d.delta_block_bytes;
        dp->new_bytes += pt->d.new_bytes;
        dp->new_count += pt->d.new_count;
    }
    return 0;
}
