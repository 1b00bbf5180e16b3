/* The console session: poll loop over the terminal, the job's pty, the rings' hand-over
 * socket and a signal self-pipe; every process's ring is read each turn (a ring wakes no
 * one: the loop turns every millisecond while events come, every 10 ms while none do);
 * redraws on a timer when dirty. */
#include "common/output_file.h"
#include "console.h"
#include "common/outpath.h"
#include "report/report.h"
#include "model/view_support.h"
#include "common/apis.h"
#include "fmt.h"
#include "job_input.h"
#include "launch/launch.h"
#include "launch/inject.h"
#include "prompt.h"
#include "screen.h"
#include "common/wire.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int sigpipe_fd[2] = {-1, -1};

#define NAME_SLICE_S 0.015 /* site names resolved per turn of the loop, at most */

static void on_signal(int sig)
{
    int e = errno;
    unsigned char b = (unsigned char)sig;
    if (write(sigpipe_fd[1], &b, 1) < 0) {
        /* pipe full: a wake-up is already pending */
    }
    errno = e;
}

double console_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- streams from the job's processes ---- */

/* The model calls the observer from inside model_stream_feed on c->feeding. */

static void push_watches(struct console *c, struct conn *k);

static const struct model_process *proc_of(struct console *c, int proc) { return model_process(c->u.m, proc); }

static void release(struct conn *k, uint64_t seq)
{
    uint64_t v = seq;
    conn_send(k, CULEAK_CMD_RELEASE, &v, 1);
}

static void pause_at(struct console *c, struct conn *k, const struct held *h)
{
    c->paused_conn = k;
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

static void on_held(struct console *c, struct conn *k, int proc, const struct culeak_event *e)
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
        for (size_t i = 0; i < c->nconns; i++)
            conn_send(c->conns[i], CULEAK_CMD_HOLD_ALL, &off, 1);
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

static void o_hello(void *ctx, int proc)
{
    struct console *c = ctx;
    struct conn *k = c->feeding;
    if (!k)
        return;
    k->proc = proc;
    if ((size_t)proc >= c->nby_proc) {
        size_t n = (size_t)proc + 16;
        struct conn **v = realloc(c->by_proc, n * sizeof *v);
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
     * and are released (on_held) unless a breakpoint covers them. */
    push_watches(c, k);
    c->dirty = 1;
}

/* A stack allocated for the first time: a breakpoint covering it watches it from now on. */
static void o_new_stack(void *ctx, int proc, uint64_t stack)
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
        conn_send(c->feeding, CULEAK_CMD_WATCH, v, 2);
    }
}

/* With no enabled breakpoint and no step, nothing can stop a held allocation: it goes
 * back at once, before the model's work on it (the first allocations of a process the
 * console launched are held until HOLD_NEW 0 reaches it; see o_hello). */
static void o_held(void *ctx, int proc, const struct culeak_event *e)
{
    struct console *c = ctx;
    (void)proc;
    if (!c->feeding || c->stepping || bp_count_enabled(&c->u.bps))
        return;
    release(c->feeding, e->seq);
    c->released_early = c->feeding;
    c->released_early_seq = e->seq;
}

static void o_event(void *ctx, int proc, const struct culeak_event *e)
{
    struct console *c = ctx;
    c->rate_events++;
    int early = c->released_early == c->feeding && c->released_early_seq == e->seq;
    c->released_early = NULL;
    if ((e->flags & CULEAK_EVENT_HELD) && c->feeding && !early)
        on_held(c, c->feeding, proc, e);
    c->dirty = 1;
}

