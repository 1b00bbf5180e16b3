/* The holder of the job's terminal: a small process of its own session that keeps the
 * job's pseudo-terminal master open for as long as the job has its terminal, so that the
 * console quitting or dying never hangs the terminal up (the job would die of SIGHUP).
 * While the console lives the holder only waits, even after the job has closed its
 * terminal (what the job wrote last may be unread yet); once the console detaches or dies
 * it copies the job's further output into a file, and ends when the terminal has nothing
 * more to give: every process of the job closed it and the last byte was read. */
#ifndef CULEAK_CONSOLE_HOLDER_H
#define CULEAK_CONSOLE_HOLDER_H

#include <stddef.h>
#include <sys/types.h>

struct holder {
    pid_t pid;   /* 0: none */
    int ctl;     /* write end of the console's line to the holder; -1 once closed */
    char fallback[1024]; /* where the output goes when the console dies without a word */
};

/* The default detach file: $XDG_STATE_HOME/culeak/job-PID.log (~/.local/state when
 * unset), its directory created (0700). 0, or -1 with err. */
int holder_default_file(pid_t job, char *out, size_t outlen, char *err, size_t errlen);

/* Forks the holder of master. h->fallback must be set (may be empty: output discarded).
 * 0, or -1 with err. */
int holder_start(struct holder *h, int master, char *err, size_t errlen);

/* The console leaves: the job's further output goes to path (NULL: to h->fallback,
 * "": discarded). Closes the line; the holder then runs on its own. */
void holder_release(struct holder *h, const char *path);

/* Reaps the holder if it ended (it ends with the job's terminal). */
void holder_reap(struct holder *h);

#endif
