/* libFuzzer target: arbitrary bytes as a traced process's connection to the console: read
 * by the console's own path (the copy for `save`, the decoder, the model and the console's
 * observer: HELLO, held allocations pausing at a breakpoint and queueing, marks, notes),
 * in two pieces with breakpoint commands between them, then continue, delete and the
 * connection's end. Nothing may crash, leak or grow without bound. */
#include "../../src/console/console.h"

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void send_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return; /* larger than the socket buffer: the rest is dropped */
        p += w;
        n -= (size_t)w;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct console c;
    signal(SIGPIPE, SIG_IGN); /* as the console: a connection dropped mid-write is no signal */
    memset(&c, 0, sizeof c);
    if (ui_init(&c.u) != 0)
        return 0;
    c.live = 1;
    c.job.master = c.job.holder.ctl = c.srv.lfd = -1;
    c.srv.copy_limit = 4096; /* the copy stops part-way on larger inputs */
    console_observe(&c);
    int sp[2];
    struct conn *k = calloc(1, sizeof *k);
    c.conns = malloc(sizeof *c.conns);
    if (!k || !c.conns || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sp) != 0) {
        free(k);
        free(c.conns);
        ui_free(&c.u);
        return 0;
    }
    k->fd = sp[0];
    k->proc = -1;
    k->ms = model_stream_open(c.u.m);
    k->tee_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    k->srv = &c.srv;
    k->owner = &c;
    c.conns[0] = k;
    c.nconns = c.capconns = 1;
    if (k->ms) {
        size_t cut = size ? (size_t)data[size - 1] * size / 256 : 0;
        send_all(sp[1], data, cut);
        console_read_conn(&c, 0);
        console_exec(&c, "break 1");
        console_exec(&c, "break 2 count > 1");
        send_all(sp[1], data + cut, size - cut);
        shutdown(sp[1], SHUT_WR);
        for (int turns = 0; turns < 16 && k->fd >= 0; turns++)
            console_read_conn(&c, 0);
        console_exec(&c, "info breakpoints");
        console_exec(&c, "continue");
        console_exec(&c, "delete 1");
        console_exec(&c, "continue");
        console_exec(&c, "snapshot");
    }
    close(sp[1]);
    conn_close(k);
    free(c.conns);
    free(c.by_proc);
    free(c.pending);
    ui_free(&c.u);
    return 0;
}