/* A snapshot of the model now, under name (NULL or taken: the next "sN"). 0 or -1. */
int console_snapshot(struct console *c, const char *name, char *out, size_t outlen)
{
    char auto_name[64];
    if (!name || !*name || model_snapshot_find(c->u.m, name) >= 0) {
        do
            snprintf(auto_name, sizeof auto_name, "s%u", ++c->u.auto_snap);
        while (model_snapshot_find(c->u.m, auto_name) >= 0);
        name = auto_name;
    }
    if (model_snapshot_take(c->u.m, name) != 0)
        return -1;
    snprintf(c->u.base, sizeof c->u.base, "%s", name);
    snprintf(out, outlen, "%s", name);
    return 0;
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
static unsigned long long conn_pid(const struct conn *k, const struct model_process *p)
{
    return p ? (unsigned long long)p->pid : (unsigned long long)k->pid;
}

static void drop_conn(struct console *c, size_t i, const char *why)
{
    struct conn *k = c->conns[i];
    const struct model_process *p = proc_of(c, k->proc);
    if (p && !p->exited && (size_t)k->proc < c->u.ngone)
        c->u.gone[k->proc] = 1;
    if (k->ms && !why)
        model_stream_finish(k->ms); /* a record cut off marks the process truncated */
    if (why) {
        char line[400];
        snprintf(line, sizeof line, "[culeak] pid %llu: %s", conn_pid(k, p), why);
        outbuf_add_line(&c->u.out, line);
    }
    if (c->paused_conn == k) {
        c->paused_conn = NULL;
        c->u.state = c->job.exited ? JOB_EXITED : JOB_RUNNING;
        ui_message(&c->u, 0, "the paused process went away");
    }
    for (size_t j = 0; j < c->npending;) {
        if (c->pending[j].c == k)
            c->pending[j] = c->pending[--c->npending];
        else
            j++;
    }
    if (k->tee_fd >= 0) {
        close(k->tee_fd);
        k->tee_fd = -1;
    }
    if (why) /* a stream the console cannot read: the process is let go, untraced */
        conn_let_go(k);
    conn_done(k);
    c->dirty = 1;
}

/* Tells one process what to watch: the stacks of its own that enabled breakpoints cover,
 * and whether its allocations at new stacks wait for the console. */
static void push_watches(struct console *c, struct conn *k)
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
    conn_send(k, CULEAK_CMD_UNWATCH, NULL, 0);
    if (n)
        conn_send(k, CULEAK_CMD_WATCH, v, n + 1);
    uint64_t on = bp_count_enabled(&c->u.bps) > 0;
    conn_send(k, CULEAK_CMD_HOLD_NEW, &on, 1);
    free(v);
}

void console_update_watches(struct console *c)
{
    for (size_t i = 0; i < c->nconns; i++)
        push_watches(c, c->conns[i]);
}

void console_resume(struct console *c, int step)
{
    if (c->u.state != JOB_PAUSED || !c->paused_conn) {
        ui_message(&c->u, 1, "the job is not paused");
        return;
    }
    if (step) {
        c->stepping = 1;
        uint64_t on = 1;
        for (size_t i = 0; i < c->nconns; i++)
            if (c->conns[i]->ring)
                conn_send(c->conns[i], CULEAK_CMD_HOLD_ALL, &on, 1);
    }
    release(c->paused_conn, c->u.held.seq);
    c->paused_conn = NULL;
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
            pause_at(c, ph.c, &ph.h);
            break;
        }
        release(ph.c, ph.h.seq);
    }
}

void console_kill(struct console *c)
{
    if (!c->live || c->job.exited) {
        ui_message(&c->u, 1, "there is no running job");
        return;
    }
    /* release everything first: a paused thread must be able to die */
    for (size_t i = 0; i < c->nconns; i++)
        conn_let_go(c->conns[i]);
    job_signal(&c->job, SIGTERM);
    c->kill_deadline = console_clock() + 3.0;
    ui_message(&c->u, 0, "sent SIGTERM to the job's process group (SIGKILL in 3 s)");
}

void console_kill_now(struct console *c)
{
    if (!c->live || c->job.exited)
        return;
    for (size_t i = 0; i < c->nconns; i++) /* a paused thread must be able to die */
        conn_let_go(c->conns[i]);
    job_signal(&c->job, SIGTERM);
    double deadline = console_clock() + 3.0;
    while (!job_reap(&c->job) && console_clock() < deadline) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (!c->job.exited) {
        job_signal(&c->job, SIGKILL);
        while (!c->job.exited && waitpid(c->job.pid, &c->job.status, 0) == c->job.pid)
            c->job.exited = 1;
    }
}

