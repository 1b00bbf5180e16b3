/* libFuzzer target: arbitrary bytes as a traced process's ring, read by the console's
 * own path (the copy for `save`, the decoder, the model and the console's
 * observer: HELLO, held allocations pausing at a breakpoint and queueing, marks, notes),
 * in pieces with breakpoint commands between them, then continue, delete and the
 * stream's end. Nothing may crash, leak or grow without bound. */
#include "../../src/console/console.h"

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes p into the ring as the shim would (committed in pieces), the console reading it
 * whenever it is full; stops when the console dropped the stream. */
static void send_all(struct console *c, struct culeak_ring *r, const uint8_t *p, size_t n)
{
    while (n > 0 && c->readers[0]->ring) {
        size_t k = n < 1024 ? n : 1024;
        uint8_t *w = culeak_ring_reserve(r, k, 0);
        if (!w) {
            console_read_ring(c, 0, 0);
            continue;
        }
        memcpy(w, p, k);
        culeak_ring_commit(r, k);
        p += k;
        n -= k;
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
    c.job.master = c.job.holder.ctl = -1;
    c.rings.copy_limit = 4096; /* the copy stops part-way on larger inputs */
    console_observe(&c);
    struct culeak_ring ring;
    struct ring_reader *k = calloc(1, sizeof *k);
    c.readers = malloc(sizeof *c.readers);
    if (!k || !c.readers || culeak_ring_create(8192, NULL, &ring) != 0) {
        free(k);
        free(c.readers);
        ui_free(&c.u);
        return 0;
    }
    k->ring = &ring;
    k->proc = -1;
    k->ms = model_stream_open(c.u.m);
    k->tee_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    k->rings = &c.rings;
    k->owner = &c;
    c.readers[0] = k;
    c.nreaders = c.capreaders = 1;
    if (k->ms) {
        size_t cut = size ? (size_t)data[size - 1] * size / 256 : 0;
        send_all(&c, &ring, data, cut);
        console_read_ring(&c, 0, 0);
        console_exec(&c, "break 1");
        console_exec(&c, "break 2 count > 1");
        send_all(&c, &ring, data + cut, size - cut);
        ring.h->ended = 1; /* the process ended: the stream ends once read */
        for (int turns = 0; turns < 16 && k->ring; turns++)
            console_read_ring(&c, 0, 1);
        console_exec(&c, "info breakpoints");
        console_exec(&c, "continue");
        console_exec(&c, "delete 1");
        console_exec(&c, "continue");
        console_exec(&c, "snapshot");
    }
    ring_reader_close(k);
    culeak_ring_unmap(&ring);
    free(c.readers);
    free(c.by_proc);
    free(c.pending);
    ui_free(&c.u);
    return 0;
}
