/* A rolled recording's later part, told by its first records (recording_part.h). */
#include "recording_part.h"
#include "decode.h"
#include "wire.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void copy_str(char *out, size_t cap, struct culeak_str s)
{
    size_t n = s.n < cap - 1 ? s.n : cap - 1;
    if (n)
        memcpy(out, s.p, n);
    out[n] = 0;
}

static int on_hello(void *ctx, const struct culeak_hello *hello)
{
    struct culeak_part_head *h = ctx;
    h->pid = hello->pid;
    h->realtime_ns = hello->realtime_ns;
    h->monotonic_ns = hello->monotonic_ns;
    copy_str(h->host, sizeof h->host, hello->host);
    return 0;
}

static int on_roll(void *ctx, const struct culeak_roll *r)
{
    struct culeak_part_head *h = ctx;
    if (r->which != CULEAK_ROLL_PREVIOUS)
        return 0;
    h->part = r->part;
    h->offset = r->offset;
    copy_str(h->previous, sizeof h->previous, r->name);
    return 0;
}

/* The first n bytes of path into a buffer of its own (NULL when unreadable). */
static uint8_t *head_bytes(int fd, size_t n, size_t *got)
{
    uint8_t *b = malloc(n);
    ssize_t k = b ? pread(fd, b, n, 0) : -1;
    *got = k > 0 ? (size_t)k : 0;
    return b;
}

int culeak_part_head(const char *path, struct culeak_part_head *h)
{
    memset(h, 0, sizeof *h);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t want = 64u << 10, n;
    uint8_t *b = head_bytes(fd, want, &n);
    uint8_t type;
    const uint8_t *payload;
    size_t plen;
    long hello = b && n > CULEAK_MAGIC_LEN && !memcmp(b, CULEAK_MAGIC, CULEAK_MAGIC_LEN)
                     ? culeak_next_record(b + CULEAK_MAGIC_LEN, n - CULEAK_MAGIC_LEN, &type, &payload, &plen)
                     : -1;
    if (hello == 0 && n == want) { /* a HELLO longer than the first read (a long environment) */
        free(b);
        b = head_bytes(fd, want + CULEAK_MAX_RECORD, &n);
        hello = b ? culeak_next_record(b + CULEAK_MAGIC_LEN, n - CULEAK_MAGIC_LEN, &type, &payload, &plen) : -1;
    }
    close(fd);
    long roll = 0;
    if (hello > 0 && type == CULEAK_REC_HELLO) {
        size_t at = CULEAK_MAGIC_LEN + (size_t)hello;
        roll = culeak_next_record(b + at, n - at, &type, &payload, &plen);
        if (roll > 0 && type == CULEAK_REC_ROLL) {
            struct culeak_sink sink = {.ctx = h, .hello = on_hello, .roll = on_roll};
            struct culeak_decoder d;
            culeak_decoder_init(&d, &sink, 1);
            h->header_len = at + (size_t)roll;
            if (culeak_decoder_feed(&d, b, h->header_len) != 0 || !h->part)
                roll = 0;
            culeak_decoder_free(&d);
        }
    }
    free(b);
    return roll > 0 && type == CULEAK_REC_ROLL && h->part;
}