void console_confirm(struct console *c, void (*yes)(struct console *c), const char *fmt, ...)
{
    char q[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(q, sizeof q, fmt, ap);
    va_end(ap);
    c->confirm_yes = yes;
    outbuf_add_line(&c->u.out, q);
    ui_message(&c->u, 0, "%s", q);
    c->dirty = 1;
}

/* --log-file: the exit report goes to a file as well; %p, %h and %r are those of the
 * job's first process. */
static void write_log_file(struct console *c, const char *text, size_t len)
{
    const struct model_process *p = model_process_count(c->u.m) ? model_process(c->u.m, 0) : NULL;
    char rank[32], path[4096], line[4400];
    snprintf(rank, sizeof rank, "%d", p && p->rank >= 0 ? p->rank : 0);
    struct culeak_output out;
    int bad = 1;
    errno = ENAMETOOLONG;
    if (culeak_expand_path(c->opt.log_file, p ? (long)p->pid : (long)getpid(), p ? p->host : NULL, rank, path,
                           sizeof path) >= 0 &&
        culeak_output_open(&out, path) == 0)
        bad = culeak_output_close(&out, fwrite(text, 1, len, out.f) != len) != 0;
    int err = errno;
    if (bad)
        snprintf(line, sizeof line, "[culeak] cannot write the leak report to %s: %s", path, strerror(err));
    else
        snprintf(line, sizeof line, "[culeak] leak report written to %s", path);
    outbuf_add_line(&c->u.out, line);
}

/* Lines of the exit report the output pane takes: a longer one would push itself (and
 * what the job printed) out of the scrollback. */
#define REPORT_PANE_LINES 2000

static void add_report_line(struct console *c, const char *p, size_t n)
{
    char line[1200];
    snprintf(line, sizeof line, "[culeak]   %.*s", (int)(n < 1100 ? n : 1100), p);
    outbuf_add_line(&c->u.out, line);
}

/* The report's lines into the output pane: all of them when they fit; else its first
 * sites (the largest), cut at a blank line between two sites, a line saying where the
 * rest is, and its summary. */
static void add_report_lines(struct console *c, const char *text)
{
    size_t lines = 0;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    const char *summary = strstr(text, "\nLEAK SUMMARY:"), *cut = NULL;
    if (summary && lines > REPORT_PANE_LINES) {
        summary++;
        size_t n = 0;
        const char *p = text, *blank = NULL;
        for (const char *nl; p < summary && n < REPORT_PANE_LINES - 20 && (nl = strchr(p, '\n')); p = nl + 1, n++)
            if (nl == p)
                blank = p;
        cut = blank ? blank : p;
    }
    for (const char *p = text, *nl; p && *p; p = nl ? nl + 1 : NULL) {
        if (p == cut) {
            size_t left = 0;
            for (const char *q = cut; q < summary; q++)
                left += *q == '\n';
            char note[300];
            snprintf(note, sizeof note, "[culeak]   ... %zu more lines, of smaller sites: the whole report goes to "
                     "--log-file FILE (or save FILE, then culeak report FILE)", left);
            outbuf_add_line(&c->u.out, "[culeak]");
            outbuf_add_line(&c->u.out, note);
            p = summary;
        }
        nl = strchr(p, '\n');
        add_report_line(c, p, nl ? (size_t)(nl - p) : strlen(p));
    }
}

void console_leak_report(struct console *c)
{
    struct report_options o;
    report_options_init(&o);
    o.depth = 8;
    o.supp = c->opt.supp;
    struct report_summary sum;
    char *text = NULL;
    size_t len = 0;
    if (model_process_count(c->u.m) == 0) { /* not "no leaks": nothing was seen */
        outbuf_add_line(&c->u.out, "[culeak] ==== no leak report: no process of the job connected (it made no "
                                   "CUDA call culeak saw) ====");
        return;
    }
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return;
    int rc = report_text(f, c->u.m, &o, &sum);
    fclose(f);
    char line[1200], a[32];
    if (rc == 0) {
        snprintf(line, sizeof line, "[culeak] ==== leak report: %s in %llu allocation%s still live ====",
                 fmt_size(a, sizeof a, sum.bytes), (unsigned long long)sum.allocations, plural(sum.allocations));
        outbuf_add_line(&c->u.out, line);
        if (!sum.allocations && !sum.cache_allocations && !sum.held_allocations && !sum.suppressed_allocations &&
            !sum.before_allocations)
            outbuf_add_line(&c->u.out, "[culeak]   no leaks: every allocation was freed");
        add_report_lines(c, text);
        if (c->opt.log_file)
            write_log_file(c, text, len);
    }
    free(text);
}

/* Copies src to dst, every read and write checked. 0, or -1 with the reason in msg. */
static int copy_file(const char *src, const char *dst, char *msg, size_t msglen)
{
    FILE *in = fopen(src, "rb");
    if (!in) {
        snprintf(msg, msglen, "cannot read the stream copy %s: %s", src, strerror(errno));
        return -1;
    }
    struct culeak_output out;
    if (culeak_output_open(&out, dst) != 0) {
        snprintf(msg, msglen, "cannot write %s: %s", dst, strerror(errno));
        fclose(in);
        return -1;
    }
    char buf[65536];
    size_t n;
    int bad = 0;
    while (!bad && (n = fread(buf, 1, sizeof buf, in)) > 0)
        bad = fwrite(buf, 1, n, out.f) != n;
    int read_err = ferror(in);
    fclose(in);
    if (culeak_output_close(&out, read_err) != 0 && !read_err) {
        snprintf(msg, msglen, "cannot write %s: %s", dst, strerror(errno));
        return -1;
    }
    if (read_err) {
        snprintf(msg, msglen, "cannot read the stream copy %s", src);
        return -1;
    }
    return 0;
}

int console_save(struct console *c, const char *path, char *msg, size_t msglen)
{
    size_t nsrc = 0, written = 0, partial = 0;
    char lost[300] = "";
    int n = c->live ? (int)c->nconns : c->tl.npaths;
    for (int i = 0; i < n; i++) {
        const char *src;
        if (c->live) {
            const struct conn *k = c->conns[i];
            if (k->proc < 0)
                continue; /* a connection that never said HELLO: nothing to save */
            src = k->tee_path;
            if (k->tee_lost[0] && !partial++) {
                const struct model_process *p = proc_of(c, k->proc);
                snprintf(lost, sizeof lost, "pid %llu: %s", p ? (unsigned long long)p->pid : 0ull, k->tee_lost);
            }
        } else {
            src = c->tl.paths[i];
        }
        char dst[4200];
        if (nsrc++ == 0)
            snprintf(dst, sizeof dst, "%s", path);
        else
            snprintf(dst, sizeof dst, "%s.%zu", path, nsrc - 1);
        if (copy_file(src, dst, msg, msglen) != 0)
            return -1;
        written++;
    }
    if (!written) {
        snprintf(msg, msglen, "nothing to save yet: no process has connected");
        return -1;
    }
    int w = written == 1 ? snprintf(msg, msglen, "saved the recording to %s", path)
                         : snprintf(msg, msglen, "saved %zu recordings: %s, %s.1 ... %s.%zu", written, path, path,
                                    path, written - 1);
    if (partial && w >= 0 && (size_t)w < msglen) {
        snprintf(msg + w, msglen - (size_t)w, "; %zu incomplete (%s)", partial, lost);
        return -1;
    }
    return 0;
}

/* ---- the loop ---- */

void console_history(struct console *c)
{
    /* recordings: device memory over each process's time, summed at the same fractions */
    c->u.nspark = 0;
    memset(c->u.spark, 0, sizeof c->u.spark);
    for (int p = 0; p < model_process_count(c->u.m); p++) {
        size_t n = model_timeline(c->u.m, p, MODEL_ALL, NULL, 0);
        struct model_sample *v = n ? malloc(n * sizeof *v) : NULL;
        if (!v)
            continue;
        model_timeline(c->u.m, p, MODEL_ALL, v, n);
        for (size_t i = 0; i < SPARK_N; i++)
            c->u.spark[i] += v[(n - 1) * i / (SPARK_N - 1)].max_bytes;
        free(v);
    }
    c->u.nspark = SPARK_N;
}

/* The job's terminal is the output pane, at least 2 rows (a screen too small has none). */
static int job_rows(const struct layout *l)
{
    return l->output.h - 1 > 2 ? l->output.h - 1 : 2;
}

static void render(struct console *c)
{
    int rows, cols;
    screen_size(&rows, &cols);
    if (rows != c->rows || cols != c->cols || !c->grid.c) {
        grid_free(&c->grid);
        grid_init(&c->grid, rows, cols);
        c->rows = rows;
        c->cols = cols;
        layout_compute(rows, cols, &c->lay);
        if (c->live)
            job_resize(&c->job, job_rows(&c->lay), cols > 0 ? cols : 1);
    }
    prompt_sync(c);
    screen_mouse(!c->u.mouse_off);
    if (!c->live)
        snprintf(c->u.timeline, sizeof c->u.timeline, "%s", c->tl.where);
    ui_render(&c->u, &c->grid, &c->lay);
    screen_draw(&c->grid);
    c->dirty = 0;
}

static void on_key(struct console *c)
{
    char buf[8];
    int nav = 0, k;
    while ((k = screen_key(buf, &nav)) != SK_NONE && !c->quit) {
        if (job_input_key(c, k, buf, nav) || help_key(&c->u, k, buf, prompt_empty())) {
            c->dirty = 1;
            continue;
        }
        switch (k) {
        case SK_CHAR:
            if (console_sort_key(c, buf)) /* htop's < > I on an empty prompt */
                break;
            if (buf[0] == '\t' || buf[0] == '\r' || buf[0] == '\n')
                c->u.completions[0] = 0;
            if (buf[0] == '\r' || buf[0] == '\n')
                c->u.msg[0] = 0;
            prompt_feed(buf);
            break;
        case SK_NAV:
            if ((nav != UK_UP && nav != UK_DOWN) || c->u.help_open || !prompt_recall(nav == UK_UP))
                ui_key(&c->u, nav, &c->lay);
            break;
        case SK_LEFT: prompt_move(-1); break;
        case SK_RIGHT: prompt_move(1); break;
        case SK_BACKSPACE: prompt_feed("\x7f"); break;
        case SK_DELETE: prompt_delete(); break;
        case SK_FOCUS: c->u.focus_output = !c->u.focus_output; break;
        case SK_INTR:
            prompt_clear();
            ui_message(&c->u, 0, "Ctrl-C does not stop the job here: use kill (stop it) or quit (leave)");
            break;
        case SK_REDRAW: screen_redraw_all(); break;
        case SK_ESC: prompt_feed("\x1b"); break; /* readline's meta prefix */
        case SK_RESIZE: break;
        case SK_FKEY: console_fkey(c, nav); break;
        case SK_MOUSE: {
            int y, x, button;
            screen_mouse_event(&y, &x, &button);
            console_mouse(c, y, x, button);
            break;
        }
        }
        c->dirty = 1;
    }
}

static void check_job(struct console *c);

static void on_signals(struct console *c)
{
    unsigned char sig[64];
    ssize_t n = read(sigpipe_fd[0], sig, sizeof sig);
    int winch = 0;
    for (ssize_t i = 0; i < n; i++) {
        if (sig[i] == SIGWINCH)
            winch = 1; /* a burst of resizes becomes one */
        if (sig[i] == SIGTERM || sig[i] == SIGHUP)
            c->quit = 1;
    }
    if (winch) {
        struct winsize ws;
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col)
            screen_resize(ws.ws_row, ws.ws_col);
        c->dirty = 1;
    }
    check_job(c);
}

