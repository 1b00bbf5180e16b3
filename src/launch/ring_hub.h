/* The rings of a launched or attached job, shared by culeak's readers (collect.c for
 * record and check, the console): culeak-stream(5), The ring. The hub makes the ring of
 * the program about to start, and takes the rings the job's other processes hand over on
 * a socket in a directory only this user can enter (mkdtemp, 0700; under
 * XDG_RUNTIME_DIR, else TMPDIR, else /tmp), each peer checked with SO_PEERCRED. It never
 * waits for a peer: a hand-over that does not come in time is dropped. At culeak's
 * descriptor limit, two descriptors kept in reserve make room for a hand-over: a ring
 * holds none once mapped. */
#ifndef CULEAK_RING_HUB_H
#define CULEAK_RING_HUB_H

#include "common/ring.h"

#include <poll.h>
#include <stddef.h>

struct culeak_hub;

/* The directory, the hand-over socket and the ring for the program about to be started;
 * console: the reader answers HELLO with commands (the rings say so to their writers).
 * NULL with the reason in err when they cannot be made. The directories of this user's
 * hubs whose culeak was killed are removed first (culeak_hub_sweep). */
struct culeak_hub *culeak_hub_new(int console, char *err, size_t len);
/* In base: removes this user's hub directories (culeak-XXXXXX, private) at least a minute
 * old whose socket nobody listens on, or that have none, when nothing else is in them but
 * an empty stderr.log. */
void culeak_hub_sweep(const char *base);
/* In the child about to exec: the ring's descriptor made inheritable, CULEAK_RING_FD and
 * CULEAK_RING_SOCKET set. 0, or -1. */
int culeak_hub_child_env(struct culeak_hub *h);
/* In the parent once the child is started (or when none will be): its copy of the
 * child's descriptor closed. */
void culeak_hub_started(struct culeak_hub *h);
/* The hand-over socket's path (an attach's endpoint), and its private directory. */
const char *culeak_hub_socket(const struct culeak_hub *h);
const char *culeak_hub_dir(const struct culeak_hub *h);
/* The descriptors to poll for input (the listening socket, the connections whose ring is
 * awaited): at most max into fds, the count returned. */
size_t culeak_hub_pollfds(const struct culeak_hub *h, struct pollfd *fds, size_t max);
#define CULEAK_HUB_POLLFDS 17
/* Accepts the connections that came and takes the rings that came on them, never
 * waiting; a connection whose ring did not come within 200 ms is closed. The number of
 * rings added. */
size_t culeak_hub_service(struct culeak_hub *h);
/* 1 while a connection's ring is awaited (for at most 200 ms). */
int culeak_hub_pending(const struct culeak_hub *h);
/* The slots rings are kept in (one past the highest used): a ring keeps its index, and
 * its slot is given to a later ring once culeak_hub_release freed it. */
size_t culeak_hub_count(const struct culeak_hub *h);
/* Ring i; NULL for a free slot. Its address stays the same until it is released. */
struct culeak_ring *culeak_hub_ring(struct culeak_hub *h, size_t i);
/* The ring that came first of those not taken yet (the launched program's only once it
 * claimed it), now taken: its index, or -1 when there is none. */
long culeak_hub_take(struct culeak_hub *h);
/* The reader is done with ring i (read to its end, or never to be read): its writer is
 * told it is read no more, the ring unmapped and its slot free. At most 4096 rings are
 * held at once: a process past that, or whose ring cannot be received or mapped, is
 * refused, and said so by culeak_hub_refusal. */
void culeak_hub_release(struct culeak_hub *h, size_t i);
/* The next refused process not yet told: 1 with its pid and why[len], or 0. The first 64
 * are kept to be told; culeak_hub_refused counts them all. */
int culeak_hub_refusal(struct culeak_hub *h, long *pid, char *why, size_t len);
unsigned long culeak_hub_refused(const struct culeak_hub *h);
/* The process that writes ring i (SO_PEERCRED; the launched program's once it claimed
 * its ring; 0 before, and for a free slot). */
long culeak_hub_pid(const struct culeak_hub *h, size_t i);
/* 1 while the writer of ring i lives and has not ended its stream. */
int culeak_hub_writer_live(const struct culeak_hub *h, size_t i);
/* Tells every writer that this reader reads no more (their tracing stops), unmaps the
 * rings, removes the socket and the directory. */
void culeak_hub_free(struct culeak_hub *h);

#endif
