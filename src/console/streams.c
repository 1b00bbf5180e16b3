/* The job's streams: the rings taken as processes hand them over, each read a bounded
 * amount per turn into the model, whose observer fills the output pane and hands held
 * allocations to the pause logic (bp_pause.c). */
#include "console.h"
#include "common/wire.h"
#include "fmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The model calls the observer from inside model_stream_feed on c->feeding. */

static const struct model_process *proc_of(struct console *c, int proc) { return model_process(c->u.m, proc); }

static void o_hello(void *ctx, int proc)
{
    struct console *c = ctx;
    struct ring_reader *k = c->feeding;
    if (!k)
        return;
    k->proc = proc;
    if ((size_t)proc >= c->nby_proc) {
        size_t n = (size_t)proc + 16;
        struct ring_reader **v = realloc(c->by_proc, n * sizeof *v);
        uint8_t *g = realloc(c->u.gone, n);
        if (v)
            c->by_proc = v;
        if (g)
            c->u.gone = g;
        if (!v || !g)
            return;
        memset(c->by_proc + c->nby_proc, 0, (n - c->nby_proc) * sizeof *v);
        memset(c->u.gone + c->nby_proc, 0, n - c->nby_proc);
        c->nby_proc = c->u.ngone = n;
    }
    c->by_proc[proc] = k;
    const struct model_process *p = proc_of(c, proc);
    char line[700];
    size_t n = (size_t)snprintf(line, sizeof line, "[culeak] process %llu connected:", (unsigned long long)p->pid);
    for (size_t i = 0; i < p->argc && n < sizeof line; i++)
        n += (size_t)snprintf(line + n, sizeof line - n, " %s", p->argv[i]);
    if (!p->argc)
        snprintf(line + n, sizeof line - n, " %s", p->exe);
    outbuf_add_line(&c->u.out, line);
    /* Always answered: a process the console launched holds its allocations at new stacks
     * from the start (CULEAK_HOLD_AT_START) until told what to watch; with no breakpoint,
     * HOLD_NEW 0 lets it run free. Its allocations held meanwhile come after this HELLO
     * and are released (console_on_held) unless a breakpoint covers them. */
    console_push_watches(c, k);
    console_holders_hello(c, k);
    c->dirty = 1;
}

static void o_event(void *ctx, int proc, const struct culeak_event *e)
{
    struct console *c = ctx;
    c->rate_events++;
    int early = c->released_early == c->feeding && c->released_early_seq == e->seq;
    c->released_early = NULL;
    if ((e->flags & CULEAK_EVENT_HELD) && c->feeding && !early)
        console_on_held(c, c->feeding, proc, e);
    c->dirty = 1;
}

static void o_mark(void *ctx, int proc, const struct culeak_mark *m)
{
    struct console *c = ctx;
    if (m->flags & CULEAK_MARK_POP) /* the end of an NVTX range: the push was the mark */
        return;
    (void)proc; /* marks stay out of the job's output and the status line: the header
                 * counts them, info marks lists them */
    if (c->autosnap_marks) {
        char name[64], taken[64];
        snprintf(name, sizeof name, "%.*s", (int)(m->label.n < 40 ? m->label.n : 40), m->label.p ? m->label.p : "");
        console_snapshot(c, name, taken, sizeof taken); /* a label seen before: numbered name */
    }
    c->dirty = 1;
}

static void o_exit(void *ctx, int proc)
{
    (void)proc;
    ((struct console *)ctx)->dirty = 1;
}

static void o_note(void *ctx, int proc, const char *text, size_t len)
{
    struct console *c = ctx;
    const struct model_process *p = proc_of(c, proc);
    char line[600];
    snprintf(line, sizeof line, "[culeak] pid %llu: %.*s", p ? (unsigned long long)p->pid : 0ull, (int)len, text);
    outbuf_add_line(&c->u.out, line);
}

/* A gap in a process's stream: events it dropped while the console did not read (it was
 * stopped: Ctrl-Z, SIGSTOP, or too slow). */