/* The job's end (a child's SIGCHLD; an attached process's end is looked for at each tick). */
static void check_job(struct console *c)
{
    if (c->live && job_reap(&c->job)) {
        job_input_end(c);
        c->u.state = JOB_EXITED;
        c->u.exit_status = c->job.status;
        c->kill_deadline = 0;
        /* drain the last output */
        char buf[4096];
        ssize_t r;
        while (c->job.master >= 0 && (r = read(c->job.master, buf, sizeof buf)) > 0)
            outbuf_feed(&c->u.out, buf, (size_t)r);
        char line[128];
        if (c->job.status == -1) /* attached: its parent took its status */
            snprintf(line, sizeof line, "[culeak] pid %d ended (its status went to its parent)", (int)c->job.pid);
        else if (WIFSIGNALED(c->job.status))
            snprintf(line, sizeof line, "[culeak] job exited: killed by signal %d", WTERMSIG(c->job.status));
        else
            snprintf(line, sizeof line, "[culeak] job exited with status %d", WEXITSTATUS(c->job.status));
        outbuf_add_line(&c->u.out, line);
        c->u.out_scroll = 0;
        /* the rest of the streams may still be in the socket buffers: the report comes
         * when they are read (see the loop) */
        c->dirty = 1;
    }
}

/* Processes the hub could not take: said by pid, with why. */
static void say_refusals(struct console *c)
{
    long pid;
    char why[160], line[240];
    while (server_refusal(&c->srv, &pid, why, sizeof why)) {
        snprintf(line, sizeof line, "[culeak] pid %ld: not traced: %s", pid, why);
        outbuf_add_line(&c->u.out, line);
        ui_message(&c->u, 1, "%s", line + 9);
        c->dirty = 1;
    }
}

