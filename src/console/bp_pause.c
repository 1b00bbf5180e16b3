/* The pause at a breakpoint: what each process is told to watch and hold, an allocation
 * held until the console lets it return (continue, step), and the threads waiting their
 * turn while another is paused. The model's observer (streams.c) hands the held events
 * here. */
#include "console.h"
#include "common/apis.h"
#include "common/wire.h"
#include "fmt.h"

#include <stdlib.h>
#include <string.h>

static const struct model_process *proc_of(struct console *c, int proc) { return model_process(c->u.m, proc); }

static void release(struct ring_reader *k, uint64_t seq)
{
    uint64_t v = seq;
    ring_reader_send(k, CULEAK_CMD_RELEASE, &v, 1);
}

static void pause_at(struct console *c, struct ring_reader *k, const struct held *h)
{
    c->paused_reader = k;
    c->u.held = *h;
    c->u.state = JOB_PAUSED;
    const struct model_process *p = proc_of(c, h->proc);
    char size[32];
    fmt_size(size, sizeof size, h->size);
    ui_message(&c->u, 0, "%s(%s) in pid %llu thread %llu; continue | step | show | cuda-gdb -p %llu",
               culeak_api_name(h->api), size, p ? (unsigned long long)p->pid : 0ull, (unsigned long long)h->tid,
               p ? (unsigned long long)p->pid : 0ull);
    /* the row of the held allocation becomes the selected row */
    uint32_t row = model_stack_row(c->u.m, h->proc, h->leaf, c->u.group);
    if (row != UINT32_MAX) {
        c->u.sel_site = row;
        c->u.sel_valid = 1;
    }
    struct breakpoint *b = h->bp_id ? bp_find(&c->u.bps, h->bp_id) : NULL;
    if (b) { /* its commands run from the loop; tbreak's is gone once it paused */
        console_commands_due(c, b);
        if (b->temporary) {
            bp_delete(&c->u.bps, b->id);
            console_update_watches(c);
        }
    }
    c->dirty = 1;
}

void console_on_held(struct console *c, struct ring_reader *k, int proc, const struct culeak_event *e)
{
    struct held h = {.proc = proc, .seq = e->seq, .tid = e->tid, .size = e->size, .leaf = e->stack,
                     .api = e->api, .kind = e->kind, .device = e->device};
    int stop = 0;
    if (e->op == CULEAK_OP_ALLOC) {
        if (c->stepping) {
            stop = 1;
            struct row r;
            uint32_t id = model_stack_row(c->u.m, proc, e->stack, c->u.group);
            if (id != UINT32_MAX && ui_row_by_id(&c->u, id, &r) == 0)
                h.site_live = r.live;
        }
        /* every breakpoint whose condition holds is hit (and counts it), as in gdb; the
         * banner names the first */
        for (size_t i = 0; i < c->u.bps.n; i++) {
            struct breakpoint *b = &c->u.bps.v[i];
            if (!b->enabled || !bp_has_member(b, proc, e->stack))
                continue;
            uint64_t live, count; /* the allocation being made included */
            ui_bp_live(&c->u, b, &live, &count);
            if (!stop)
                h.site_live = live;
            if (bp_hit(b, live, count) && !stop) {
                stop = 1;
                h.bp_id = b->id;
                h.bp_hits = b->hits;
                h.growth = (int64_t)(live - b->base);
            }
        }
    }
    if (!stop) {
        release(k, e->seq);
        return;
    }
    if (c->stepping) {
        c->stepping = 0;
        uint64_t off = 0;
        for (size_t i = 0; i < c->nreaders; i++)
            ring_reader_send(c->readers[i], CULEAK_CMD_HOLD_ALL, &off, 1);
    }
    if (c->u.state == JOB_PAUSED) { /* another thread or process: its turn comes after continue */
        if (c->npending == c->cappending) {
            size_t cap = c->cappending ? c->cappending * 2 : 8;
            struct pending_hold *v = realloc(c->pending, cap * sizeof *v);
            if (!v) {
                release(k, e->seq);
                return;
            }
            c->pending = v;
            c->cappending = cap;
        }
        c->pending[c->npending++] = (struct pending_hold){k, h};
        return;
    }
    pause_at(c, k, &h);
}

