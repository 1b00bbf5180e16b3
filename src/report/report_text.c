/* Human-readable reports: processes, then one entry per row with its stack, then a
 * compute-sanitizer-like summary line. */
#include "report_internal.h"
#include "stack_fold.h"
#include "model/suppress.h"
#include "common/text_escape.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Processes by pid, for finding each one's parent. */
static const struct model *pid_order_model;
static int by_pid(const void *a, const void *b)
{
    uint64_t x = model_process(pid_order_model, *(const int *)a)->pid;
    uint64_t y = model_process(pid_order_model, *(const int *)b)->pid;
    return x < y ? -1 : x > y;
}

/* For each process, the process of the model that started it (its ppid, on its host), or
 * -1; NULL out of memory. O(n log n): a job may have thousands of processes. */
static int *report_parents(const struct model *m)
{
    int n = model_process_count(m);
    int *order = malloc((size_t)(n ? n : 1) * sizeof *order), *parent = malloc((size_t)(n ? n : 1) * sizeof *parent);
    if (!order || !parent) {
        free(order);
        free(parent);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        order[i] = i;
    pid_order_model = m;
    qsort(order, (size_t)n, sizeof *order, by_pid);
    for (int i = 0; i < n; i++) {
        const struct model_process *p = model_process(m, i);
        parent[i] = -1;
        int lo = 0, hi = n;
        while (lo < hi) { /* the first of pid >= ppid */
            int mid = lo + (hi - lo) / 2;
            if (model_process(m, order[mid])->pid < p->ppid)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (int k = lo; k < n && model_process(m, order[k])->pid == p->ppid; k++)
            if (order[k] != i && !strcmp(model_process(m, order[k])->host, p->host))
                parent[i] = order[k];
    }
    free(order);
    return parent;
}

static void print_processes(FILE *f, struct model *m, const struct report_options *o)
{
    int *parent = report_parents(m);
    for (int i = 0; i < model_process_count(m); i++) {
        if (o->proc != MODEL_ALL && o->proc != i)
            continue;
        const struct model_process *p = model_process(m, i);
        fprintf(f, "culeak: process %" PRIu64, p->pid);
        if (p->rank >= 0)
            fprintf(f, " (rank %d)", p->rank);
        fputs(" on ", f);
        text_write_escaped(f, p->host);
        fputc(':', f);
        for (size_t a = 0; a < p->argc && a < 8; a++) {
            fputc(' ', f);
            text_write_escaped(f, p->argv[a]);
        }
        if (p->argc > 8)
            fputs(" ...", f);
        if (parent && parent[i] >= 0)
            fprintf(f, " [child of process %" PRIu64 "]", model_process(m, parent[i])->pid);
        if (p->corrupt)
            fputs(" [recording corrupt: read up to the damage]", f);
        else if (p->truncated)
            fputs(" [recording cut off: read up to the cut]", f);
        else if (!p->exited && o->what == REPORT_DIFF && o->diff_b_is_now && report_has_snapshot(m, o->diff_b, i))
            fprintf(f, " [read up to mark '%s']", o->diff_b); /* stopped there on purpose */
        else if (model_process_unended(p))
            fputs(" [no exit seen: what is live when the recording ends is not judged]", f);
        else if (!p->exited)
            fputs(" [no exit seen: live memory counted as leaked]", f);
        if (p->unknown_frees)
            fprintf(f, " [%" PRIu64 " frees of unknown addresses]", p->unknown_frees);
        if (p->failed_allocs)
            fprintf(f, " [%" PRIu64 " failed allocations]", p->failed_allocs);
        if (p->lost_events)
            fprintf(f, " [%" PRIu64 " events lost while the reader was stopped]", p->lost_events);
        if (p->aggregated_ns) /* record --aggregate: what the recording does not have */
            fprintf(f, " [aggregated every %g s: %" PRIu64 " allocations freed within their interval are counted, "
                       "not recorded; no per-event timeline inside an interval]",
                    (double)p->aggregated_ns / 1e9, p->folded);
        fputc('\n', f);
        if (p->untraced) { /* the recording says what the run said of what went untraced */
            fputs("culeak:   untraced: ", f);
            text_write_escaped(f, p->untraced_note);
            fprintf(f, "%s\n", p->untraced > 1 ? " (and more)" : "");
        }
        if (o->what == REPORT_PEAK) {
            struct model_counter c;
            char b[64];
            model_totals(m, i, MODEL_ALL, MODEL_KIND_DEVICE_MEMORY, &c);
            report_format_bytes(b, sizeof b, c.peak_bytes);
            fprintf(f, "culeak:   peak device memory %s at %.3f s (event %" PRIu64 ")\n", b,
                    (double)(c.peak_t_ns - p->start_monotonic_ns) / 1e9, c.peak_seq);
        }
    }
    free(parent);
}

void report_print_stack(FILE *f, struct model *m, int proc, uint64_t stack, int depth)
{
    static struct model_frame frames[REPORT_MAX_FRAMES];
    static struct stack_line lines[REPORT_MAX_FRAMES];
    size_t hidden;
    size_t n = report_stack(m, proc, stack, depth, frames, REPORT_MAX_FRAMES, &hidden);
    size_t nl = stack_lines(frames, n, 1, lines);
    for (size_t i = 0; i < nl; i++) {
        char buf[1200];
        if (lines[i].count) {
            fputs("  ", f);
            text_write_escaped(f, stack_line_text(&lines[i], frames, buf, sizeof buf));
            fputc('\n', f);
            continue;
        }
        const struct model_frame *fr = &frames[lines[i].frame];
        model_frame_format(fr, buf, sizeof buf);
        fprintf(f, "    #%-2zu ", lines[i].frame);
        text_write_escaped(f, buf);
        fprintf(f, "%s\n", fr->inlined ? " (inlined)" : "");
    }
    if (n == 0)
        fputs("    (no stack recorded)\n", f);
}

/* "HELD BY": the chains of Python references that keep the row's blocks alive. */
static void print_holders(FILE *f, struct model *m, enum model_group g, const struct model_row *r)
{
    struct model_holders h[8];
    size_t n = model_row_holders(m, g, r->id, h, 8);
    for (size_t i = 0; i < n; i++) {
        char bytes[64];
        report_format_bytes(bytes, sizeof bytes, h[i].bytes);
        fputs("    HELD BY ", f);
        text_write_escaped(f, h[i].words);
        fprintf(f, ": %" PRIu64 " block%s, %s\n", h[i].blocks, h[i].blocks == 1 ? "" : "s", bytes);
    }
}

/* How the holders changed from mark to mark (walks at marks: record --holders), when they
 * did: the latest changes, one line per chain. */
static void print_holder_changes(FILE *f, struct model *m, enum model_group g, const struct model_row *r)
{
    const struct model_holder_walk *w[REPORT_HOLDER_CHANGES];
    size_t total, n = model_row_holder_changes(m, g, r->id, w, REPORT_HOLDER_CHANGES, &total);
    if (total < 2)
        return;
    if (total > n)
        fprintf(f, "    (%zu earlier changes of who holds them at marks not shown)\n", total - n);
    for (size_t i = 0; i < n; i++) {
        struct model_holders h[8];
        size_t k = model_row_holders_walk(m, g, r->id, w[i]->proc, w[i]->walk, h, 8);
        for (size_t j = 0; j < k; j++) {
            char bytes[64];
            report_format_bytes(bytes, sizeof bytes, h[j].bytes);
            fputs("    at mark \"", f);
            text_write_escaped(f, w[i]->mark ? w[i]->mark : "");
            fputs("\": HELD BY ", f);
            text_write_escaped(f, h[j].words);
            fprintf(f, ": %" PRIu64 " block%s, %s\n", h[j].blocks, h[j].blocks == 1 ? "" : "s", bytes);
        }
    }
}

static void print_row(FILE *f, struct model *m, const struct report_options *o, const struct model_row *r,
                      const char *verb)
{
    char bytes[64], kinds[128];
    report_format_bytes(bytes, sizeof bytes, r->live_bytes);
    report_format_kinds(kinds, sizeof kinds, r->kinds);
    if (r->pool) { /* the segments its blocks (other rows) lie in: no site of their own */
        fprintf(f, "\n%s %s in %" PRIu64 " segment%s (%s): %s\n", verb, bytes, r->live_count,
                r->live_count == 1 ? "" : "s", kinds, r->text);
        if (o->what == REPORT_LEAKS) /* its blocks are no leaks: who kept them to the end is */
            print_holders(f, m, MODEL_GROUP_COUNT, r);
        return;
    }
    fprintf(f, "\n%s %s in %" PRIu64 " allocation%s (%s) from ", verb, bytes, r->live_count,
            r->live_count == 1 ? "" : "s", kinds);
    text_write_escaped(f, r->text);
    if (r->cache != MODEL_CACHE_NONE)
        fprintf(f, " [held by the %s caching allocator]", model_cache_name(r->cache));
    if (r->proc >= 0)
        fprintf(f, " [pid %" PRIu64 "]", model_process(m, r->proc)->pid);
    fputc('\n', f);
    if (r->threads > 1) /* the main thread goes without saying */
        fprintf(f, "    allocated on several threads (the first: thread %" PRIu64 ")\n", r->tid);
    else if (r->threads == 1 && !r->main_thread)
        fprintf(f, "    allocated on thread %" PRIu64 ", not the main thread\n", r->tid);
    if (o->what == REPORT_LEAKS && r->reset_count)
        fprintf(f, "    %" PRIu64 " of them still live when their context was destroyed or device reset\n",
                r->reset_count);
    if (r->before_attach) { /* no stack: the inventory found it */
        fputs("    live when culeak attached, made before it: where and why is unknown, so it is not judged\n", f);
        return;
    }
    if (r->unended) /* the process ran on: it may have freed it later */
        fputs("    live when the recording ends, before its process did: not judged\n", f);
    if (r->nstacks > 1)
        fprintf(f, "    from %" PRIu32 " stacks; the one with the most bytes:\n", r->nstacks);
    report_print_stack(f, m, r->stack_proc, r->stack, o->depth);
    print_holders(f, m, o->group, r);
    print_holder_changes(f, m, o->group, r);
}

/* "+2.0 MiB (2097152 bytes)" */
static const char *signed_bytes(char *buf, size_t len, int64_t delta)
{
    char b[64];
    report_format_bytes(b, sizeof b, (uint64_t)(delta < 0 ? -delta : delta));
    snprintf(buf, len, "%s%s", delta < 0 ? "-" : "+", b);
    return buf;
}

static int64_t delta_of(uint64_t a, uint64_t b) { return (int64_t)b - (int64_t)a; }

/* With tensor tracking: the change and each side in PyTorch's words; allocated lies in
 * reserved, and live is reserved plus what is outside the pools. */
static void diff_memory_header(FILE *f, const char *a, const char *b, const struct model_diff *d)
{
    char b1[80], b2[80], b3[80], b4[80];
    fprintf(f, "culeak: %s -> %s: allocated %s, reserved %s, %s outside the pools (live %s)\n", a, b,
            signed_bytes(b1, sizeof b1, delta_of(d->a.allocated_bytes, d->b.allocated_bytes)),
            signed_bytes(b2, sizeof b2, delta_of(d->a.reserved_bytes, d->b.reserved_bytes)),
            signed_bytes(b3, sizeof b3, delta_of(d->a.other_bytes, d->b.other_bytes)),
            signed_bytes(b4, sizeof b4, d->delta_bytes));
    const struct model_memory *side[2] = {&d->a, &d->b};
    for (int i = 0; i < 2; i++) {
        report_format_bytes(b1, sizeof b1, side[i]->allocated_bytes);
        report_format_bytes(b2, sizeof b2, side[i]->reserved_bytes);
        report_format_bytes(b3, sizeof b3, side[i]->other_bytes);
        fprintf(f, "culeak:   at %s: allocated %s in %" PRIu64 " block%s, reserved %s in %" PRIu64
                   " segment%s, %s outside the pools\n",
                i ? b : a, b1, side[i]->allocated_blocks, side[i]->allocated_blocks == 1 ? "" : "s", b2,
                side[i]->reserved_segments, side[i]->reserved_segments == 1 ? "" : "s", b3);
    }
}

static void diff_text_body(FILE *f, struct model *m, const struct report_options *o, const struct model_diff *d)
{
    char b1[64];
    const char *b = o->diff_b ? o->diff_b : "now";
    if (d->a.pools) {
        diff_memory_header(f, o->diff_a, b, d);
    } else {
        report_format_bytes(b1, sizeof b1, (uint64_t)(d->delta_bytes < 0 ? -d->delta_bytes : d->delta_bytes));
        fprintf(f, "culeak: %s -> %s: %s%s live", o->diff_a, b, d->delta_bytes < 0 ? "-" : "+", b1);
        if (d->delta_block_bytes || d->new_block_count) {
            report_format_bytes(b1, sizeof b1,
                                (uint64_t)(d->delta_block_bytes < 0 ? -d->delta_block_bytes : d->delta_block_bytes));
            fprintf(f, "; %s%s in pool blocks", d->delta_block_bytes < 0 ? "-" : "+", b1);
        }
        fputc('\n', f);
    }
    for (size_t i = 0; i < d->n; i++) {
        const struct model_diff_row *r = &d->rows[i];
        if (r->pool)
            continue; /* after the sites: the memory they lie in */
        fprintf(f, "  %+" PRId64 " bytes (%" PRIu64 " -> %" PRIu64 " bytes, %" PRIu64 " -> %" PRIu64 " %s) ",
                r->delta_bytes, r->bytes_a, r->bytes_b, r->count_a, r->count_b, r->blocks ? "blocks" : "allocations");
        text_write_escaped(f, r->text);
        fputc('\n', f);
    }
    for (size_t i = 0; i < d->n; i++) {
        const struct model_diff_row *r = &d->rows[i];
        char b2[80];
        if (r->pool)
            fprintf(f, "  %s %s (%" PRIu64 " -> %" PRIu64 " bytes, %" PRIu64 " -> %" PRIu64 " segments)\n", r->text,
                    signed_bytes(b2, sizeof b2, r->delta_bytes), r->bytes_a, r->bytes_b, r->count_a, r->count_b);
    }
    report_format_bytes(b1, sizeof b1, d->new_bytes);
    fprintf(f, "\nculeak: made after %s and still live at %s: %s in %" PRIu64 " allocations", o->diff_a, b, b1,
            d->new_count);
    if (d->new_block_count) {
        report_format_bytes(b1, sizeof b1, d->new_block_bytes);
        fprintf(f, ", %s in %" PRIu64 " pool blocks", b1, d->new_block_count);
    }
    if (d->new_reserved_count) {
        report_format_bytes(b1, sizeof b1, d->new_reserved_bytes);
        fprintf(f, ", %s in %" PRIu64 " segment%s the pools reserved", b1, d->new_reserved_count,
                d->new_reserved_count == 1 ? "" : "s");
    }
    fputc('\n', f);
    for (size_t i = 0; i < d->nnew && i < 50; i++) {
        report_format_bytes(b1, sizeof b1, d->news[i].bytes);
        fprintf(f, "\n%s in %" PRIu64 " %s%s [pid %" PRIu64 "]\n", b1, d->news[i].count,
                d->news[i].blocks ? "block" : "allocation", d->news[i].count == 1 ? "" : "s",
                model_process(m, d->news[i].proc)->pid);
        const char *op;
        int made = model_stack_backward(m, d->news[i].proc, d->news[i].stack, &op);
        if (made)
            fprintf(f, "    made by autograd's backward %s%s%s\n",
                    made == 1 ? "for the line below" : "while backward() ran at several lines", op ? ", via " : "",
                    op ? op : "");
        report_print_stack(f, m, d->news[i].proc, d->news[i].stack, o->depth);
    }
    if (d->nnew > 50)
        fprintf(f, "\n... and %zu more stacks\n", d->nnew - 50);
}

static int report_diff_text(FILE *f, struct model *m, const struct report_options *o)
{
    if (!report_split(m, o)) {
        struct model_diff d;
        if (report_diff_query(m, o, o->proc, &d) != 0)
            return -1;
        diff_text_body(f, m, o, &d);
        model_diff_free(&d);
        return 0;
    }
    /* each process between its own marks A and B (a mark is reached at a different time,
     * and with different memory, in every rank) */
    struct report_diff_parts dp;
    if (report_diff_parts(m, o, &dp) != 0)
        return -1;
    const char *b = o->diff_b ? o->diff_b : "now";
    char name[512], b1[64], b2[64];
    for (int i = 0; i < dp.n; i++) {
        const struct report_diff_part *pt = &dp.p[i];
        report_process_name(m, o, pt->proc, name, sizeof name);
        if (!pt->has_a || !pt->has_b) {
            fprintf(f, "\n==== %s: no mark '%s': left out of the diff\n", name, pt->has_a ? b : o->diff_a);
            continue;
        }
        fprintf(f, "\n==== %s\n", name);
        diff_text_body(f, m, o, &pt->d);
    }
    report_format_bytes(b1, sizeof b1, (uint64_t)(dp.delta_bytes < 0 ? -dp.delta_bytes : dp.delta_bytes));
    report_format_bytes(b2, sizeof b2, dp.new_bytes);
    fprintf(f, "\nDIFF SUMMARY: %s -> %s, each process between its own marks: %s%s live; made after %s and "
               "still live at %s: %s in %" PRIu64 " allocations; %d processes",
            o->diff_a, b, dp.delta_bytes < 0 ? "-" : "+", b1, o->diff_a, b, b2, dp.new_count, dp.n);
    if (dp.missing)
        fprintf(f, ", %d without both marks (left out)", dp.missing);
    /* tensor tracking: the pools' figures added up, as one process's diff says them */
    int64_t allocated = 0, reserved = 0;
    int pools = 0;
    for (int i = 0; i < dp.n; i++) {
        const struct model_diff *d = &dp.p[i].d;
        if (!dp.p[i].has_a || !dp.p[i].has_b || !(d->a.pools | d->b.pools))
            continue;
        pools = 1;
        allocated += delta_of(d->a.allocated_bytes, d->b.allocated_bytes);
        reserved += delta_of(d->a.reserved_bytes, d->b.reserved_bytes);
    }
    char b3[80], b4[80];
    if (pools)
        fprintf(f, "; the pools: allocated %s, reserved %s", signed_bytes(b3, sizeof b3, allocated),
                signed_bytes(b4, sizeof b4, reserved));
    else if (dp.delta_block_bytes)
        fprintf(f, "; %s in pool blocks", signed_bytes(b3, sizeof b3, dp.delta_block_bytes));
    fputc('\n', f);
    report_diff_parts_free(&dp);
    return 0;
}

/* "4194404 bytes leaked in 2 allocations from 1 call sites" */
static void print_totals(FILE *f, const struct report_options *o, const struct report_summary *s)
{
    const char *group = o->group == MODEL_GROUP_SITE ? "call sites" : model_group_name(o->group);
    const char *groups = o->group == MODEL_GROUP_SITE ? "" : " groups";
    if (o->what == REPORT_LEAKS)
        fprintf(f, "%" PRIu64 " bytes leaked in %" PRIu64 " allocations from %" PRIu64 " %s%s", s->bytes,
                s->allocations, s->sites, group, groups);
    else
        fprintf(f, "%" PRIu64 " bytes in %" PRIu64 " allocations from %" PRIu64 " %s", s->bytes + s->cache_bytes,
                s->allocations + s->cache_allocations, s->sites + s->cache_sites, group);
}

/* The used blocks of one class (the user's, or the default suppressions), as valgrind's
 * used_suppression lines. */
static void print_used(FILE *f, const struct suppressions *supp, int defaults, const uint64_t *bytes,
                       const uint64_t *count)
{
    for (size_t i = 0; i < suppressions_count(supp); i++) {
        const char *file;
        unsigned line;
        const char *name = suppressions_name(supp, i, &file, &line);
        if ((count[i] || bytes[i]) && suppressions_is_default(supp, i) == defaults)
            fprintf(f, "  used %ssuppression '%s' (%s:%u): %" PRIu64 " bytes in %" PRIu64 " allocations\n",
                    defaults ? "default " : "", name, file, line, bytes[i], count[i]);
    }
}

/* "suppressed: N bytes in M allocations from K sites" (the user's suppressions), then
 * "LIBRARY SUMMARY: ..." (what the default suppressions match: memory a library holds
 * until exit), each followed by the blocks that matched and what they matched. */
static void print_suppressed(FILE *f, struct model *m, const struct report_options *o)
{
    size_t nb = suppressions_count(o->supp);
    if (o->what != REPORT_LEAKS || !o->supp)
        return;
    uint64_t *bytes = calloc(nb ? nb : 1, sizeof *bytes), *count = calloc(nb ? nb : 1, sizeof *count);
    struct report_summary s;
    if (bytes && count && report_count_suppressed(m, o, &s, bytes, count) == 0) {
        if (suppressions_user_count(o->supp)) {
            fprintf(f, "suppressed: %" PRIu64 " bytes in %" PRIu64 " allocations from %" PRIu64 " sites\n",
                    s.suppressed_bytes, s.suppressed_allocations, s.suppressed_sites);
            print_used(f, o->supp, 0, bytes, count);
        }
        if (s.held_allocations) {
            fprintf(f, "LIBRARY SUMMARY: %" PRIu64 " bytes in %" PRIu64 " allocations from %" PRIu64
                       " sites held by a library until exit (default suppressions, not counted as leaks)\n",
                    s.held_bytes, s.held_allocations, s.held_sites);
            print_used(f, o->supp, 1, bytes, count);
        }
    }
    free(bytes);
    free(count);
}

/* The closing lines: the totals of the report (the line CI jobs look for), then with
 * several processes kept apart one line per process. */
static void print_summary(FILE *f, struct model *m, const struct report_options *o, const struct report_summary *s,
                          const struct report_parts *ps)
{
    if (o->what == REPORT_LEAKS)
        fputs("LEAK SUMMARY: ", f);
    else
        fprintf(f, "LIVE SUMMARY (%s): ",
                o->what == REPORT_PEAK ? "at the peak" : o->what == REPORT_NOW ? "now" : o->snapshot);
    print_totals(f, o, s);
    fputc('\n', f);
    if (o->what != REPORT_LEAKS && s->memory.pools) {
        const struct model_memory *mm = &s->memory;
        fprintf(f, "MEMORY SUMMARY: allocated %" PRIu64 " bytes in %" PRIu64 " blocks, reserved %" PRIu64
                   " bytes in %" PRIu64 " segments by the pools, %" PRIu64 " bytes outside them\n",
                mm->allocated_bytes, mm->allocated_blocks, mm->reserved_bytes, mm->reserved_segments, mm->other_bytes);
    }
    char name[512];
    for (int i = 0; ps && i < ps->n; i++) {
        const struct report_part *pt = &ps->p[i];
        report_process_name(m, o, pt->proc, name, sizeof name);
        fprintf(f, "  %s: ", name);
        if (!pt->present) {
            fprintf(f, "no mark '%s'\n", o->snapshot);
            continue;
        }
        print_totals(f, o, &pt->s);
        if (o->what == REPORT_LEAKS && pt->s.cache_allocations)
            fprintf(f, "; %" PRIu64 " bytes in %" PRIu64 " allocations held by caching allocators",
                    pt->s.cache_bytes, pt->s.cache_allocations);
        if (o->what == REPORT_LEAKS && pt->s.before_allocations)
            fprintf(f, "; %" PRIu64 " bytes in %" PRIu64 " allocations from before the attach",
                    pt->s.before_bytes, pt->s.before_allocations);
        if (o->what == REPORT_LEAKS && pt->s.end_allocations)
            fprintf(f, "; %" PRIu64 " bytes in %" PRIu64 " allocations live when the recording ends",
                    pt->s.end_bytes, pt->s.end_allocations);
        fputc('\n', f);
    }
    print_suppressed(f, m, o);
    if (o->what == REPORT_LEAKS && s->cache_allocations)
        fprintf(f, "CACHE SUMMARY: %" PRIu64 " bytes in %" PRIu64
                   " allocations held by caching allocators at exit (not counted as leaks)\n",
                s->cache_bytes, s->cache_allocations);
    if (o->what == REPORT_LEAKS && s->before_allocations)
        fprintf(f, "ATTACH SUMMARY: %" PRIu64 " bytes in %" PRIu64
                   " allocations live since before culeak attached (no stack; not counted as leaks)\n",
                s->before_bytes, s->before_allocations);
    if (o->what == REPORT_LEAKS && s->end_allocations)
        fprintf(f, "END SUMMARY: %" PRIu64 " bytes in %" PRIu64
                   " allocations live when the recording ends, before its process did (not counted as leaks)\n",
                s->end_bytes, s->end_allocations);
}

static void print_rows(FILE *f, struct model *m, const struct report_options *o, const struct model_table *t)
{
    const char *verb = o->what == REPORT_LEAKS ? "LEAKED" : "LIVE";
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].cache == MODEL_CACHE_NONE && !t->rows[i].pool && !t->rows[i].before_attach &&
            !t->rows[i].unended)
            print_row(f, m, o, &t->rows[i], verb);
    for (size_t i = 0; i < t->n; i++) /* the memory the blocks above lie in */
        if (t->rows[i].cache == MODEL_CACHE_NONE && t->rows[i].pool)
            print_row(f, m, o, &t->rows[i], verb);
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].cache != MODEL_CACHE_NONE)
            print_row(f, m, o, &t->rows[i], "CACHED");
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].before_attach || t->rows[i].unended)
            print_row(f, m, o, &t->rows[i], "NOT JUDGED");
}