static void accept_all(struct console *c)
{
    struct conn *k;
    while ((k = server_accept(&c->srv, c->u.m))) {
        if (c->nconns == c->capconns) {
            size_t cap = c->capconns ? c->capconns * 2 : 8;
            struct conn **v = realloc(c->conns, cap * sizeof *v);
            if (!v) {
                conn_close(k);
                return;
            }
            c->conns = v;
            c->capconns = cap;
        }
        k->owner = c;
        c->conns[c->nconns++] = k;
    }
    say_refusals(c);
}

/* Reads process i's ring; end_check: also whether its process has ended. 1 when
 * something was read. */
int console_read_conn(struct console *c, size_t i, int end_check)
{
    static uint8_t buf[1 << 16];
    struct conn *k = c->conns[i];
    int read_some = 0;
    /* read eagerly, a bounded amount per turn so keys stay responsive */
    c->feeding = k;
    for (int turns = 0; turns < 64 && k->ring; turns++) {
        long got = conn_pump(k, buf, sizeof buf, end_check && turns == 0);
        if (got == -2)
            break;
        read_some = 1;
        if (got == 0 || got == -1) {
            drop_conn(c, i, NULL);
            break;
        }
        if (got == -3) {
            drop_conn(c, i, model_stream_error(k->ms));
            break;
        }
    }
    c->feeding = NULL;
    if (k->tee_lost[0] && !k->tee_lost_said) {
        k->tee_lost_said = 1;
        const struct model_process *p = proc_of(c, k->proc);
        char line[400];
        snprintf(line, sizeof line, "[culeak] pid %llu: %s (save will say so)", conn_pid(k, p),
                 k->tee_lost);
        outbuf_add_line(&c->u.out, line);
    }
    return read_some;
}

void console_observe(struct console *c)
{
    struct model_observer obs = {.ctx = c, .hello = o_hello, .event = o_event, .held = o_held,
                                 .new_stack = o_new_stack, .mark = o_mark, .exit = o_exit, .note = o_note,
                                 .lost = o_lost};
    model_set_observer(c->u.m, &obs);
}

