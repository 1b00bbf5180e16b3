/* A job the console launches (culeak PROGRAM): started in its own terminal once the
 * screen is up, its rings read as its processes hand them over; its end, kill, and at
 * the console's end its exit status, or, detached, the job left running. The job's end and
 * kill serve an attached process too (source_attach.c). */
#include "console.h"
#include "job_input.h"
#include "launch/launch.h"
#include "screen.h"
#include "source.h"

#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void console_kill(struct console *c)
{
    if (!c->live || c->job.exited) {
        ui_message(&c->u, 1, "there is no running job");
        return;
    }
    /* release everything first: a paused thread must be able to die */
    for (size_t i = 0; i < c->nreaders; i++)
        ring_reader_let_go(c->readers[i]);
    job_signal(&c->job, SIGTERM);
    c->kill_deadline = console_clock() + 3.0;
    ui_message(&c->u, 0, "sent SIGTERM to the job's process group (SIGKILL in 3 s)");
}

void console_kill_now(struct console *c)
{
    if (!c->live || c->job.exited)
        return;
    for (size_t i = 0; i < c->nreaders; i++) /* a paused thread must be able to die */
        ring_reader_let_go(c->readers[i]);
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

/* The job's end (a child's SIGCHLD; an attached process's end is looked for at each tick). */
void console_check_job(struct console *c)
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

/* The job's terminal is the output pane, at least 2 rows (a screen too small has none). */
int console_job_rows(const struct layout *l)
{
    return l->output.h - 1 > 2 ? l->output.h - 1 : 2;
}

/* A live session's rings and the model's observer (a launched job's and an attached
 * process's): 0, or the exit status, said on stderr. */
int console_live_open(struct console *c)
{
    char err[512];
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "culeak: the console needs a terminal (use culeak record or culeak check)\n");
        return 2;
    }
    if (ring_readers_open(&c->rings, err, sizeof err) != 0) {
        fprintf(stderr, "culeak: %s\n", err);
        return 1;
    }
    c->live = 1;
    console_observe(c);
    c->u.state = JOB_RUNNING;
    return 0;
}

static int launched_open(struct console *c)
{
    int rc = console_live_open(c);
    if (rc)
        return rc;
    size_t n = 0;
    for (int i = 0; c->opt.argv && c->opt.argv[i] && n + 2 < sizeof c->u.title; i++) {
        int w = snprintf(c->u.title + n, sizeof c->u.title - n, "%s%s", i ? " " : "", c->opt.argv[i]);
        if (w < 0)
            break;
        n += (size_t)w;
    }
    return 0;
}

static void launched_start(struct console *c)
{
    const struct console_options *opt = &c->opt;
    int rows, cols;
    screen_size(&rows, &cols);
    if (job_start(&c->job, opt->argv, c->rings.hub, opt->depth, console_job_rows(&c->lay), cols > 0 ? cols : 1,
                  c->start_err, sizeof c->start_err) != 0) {
        /* nothing ran: no console on an empty job; the error and 127, as record and check */
        c->job.exited = 1;
        c->job.status = 127 << 8;
        c->quit = 1;
        return;
    }
    c->start_err[0] = 0;
    /* every process of the job holds a connection: the console may need many
     * descriptors (raised for the console only, the job started with its own) */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    char line[1300];
    c->u.out.reply_fd = &c->job.master; /* the terminal's answers go to the job */
    snprintf(line, sizeof line, "[culeak] started pid %d; socket %.900s", (int)c->job.pid, c->rings.path);
    outbuf_add_line(&c->u.out, line);
    if (culeak_program_is_static(opt->argv[0])) {
        snprintf(line, sizeof line, "[culeak] %.900s is statically linked: a preloaded library cannot "
                 "reach it, so nothing of it is traced", opt->argv[0]);
        outbuf_add_line(&c->u.out, line);
    }
}

static int launched_close(struct console *c)
{
    int status = 0;
    if (c->start_err[0])
        fprintf(stderr, "culeak: %s\n", c->start_err);
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
    ring_readers_close(&c->rings);
    return status;
}

const struct console_source console_launched = {launched_open, launched_start, launched_close};