static void o_lost(void *ctx, int proc, uint64_t count)
{
    struct console *c = ctx;
    const struct model_process *p = proc_of(c, proc);
    char line[200];
    snprintf(line, sizeof line, "[culeak] pid %llu: %llu event%s lost while the console was stopped",
             p ? (unsigned long long)p->pid : 0ull, (unsigned long long)count, plural(count));
    outbuf_add_line(&c->u.out, line);
    ui_message(&c->u, 1, "%s", line + 9);
    c->dirty = 1;
}

/* A connection's process: the model's once it said HELLO, else the hub's (a ring corrupt
 * from its start is still told under its writer's pid). */
static unsigned long long reader_pid(const struct ring_reader *k, const struct model_process *p)
{
    return p ? (unsigned long long)p->pid : (unsigned long long)k->pid;
}

static void drop_reader(struct console *c, size_t i, const char *why)
{
    struct ring_reader *k = c->readers[i];
    const struct model_process *p = proc_of(c, k->proc);
    if (p && !p->exited && (size_t)k->proc < c->u.ngone)
        c->u.gone[k->proc] = 1;
    if (k->ms && !why)
        model_stream_finish(k->ms); /* a record cut off marks the process truncated */
    if (why) {
        char line[400];
        snprintf(line, sizeof line, "[culeak] pid %llu: %s", reader_pid(k, p), why);
        outbuf_add_line(&c->u.out, line);
    }
    console_forget_holds(c, k);
    if (k->tee_fd >= 0) {
        close(k->tee_fd);
        k->tee_fd = -1;
    }
    if (why) /* a stream the console cannot read: the process is let go, untraced */
        ring_reader_let_go(k);
    ring_reader_done(k);
    c->dirty = 1;
}

/* Processes the hub could not take: said by pid, with why. */
static void say_refusals(struct console *c)
{
    long pid;
    char why[160], line[240];
    while (ring_readers_refusal(&c->rings, &pid, why, sizeof why)) {
        snprintf(line, sizeof line, "[culeak] pid %ld: not traced: %s", pid, why);
        outbuf_add_line(&c->u.out, line);
        ui_message(&c->u, 1, "%s", line + 9);
        console_note_refusal(c, line + 9);
        c->dirty = 1;
    }
}

void console_accept_rings(struct console *c)
{
    struct ring_reader *k;
    while ((k = ring_readers_accept(&c->rings, c->u.m))) {
        if (c->nreaders == c->capreaders) {
            size_t cap = c->capreaders ? c->capreaders * 2 : 8;
            struct ring_reader **v = realloc(c->readers, cap * sizeof *v);
            if (!v) {
                ring_reader_close(k);
                return;
            }
            c->readers = v;
            c->capreaders = cap;
        }
        k->owner = c;
        c->readers[c->nreaders++] = k;
    }
    say_refusals(c);
}

/* Reads process i's ring; end_check: also whether its process has ended. 1 when
 * something was read. */
int console_read_ring(struct console *c, size_t i, int end_check)
{
    static uint8_t buf[1 << 16];
    struct ring_reader *k = c->readers[i];
    int read_some = 0;
    /* read eagerly, a bounded amount per turn so keys stay responsive */
    c->feeding = k;
    for (int turns = 0; turns < 64 && k->ring; turns++) {
        long got = ring_reader_pump(k, buf, sizeof buf, end_check && turns == 0);
        if (got == -2)
            break;
        read_some = 1;
        if (got == 0 || got == -1) {
            drop_reader(c, i, NULL);
            break;
        }
        if (got == -3) {
            drop_reader(c, i, model_stream_error(k->ms));
            break;
        }
    }
    c->feeding = NULL;
    if (k->tee_lost[0] && !k->tee_lost_said) {
        k->tee_lost_said = 1;
        const struct model_process *p = proc_of(c, k->proc);
        char line[400];
        snprintf(line, sizeof line, "[culeak] pid %llu: %s (save will say so)", reader_pid(k, p),
                 k->tee_lost);
        outbuf_add_line(&c->u.out, line);
    }
    return read_some;
}

void console_observe(struct console *c)
{
    struct model_observer obs = {.ctx = c, .hello = o_hello, .event = o_event, .held = console_o_held,
                                 .new_stack = console_o_new_stack, .mark = o_mark, .exit = o_exit, .note = o_note,
                                 .lost = o_lost, .holders = console_o_holders};
    model_set_observer(c->u.m, &obs);
}