static int run_loop(struct console *c)
{
    static uint8_t buf[1 << 16];
    int report_done = 0;
    double next_tick = 0;
    struct pollfd *fds = NULL;
    int got = 0;         /* the rings held something last turn */
    double next_end_check = 0;
    if (!(fds = malloc((3 + CULEAK_HUB_POLLFDS) * sizeof *fds)))
        return 0;
    while (!c->quit) {
        size_t nf = 0;
        fds[nf++] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
        fds[nf++] = (struct pollfd){.fd = sigpipe_fd[0], .events = POLLIN};
        size_t pty_i = 0, hub0 = 0, open_conns = 0;
        if (c->live && c->job.master >= 0) {
            pty_i = nf;
            fds[nf++] = (struct pollfd){.fd = c->job.master, .events = POLLIN};
        }
        hub0 = nf;
        if (c->live && c->srv.hub)
            nf += culeak_hub_pollfds(c->srv.hub, fds + nf, CULEAK_HUB_POLLFDS);
        for (size_t i = 0; i < c->nconns; i++)
            open_conns += c->conns[i]->ring != NULL;
        double now = console_clock();
        int timeout = (int)((next_tick - now) * 1000);
        if (timeout < 0)
            timeout = 0;
        if (timeout > 200)
            timeout = 200;
        /* rings wake no one: looked at soon again while events come */
        if (open_conns && timeout > (got ? 1 : 10))
            timeout = got ? 1 : 10;
        int naming = model_names_pending(c->u.m) > 0;
        if (naming)
            timeout = 0; /* names to resolve: only look for input, then go on resolving */
        int r = poll(fds, nf, timeout);
        if (r < 0 && errno != EINTR)
            break;
        if (r > 0) {
            if (fds[1].revents)
                on_signals(c);
            if (fds[0].revents)
                on_key(c);
            if (pty_i && fds[pty_i].revents) {
                ssize_t n = read(c->job.master, buf, sizeof buf);
                if (n > 0) {
                    outbuf_feed(&c->u.out, (char *)buf, (size_t)n);
                    c->dirty = 1;
                } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                    close(c->job.master);
                    c->job.master = -1;
                }
            }
            for (size_t i = hub0; i < nf; i++)
                if (fds[i].revents) {
                    accept_all(c);
                    break;
                }
        }
        now = console_clock();
        /* whether processes ended is looked at every 100 ms (a system call each) */
        int end_check = now >= next_end_check;
        if (end_check) {
            next_end_check = now + 0.1;
            if (c->live)
                accept_all(c); /* the launched program's ring, once it claimed it */
        }
        got = 0;
        for (size_t i = 0; i < c->nconns; i++) {
            if (!c->conns[i]->ring)
                continue;
            if (c->conns[i]->outq_len) /* commands the process has not taken yet */
                conn_flush_out(c->conns[i]);
            got |= console_read_conn(c, i, end_check);
        }
        console_commands_run(c); /* of a breakpoint that paused the job */
        console_metrics_service(c);
        now = console_clock();
        c->u.now = now - c->t0;
        if (c->kill_deadline && now >= c->kill_deadline) {
            job_signal(&c->job, SIGKILL);
            c->kill_deadline = 0;
        }
        if (c->live && c->job.exited && !report_done) {
            open_conns = 0;
            for (size_t i = 0; i < c->nconns; i++)
                open_conns += c->conns[i]->ring != NULL;
            if (!open_conns || now - c->t0 > 0) {
                if (!open_conns) {
                    console_leak_report(c);
                    report_done = 1;
                    c->dirty = 1;
                }
            }
        }
        /* Names of new sites fill in a slice at a time (the rows on screen were resolved
         * when drawn), so a burst of sites never blocks a key or a stream for long. */
        if (naming && ui_resolve_names(&c->u, NAME_SLICE_S) && (c->u.filter[0] || c->u.sort == SORT_SITE))
            c->dirty = 1; /* the filter and the site order refine as names arrive */
        if (c->autosnap_every > 0 && now >= c->next_autosnap) {
            char name[64];
            console_snapshot(c, NULL, name, sizeof name);
            c->next_autosnap = now + c->autosnap_every;
            c->dirty = 1;
        }
        if (now >= next_tick) {
            if (c->job.attached && !c->job.exited)
                check_job(c);
            if (now - c->rate_t >= 1.0) {
                c->u.rate = (double)c->rate_events / (now - c->rate_t);
                c->rate_events = 0;
                c->rate_t = now;
                c->dirty = 1;
            }
            if (now - c->last_sample >= 0.5 && c->live) {
                ui_sample(&c->u);
                c->last_sample = now;
            }
            if (c->dirty)
                render(c);
            next_tick = now + 0.1; /* at most ten frames a second */
        }
    }
    free(fds);
    return 0;
}

