/* A process the console attaches to (culeak attach PID): the shim loaded into it before
 * the screen opens, its ring read as a launched job's; at the end it runs on, untraced,
 * unless it ended. It is not the console's: culeak's status is 0. */
#include "console.h"
#include "launch/attach_job.h"
#include "launch/inject.h"
#include "source.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>

/* The attached process's ring came (taken, its reader made; read once the loop runs). */
static int ring_came(void *ctx, pid_t pid)
{
    struct console *c = ctx;
    struct pollfd fds[CULEAK_HUB_POLLFDS];
    poll(fds, culeak_hub_pollfds(c->rings.hub, fds, CULEAK_HUB_POLLFDS), 50);
    console_accept_rings(c);
    for (size_t i = 0; i < c->nreaders; i++)
        if (c->readers[i]->pid == (long)pid)
            return 1;
    return 0;
}

/* The injector loads the shim into the process, which hands a ring over to the console
 * (attach_job.h, as record --pid); the title names the process as `ps` would. */
static int attached_open(struct console *c)
{
    int rc = console_live_open(c);
    if (rc)
        return rc;
    pid_t pid = (pid_t)c->opt.attach_pid;
    char err[1200];
    if (culeak_attach_job(pid, c->rings.path, c->opt.attach_timeout > 0 ? c->opt.attach_timeout : 30, ring_came, c,
                          NULL, err, sizeof err) != 0) {
        fprintf(stderr, "culeak attach: %s\n", err);
        for (size_t i = 0; i < c->nreaders; i++) /* a ring of another process, meanwhile */
            ring_reader_close(c->readers[i]);
        free(c->readers);
        ring_readers_close(&c->rings);
        return 1;
    }
    c->job.pid = pid;
    c->job.attached = 1;
    char cmdline[900];
    culeak_proc_cmdline(pid, cmdline, sizeof cmdline);
    snprintf(c->u.title, sizeof c->u.title, "pid %d (attached; before it: no stacks): %.400s", (int)pid, cmdline);
    return 0;
}

static void attached_start(struct console *c)
{
    char line[1300];
    snprintf(line, sizeof line, "[culeak] attached to pid %d; socket %.900s", (int)c->job.pid, c->rings.path);
    outbuf_add_line(&c->u.out, line);
    char timing[200];
    if (culeak_attach_timing_line(timing, sizeof timing)) {
        snprintf(line, sizeof line, "[culeak] %s", timing);
        outbuf_add_line(&c->u.out, line);
    }
}

static int attached_close(struct console *c)
{
    if (c->job.exited || job_reap(&c->job))
        fprintf(stderr, "culeak: pid %d ended\n", (int)c->job.pid);
    else
        fprintf(stderr, "culeak: detached from pid %d: it runs on, untraced\n", (int)c->job.pid);
    ring_readers_close(&c->rings);
    return 0;
}

const struct console_source console_attached = {attached_open, attached_start, attached_close};