/* Several processes kept apart: a section per process, then the summary of them all
 * followed by one line per process. */
static int report_text_split(FILE *f, struct model *m, const struct report_options *o, struct report_summary *s)
{
    struct report_parts ps;
    if (report_query_parts(m, o, &ps) != 0)
        return -1;
    *s = ps.total;
    if (report_count_suppressed(m, o, s, NULL, NULL) != 0) {
        report_parts_free(&ps);
        return -1;
    }
    print_processes(f, m, o);
    char name[512], b1[64], b2[64];
    for (int i = 0; i < ps.n; i++) {
        const struct report_part *pt = &ps.p[i];
        report_process_name(m, o, pt->proc, name, sizeof name);
        fprintf(f, "\n==== %s: ", name);
        if (!pt->present)
            fprintf(f, "no mark '%s'\n", o->snapshot);
        else if (!pt->s.allocations && !pt->s.cache_allocations && !pt->s.before_allocations && !pt->s.end_allocations)
            fprintf(f, "nothing %s\n", o->what == REPORT_LEAKS ? "leaked" : "live");
        else if (o->what == REPORT_LEAKS) {
            report_format_bytes(b1, sizeof b1, pt->s.bytes);
            report_format_bytes(b2, sizeof b2, pt->s.cache_bytes);
            fprintf(f, "%s leaked in %" PRIu64 " allocations", b1, pt->s.allocations);
            if (pt->s.cache_allocations)
                fprintf(f, ", %s held by caching allocators", b2);
            if (pt->s.before_allocations) {
                report_format_bytes(b2, sizeof b2, pt->s.before_bytes);
                fprintf(f, ", %s from before the attach", b2);
            }
            if (pt->s.end_allocations) {
                report_format_bytes(b2, sizeof b2, pt->s.end_bytes);
                fprintf(f, ", %s live when the recording ends", b2);
            }
            fputc('\n', f);
        } else {
            report_format_bytes(b1, sizeof b1, pt->s.bytes + pt->s.cache_bytes);
            fprintf(f, "%s live in %" PRIu64 " allocations\n", b1, pt->s.allocations + pt->s.cache_allocations);
        }
        print_rows(f, m, o, &pt->t);
    }
    fputc('\n', f);
    print_summary(f, m, o, s, &ps);
    report_parts_free(&ps);
    return 0;
}

int report_text(FILE *f, struct model *m, const struct report_options *o, struct report_summary *s)
{
    struct report_summary local;
    if (!s)
        s = &local;
    memset(s, 0, sizeof *s);
    if (o->what == REPORT_DIFF) {
        print_processes(f, m, o);
        return report_diff_text(f, m, o);
    }
    if (report_split(m, o))
        return report_text_split(f, m, o, s);
    struct model_table t;
    if (report_query(m, o, &t) != 0)
        return -1;
    summarize_table(&t, s);
    if (report_count_suppressed(m, o, s, NULL, NULL) != 0) {
        model_table_free(&t);
        return -1;
    }
    print_processes(f, m, o);
    print_rows(f, m, o, &t);
    fputc('\n', f);
    print_summary(f, m, o, s, NULL);
    model_table_free(&t);
    return 0;
}