/* culeak attach: the debugger loads the shim into the process, which hands a ring over
 * to the console; the title names the process as `ps` would. 0, or -1 with err. */
static int console_attach(struct console *c, char *err, size_t len)
{
    pid_t pid = (pid_t)c->opt.attach_pid;
    char endpoint[1200];
    snprintf(endpoint, sizeof endpoint, "ring:%s", c->srv.path);
    int r = culeak_inject(pid, endpoint, c->opt.attach_timeout > 0 ? c->opt.attach_timeout : 30, err, len);
    if (r != 0)
        return -1;
    c->job.pid = pid;
    c->job.attached = 1;
    char cmdline[900];
    culeak_proc_cmdline(pid, cmdline, sizeof cmdline);
    snprintf(c->u.title, sizeof c->u.title, "pid %d (attached; before it: no stacks): %.400s", (int)pid, cmdline);
    return 0;
}

int console_main(const struct console_options *opt)
{
    static struct console con;
    struct console *c = &con;
    memset(c, 0, sizeof *c);
    c->opt = *opt;
    c->t0 = c->rate_t = console_clock();
    c->job.master = -1;
    if (ui_init(&c->u) != 0) {
        fprintf(stderr, "culeak: out of memory\n");
        ui_free(&c->u);
        return 1;
    }
    char err[512];
    int start_failed = 0;
    if (opt->files) {
        if (timeline_load(&c->tl, c->u.m, opt->files, opt->nfiles, err, sizeof err) != 0) {
            fprintf(stderr, "culeak open: %s\n", err);
            ui_free(&c->u);
            return 1;
        }
        c->u.state = JOB_NONE;
        size_t n = 0;
        for (int i = 0; i < opt->nfiles && n + 2 < sizeof c->u.title; i++) {
            int w = snprintf(c->u.title + n, sizeof c->u.title - n, "%s%s", i ? " " : "", opt->files[i]);
            if (w < 0)
                break;
            n += (size_t)w;
        }
        console_history(c);
    } else {
        if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
            fprintf(stderr, "culeak: the console needs a terminal (use culeak record or culeak check)\n");
            ui_free(&c->u);
            return 2;
        }
        if (server_open(&c->srv, err, sizeof err) != 0) {
            fprintf(stderr, "culeak: %s\n", err);
            ui_free(&c->u);
            return 1;
        }
        c->live = 1;
        console_observe(c);
        size_t n = 0;
        if (opt->attach_pid && console_attach(c, err, sizeof err) != 0) {
            fprintf(stderr, "culeak attach: %s\n", err);
            server_close(&c->srv);
            ui_free(&c->u);
            return 1;
        }
        for (int i = 0; opt->argv && opt->argv[i] && n + 2 < sizeof c->u.title; i++) {
            int w = snprintf(c->u.title + n, sizeof c->u.title - n, "%s%s", i ? " " : "", opt->argv[i]);
            if (w < 0)
                break;
            n += (size_t)w;
        }
        c->u.state = JOB_RUNNING;
    }
    c->autosnap_every = opt->snapshot_every;
    c->autosnap_marks = opt->snapshot_at_marks;
    c->next_autosnap = c->t0 + opt->snapshot_every;

    if (pipe2(sigpipe_fd, O_CLOEXEC | O_NONBLOCK) != 0)
        return 1;
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGWINCH, &sa, NULL);
    sigaction(SIGCHLD, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    struct sigaction ign = {.sa_handler = SIG_IGN};
    sigaction(SIGINT, &ign, NULL);
    sigaction(SIGQUIT, &ign, NULL);
    sigaction(SIGPIPE, &ign, NULL);

    if (screen_open() != 0) {
        fprintf(stderr, "culeak: %s\n", screen_why());
        server_close(&c->srv);
        ui_free(&c->u);
        return 2;
    }
    /* stray prints (libraries, sanitizers) must not scribble over the screen; the copy of
     * the terminal kept for the end is not the job's to inherit (it would hold the
     * console's terminal open after a detach) */
    int saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0);
    char errlog[4200];
    snprintf(errlog, sizeof errlog, "%.1100s/stderr.log", c->srv.session[0] ? c->srv.session : "/tmp");
    int ef = c->live ? open(errlog, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600) : open("/dev/null", O_WRONLY);
    if (ef >= 0) {
        dup2(ef, STDERR_FILENO);
        close(ef);
    }
    prompt_open(c);
    int rows, cols;
    screen_size(&rows, &cols);
    layout_compute(rows, cols, &c->lay);
    /* the emulated terminal is the pane's size before the job can write to it: libvterm does
     * not rewrap on a resize, so what the job wrote at another width would be cut */
    outbuf_resize(&c->u.out, c->lay.output.h - 1, c->lay.output.w);
    console_run_startup(c);
    if (c->live && c->job.attached) {
        char line[1300];
        snprintf(line, sizeof line, "[culeak] attached to pid %d; socket %.900s", (int)c->job.pid, c->srv.path);
        outbuf_add_line(&c->u.out, line);
    } else if (c->live) {
        if (job_start(&c->job, opt->argv, c->srv.hub, opt->depth, job_rows(&c->lay), cols > 0 ? cols : 1, err, sizeof err) != 0) {
            /* nothing ran: no console on an empty job; the error and 127, as record and check */
            c->job.exited = 1;
            c->job.status = 127 << 8;
            c->quit = 1;
            start_failed = 1;
        } else {
            /* every process of the job holds a connection: the console may need many
             * descriptors (raised for the console only, the job started with its own) */
            struct rlimit rl;
            if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                setrlimit(RLIMIT_NOFILE, &rl);
            }
            char line[1300];
            c->u.out.reply_fd = &c->job.master; /* the terminal's answers go to the job */
            snprintf(line, sizeof line, "[culeak] started pid %d; socket %.900s", (int)c->job.pid, c->srv.path);
            outbuf_add_line(&c->u.out, line);
            if (culeak_program_is_static(opt->argv[0])) {
                snprintf(line, sizeof line, "[culeak] %.900s is statically linked: a preloaded library cannot "
                         "reach it, so nothing of it is traced", opt->argv[0]);
                outbuf_add_line(&c->u.out, line);
            }
        }
    } else {
        if (c->tl.warning[0]) { /* as culeak report's warnings */
            char line[500];
            snprintf(line, sizeof line, "[culeak] %.400s", c->tl.warning);
            outbuf_add_line(&c->u.out, line);
        }
        if (c->tl.damage[0]) { /* as culeak report: what comes before the damage is shown */
            char line[500];
            snprintf(line, sizeof line, "[culeak] %.400s: read up to the damage", c->tl.damage);
            outbuf_add_line(&c->u.out, line);
            ui_message(&c->u, 1, "a recording is corrupt: read up to the damage (see the output pane)");
        } else
            ui_message(&c->u, 0, "%llu event%s in %d process%s; goto peak|oom|MARK|TIME|start|end",
                       (unsigned long long)c->tl.nevents, plural(c->tl.nevents), model_process_count(c->u.m),
                       model_process_count(c->u.m) == 1 ? "" : "es");
    }
    c->dirty = 1;
    run_loop(c);
    console_metrics_close(c);

    prompt_close();
    screen_close();
    if (saved_stderr >= 0) {
        dup2(saved_stderr, STDERR_FILENO);
        close(saved_stderr);
    }
    if (start_failed)
        fprintf(stderr, "culeak: %s\n", err);
    /* server_close lets every process go (a held thread returns): the job is never left hung */
    for (size_t i = 0; i < c->nconns; i++)
        conn_close(c->conns[i]);
    free(c->conns);
    free(c->by_proc);
    free(c->pending);
    free(c->cmds_text);
    free(c->cmds_due);
    int status = 0;
    if (c->live && c->job.attached) {
        /* the process is not the console's: its status is its own, culeak's is 0 */
        if (c->job.exited || job_reap(&c->job))
            fprintf(stderr, "culeak: pid %d ended\n", (int)c->job.pid);
        else
            fprintf(stderr, "culeak: detached from pid %d: it runs on, untraced\n", (int)c->job.pid);
        server_close(&c->srv);
    } else if (c->live) {
        job_reap(&c->job);
        if (c->job.exited) {
            status = WIFEXITED(c->job.status) ? WEXITSTATUS(c->job.status) : 128 + WTERMSIG(c->job.status);
            holder_release(&c->job.holder, NULL); /* what a straggler still prints: the fallback file */
        } else {
            /* detach (or a hang-up of the console's terminal): the job runs on, its
             * terminal held, its further output in the detach file */
            const char *to = c->detach_to[0] ? c->detach_to : c->job.holder.fallback;
            holder_release(&c->job.holder, to);
            if (!c->job.holder.pid)
                fprintf(stderr, "culeak: the job (pid %d) loses its terminal with the console\n", (int)c->job.pid);
            else if (to[0])
                fprintf(stderr, "culeak: detached from the job (pid %d): it runs on, its output goes to %s\n",
                        (int)c->job.pid, to);
            else
                fprintf(stderr, "culeak: detached from the job (pid %d): it runs on, its output is discarded\n",
                        (int)c->job.pid);
        }
        if (c->job.master >= 0)
            close(c->job.master);
        server_close(&c->srv);
    }
    timeline_free(&c->tl);
    grid_free(&c->grid);
    ui_free(&c->u);
    return status;
}
