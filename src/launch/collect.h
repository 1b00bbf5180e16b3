/* The reader of a launched job's rings (culeak-stream(5), The ring): every traced process
 * of the job writes its stream into a ring it shares with this process, which drains the
 * rings into the recordings. What a process committed is read even after it was killed:
 * this process holds the memory. */
#ifndef CULEAK_COLLECT_H
#define CULEAK_COLLECT_H

#include <stddef.h>
#include <stdint.h>

struct culeak_collector;

/* A hand-over socket in a private directory and the ring for the program about to be
 * started. NULL (message on stderr) when they cannot be made. */
struct culeak_collector *culeak_collector_new(void);
/* The same for a process culeak attaches to (no program is started): a ring whose writer
 * names no recording is written to out (the first; another process's to out.PID). */
struct culeak_collector *culeak_collector_attach(const char *out);
/* The output pattern the job is given (CULEAK_OUTPUT): a ring's recording is written at
 * the path its header names only when the pattern gives that path to the ring's writer
 * (path_match.h); another is refused with a message (a same-user process cannot have
 * culeak write a file of its choice). 0, or -1 out of memory. */
int culeak_collector_expect(struct culeak_collector *c, const char *pattern);
/* record --roll: each recording goes on in a new part at the boundary (roll.h). */
struct culeak_roll_opts;
void culeak_collector_roll(struct culeak_collector *c, const struct culeak_roll_opts *opt);
/* The hand-over socket (an attach's endpoint is "ring:" and it). */
const char *culeak_collector_socket(const struct culeak_collector *c);
/* 1 once process pid handed its ring over. */
int culeak_collector_has(const struct culeak_collector *c, long pid);
/* In the child about to exec: the ring's descriptor made inheritable, CULEAK_RING_FD and
 * CULEAK_RING_SOCKET set. 0, or -1. */
int culeak_collector_child_env(struct culeak_collector *c);
/* In the parent once the child is started: its copy of the child's descriptor closed. */
void culeak_collector_started(struct culeak_collector *c);
/* Waits up to timeout_ms for a hand-over, takes those that came, and writes what the
 * rings hold into their recordings: the bytes written. A ring read to its end (its writer
 * ended or is gone) has its recording closed and its slot given to a later process. */
size_t culeak_collector_poll(struct culeak_collector *c, int timeout_ms);
/* The job's processes not recorded: refused (said on stderr with their pid and why), or
 * whose recording could not be made. */
unsigned long culeak_collector_unrecorded(const struct culeak_collector *c);
/* 1 while a process that writes one of the rings lives and has not ended its stream. */
int culeak_collector_busy(struct culeak_collector *c);
/* Optional: a reader besides the recordings (record --metrics), given each ring's bytes
 * as they are written out (culeak-stream(5) records from HELLO on, without the MAGIC)
 * and told when the ring is read to its end; a slot is used again by a later process
 * only after its end. The tap runs in the reader's loop: what it costs, the job waits
 * for only when its ring fills. */
struct culeak_collect_tap {
    void *ctx;
    void (*bytes)(void *ctx, size_t slot, const void *p, size_t n);
    void (*ended)(void *ctx, size_t slot);
    void (*turn)(void *ctx); /* at the end of every culeak_collector_poll */
};
void culeak_collector_tap(struct culeak_collector *c, const struct culeak_collect_tap *tap);
/* Optional: the recordings are aggregated (common/aggregate.h): allocations made and
 * freed within interval_ns, or between two marks, are counted per call site instead of
 * written one by one. 0: every event is written. */
void culeak_collector_aggregate(struct culeak_collector *c, uint64_t interval_ns);
/* Takes the last hand-overs and records, closes the recordings, removes the socket. */
void culeak_collector_free(struct culeak_collector *c);

#endif
