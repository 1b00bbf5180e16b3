/* The job: started under the shim in its own pseudo-terminal and session. */
#ifndef CULEAK_CONSOLE_PTY_H
#define CULEAK_CONSOLE_PTY_H

#include "holder.h"
#include "launch/ring_hub.h"

#include <sys/types.h>

struct job {
    pid_t pid;     /* also its process group */
    int master;    /* pty master: the job's output, -1 once closed */
    int exited;
    int status;    /* wait status (attached: -1 when unknown) */
    struct holder holder; /* keeps the terminal open when the console goes */
    int attached;  /* culeak attach: not the console's child, no terminal of its own */
};

/* forkpty + exec argv with LD_PRELOAD set and the first of hub's rings given to it
 * (CULEAK_RING_FD, CULEAK_RING_SOCKET), then the holder of its terminal. 0, or -1 with
 * err. */
int job_start(struct job *j, char **argv, struct culeak_hub *hub, int depth, int rows, int cols, char *err,
              size_t errlen);
void job_resize(struct job *j, int rows, int cols);
/* Signals the job's process group (an attached job: the process). */
void job_signal(struct job *j, int sig);
/* Reaps the job (and the holder) if it ended: 1 when the job just exited. An attached job
 * has ended when it is gone or a zombie (status: its wait status when /proc still has it). */
int job_reap(struct job *j);

#endif
