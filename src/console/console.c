/* The console session: poll loop over the terminal, the job's pty, the rings' hand-over
 * socket and a signal self-pipe; every process's ring is read each turn (a ring wakes no
 * one: the loop turns every millisecond while events come, every 10 ms while none do);
 * redraws on a timer when dirty. Where the processes come from is the source's
 * (source.h); the rings are read in streams.c. */
#include "console.h"
#include "fmt.h"
#include "job_input.h"
#include "prompt.h"
#include "screen.h"
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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
            job_resize(&c->job, console_job_rows(&c->lay), cols > 0 ? cols : 1);
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
    console_check_job(c);
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
        if (c->live && c->rings.hub)
            nf += culeak_hub_pollfds(c->rings.hub, fds + nf, CULEAK_HUB_POLLFDS);
        for (size_t i = 0; i < c->nreaders; i++)
            open_conns += c->readers[i]->ring != NULL;
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
                    console_accept_rings(c);
                    break;
                }
        }
        now = console_clock();
        /* whether processes ended is looked at every 100 ms (a system call each) */
        int end_check = now >= next_end_check;
        if (end_check) {
            next_end_check = now + 0.1;
            if (c->live)
                console_accept_rings(c); /* the launched program's ring, once it claimed it */
        }
        got = 0;
        for (size_t i = 0; i < c->nreaders; i++) {
            if (!c->readers[i]->ring)
                continue;
            if (c->readers[i]->outq_len) /* commands the process has not taken yet */
                ring_reader_flush_out(c->readers[i]);
            got |= console_read_ring(c, i, end_check);
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
            for (size_t i = 0; i < c->nreaders; i++)
                open_conns += c->readers[i]->ring != NULL;
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
                console_check_job(c);
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
    const struct console_source *src = opt->files ? &console_recordings
                                       : opt->attach_pid ? &console_attached : &console_launched;
    int rc = src->open(c);
    if (rc) {
        ui_free(&c->u);
        return rc;
    }
    c->autosnap_every = opt->snapshot_every;
    c->autosnap_marks = opt->snapshot_at_marks;
    const char *hm = getenv("CULEAK_HOLDERS"); /* --holders: the job walks at marks from its start */
    c->holders_marks = hm && !strcmp(hm, "marks");
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
        ring_readers_close(&c->rings);
        ui_free(&c->u);
        return 2;
    }
    /* stray prints (libraries, sanitizers) must not scribble over the screen; the copy of
     * the terminal kept for the end is not the job's to inherit (it would hold the
     * console's terminal open after a detach) */
    int saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 0);
    char errlog[4200];
    snprintf(errlog, sizeof errlog, "%.1100s/stderr.log", c->rings.session[0] ? c->rings.session : "/tmp");
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
    src->start(c);
    c->dirty = 1;
    run_loop(c);
    console_metrics_close(c);

    prompt_close();
    screen_close();
    if (saved_stderr >= 0) {
        dup2(saved_stderr, STDERR_FILENO);
        close(saved_stderr);
    }
    /* ring_readers_close lets every process go (a held thread returns): the job is never left hung */
    for (size_t i = 0; i < c->nreaders; i++)
        ring_reader_close(c->readers[i]);
    free(c->readers);
    for (size_t i = 0; i < c->nrefused && i < c->caprefused; i++)
        free(c->refused[i]);
    free(c->refused);
    free(c->by_proc);
    free(c->pending);
    free(c->cmds_text);
    free(c->cmds_due);
    int status = src->close(c);
    timeline_free(&c->tl);
    grid_free(&c->grid);
    ui_free(&c->u);
    return status;
}