/* A stack allocated for the first time: a breakpoint covering it watches it from now on. */
void console_o_new_stack(void *ctx, int proc, uint64_t stack)
{
    struct console *c = ctx;
    int watch = 0;
    for (size_t i = 0; i < c->u.bps.n; i++) {
        struct breakpoint *b = &c->u.bps.v[i];
        if (b->enabled && ui_bp_covers(&c->u, b, proc, stack) && bp_add_member(b, proc, stack) > 0)
            watch = 1;
    }
    if (watch && c->feeding) {
        uint64_t v[2] = {1, stack};
        ring_reader_send(c->feeding, CULEAK_CMD_WATCH, v, 2);
    }
}

/* With no enabled breakpoint and no step, nothing can stop a held allocation: it goes
 * back at once, before the model's work on it (the first allocations of a process the
 * console launched are held until HOLD_NEW 0 reaches it; see streams.c). */
void console_o_held(void *ctx, int proc, const struct culeak_event *e)
{
    struct console *c = ctx;
    (void)proc;
    if (!c->feeding || c->stepping || bp_count_enabled(&c->u.bps))
        return;
    release(c->feeding, e->seq);
    c->released_early = c->feeding;
    c->released_early_seq = e->seq;
}

/* The reader k is gone: a pause of its process ends, and its threads waiting their turn
 * are forgotten. */
void console_forget_holds(struct console *c, struct ring_reader *k)
{
    if (c->paused_reader == k) {
        c->paused_reader = NULL;
        c->u.state = c->job.exited ? JOB_EXITED : JOB_RUNNING;
        ui_message(&c->u, 0, "the paused process went away");
    }
    for (size_t j = 0; j < c->npending;) {
        if (c->pending[j].reader == k)
            c->pending[j] = c->pending[--c->npending];
        else
            j++;
    }
}

/* Tells one process what to watch: the stacks of its own that enabled breakpoints cover,
 * and whether its allocations at new stacks wait for the console. */
void console_push_watches(struct console *c, struct ring_reader *k)
{
    if (!k->ring || k->proc < 0)
        return;
    size_t n = 0;
    for (size_t b = 0; b < c->u.bps.n; b++)
        if (c->u.bps.v[b].enabled)
            n += c->u.bps.v[b].nmembers;
    uint64_t *v = malloc((n + 1) * sizeof *v);
    if (!v)
        return;
    n = 0;
    for (size_t b = 0; b < c->u.bps.n; b++) {
        const struct breakpoint *bp = &c->u.bps.v[b];
        for (size_t j = 0; bp->enabled && j < bp->nmembers; j++)
            if (bp->members[j].proc == k->proc)
                v[1 + n++] = bp->members[j].stack;
    }
    v[0] = n;
    ring_reader_send(k, CULEAK_CMD_UNWATCH, NULL, 0);
    if (n)
        ring_reader_send(k, CULEAK_CMD_WATCH, v, n + 1);
    uint64_t on = bp_count_enabled(&c->u.bps) > 0;
    ring_reader_send(k, CULEAK_CMD_HOLD_NEW, &on, 1);
    free(v);
}

void console_update_watches(struct console *c)
{
    for (size_t i = 0; i < c->nreaders; i++)
        console_push_watches(c, c->readers[i]);
}

void console_resume(struct console *c, int step)
{
    if (c->u.state != JOB_PAUSED || !c->paused_reader) {
        ui_message(&c->u, 1, "the job is not paused");
        return;
    }
    if (step) {
        c->stepping = 1;
        uint64_t on = 1;
        for (size_t i = 0; i < c->nreaders; i++)
            if (c->readers[i]->ring)
                ring_reader_send(c->readers[i], CULEAK_CMD_HOLD_ALL, &on, 1);
    }
    release(c->paused_reader, c->u.held.seq);
    c->paused_reader = NULL;
    c->u.state = JOB_RUNNING;
    ui_message(&c->u, 0, step ? "stepping to the next allocation" : "continuing");
    /* the next thread waiting its turn pauses, if its breakpoint is still there and
     * enabled (deleted or disabled meanwhile: it goes on) */
    while (c->npending) {
        struct pending_hold ph = c->pending[0];
        memmove(c->pending, c->pending + 1, (c->npending - 1) * sizeof *c->pending);
        c->npending--;
        int still = 0;
        for (size_t i = 0; i < c->u.bps.n; i++)
            still |= c->u.bps.v[i].id == ph.h.bp_id && c->u.bps.v[i].enabled;
        if (still) {
            pause_at(c, ph.reader, &ph.h);
            break;
        }
        release(ph.reader, ph.h.seq);
    }
}
