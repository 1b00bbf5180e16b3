/* The console's listening socket in a private directory, and the connections of the
 * job's processes (one per traced process). */
#ifndef CULEAK_CONSOLE_SERVER_H
#define CULEAK_CONSOLE_SERVER_H

#include "model.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

struct conn {
    int fd;
    int proc;               /* model process index, -1 before HELLO */
    struct model_stream *ms; /* every byte read goes into the model through it */
    int tee_fd;             /* raw bytes, for `save` */
    char tee_path[PATH_MAX];
    uint64_t tee_bytes;     /* in the copy so far */
    char tee_lost[160];     /* why the copy stopped before the stream's end; "" while whole */
    int tee_lost_said;      /* the console said so in the output pane */
    struct server *srv;
    void *owner;
    uint8_t *outq;          /* commands not sent yet (the peer does not read them now) */
    size_t outq_len, outq_cap;
};

struct server {
    int lfd;
    char dir[1024];         /* $XDG_RUNTIME_DIR/culeak or /tmp/culeak-UID, mode 0700 */
    char path[1100];        /* the socket */
    char session[1100];     /* per-session directory (stderr.log) */
    char copies[1100];      /* per-session directory of the stream copies, on disk:
                             * $XDG_CACHE_HOME/culeak/session-PID (~/.cache) */
    unsigned nconn_total;
    uint64_t copy_total;    /* bytes in every copy of this session */
    uint64_t copy_limit;    /* CULEAK_COPY_LIMIT (default 4 GiB): copies stop there */
    int reserve_fd;         /* kept for EMFILE: closed to accept (and close) a peer */
    unsigned nlive;         /* connections open now */
    unsigned max_peers;     /* at most this many at once (from RLIMIT_NOFILE) */
};

/* Creates the private directory (checked: owned by us, mode 0700), the socket and the
 * session directories, after removing those of consoles of this user that died (killed
 * before they could clean up). 0, or -1 with err. */
int server_open(struct server *s, char *err, size_t errlen);
/* In the job's process before exec: the descriptor limit server_open raised for the
 * console goes back to what it was. */
void server_job_limits(void);
/* Accepts one pending connection, with a stream into m; NULL when none or refused
 * (*refused: 1 another user, 2 too many peers or no descriptor left; the connection is
 * closed, so a pending one never keeps the listening socket readable). */
struct conn *server_accept(struct server *s, struct model *m, int *refused);
/* Reads what is available: >0 bytes fed, 0 on end of stream, -1 on error, -2 would block.
 * Bytes go to the copy and the model (corrupt stream: -3, model_stream_error says why).
 * A copy that cannot be written, or would pass the session's limit, stops: tee_lost says
 * why, and `save` reports it. */
long conn_pump(struct conn *c, uint8_t *buf, size_t cap);
/* Sends a command record (wire.h), never waiting: what the peer does not take now is
 * queued and sent by conn_flush_out. 0, or -1 when the connection is gone or its queue
 * passed CONN_OUTQ_MAX (a peer that never reads: it is shut down, and its next read
 * ends it). */
int conn_send(struct conn *c, uint8_t type, const uint64_t *vals, size_t nvals);
#define CONN_OUTQ_MAX (1u << 20)
/* Sends what is queued, as much as the peer takes now. -1 when the connection is gone. */
int conn_flush_out(struct conn *c);
void conn_close(struct conn *c); /* closes the fd and frees; the tee file stays */
/* Removes the socket and the session directories (with the copies). */
void server_close(struct server *s);

#endif
