/* Rolling a recording into parts (roll.h). */
#include "roll.h"
#include "common/outpath.h"
#include "common/wire.h"
#include "common/wire_encode.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int write_all(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n > 0) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0)
                errno = EIO;
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

int culeak_roller_start(struct culeak_roller *r, const struct culeak_roll_opts *opt, const char *path, int shared,
                        long pid, long long now, char *made, size_t cap)
{
    memset(r, 0, sizeof *r);
    r->opt = *opt;
    r->part = 1;
    r->started = now;
    char first[PATH_MAX];
    if (culeak_expand_part(path, 1, now, first, sizeof first) < 0) {
        snprintf(made, cap, "%s", path);
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = culeak_create_recording(first, shared, pid, made, cap);
    if (fd < 0)
        return -1;
    /* a process that found the name taken writes NAME.PID: so do its later parts */
    size_t tl = strlen(path) + 24;
    r->tmpl = malloc(tl);
    r->name = strdup(made);
    if (r->tmpl)
        snprintf(r->tmpl, tl, strcmp(made, first) ? "%s.%ld" : "%s", path, pid);
    if (!r->tmpl || !r->name || write_all(fd, CULEAK_MAGIC, CULEAK_MAGIC_LEN) != 0) {
        int e = r->tmpl && r->name ? errno : ENOMEM;
        close(fd);
        culeak_roller_free(r);
        errno = e;
        return -1;
    }
    return fd;
}

void culeak_roller_wrote(struct culeak_roller *r, const uint8_t *p, size_t n)
{
    if (!r->hello && r->offset == 0 && n) { /* the stream starts at HELLO */
        uint8_t type;
        const uint8_t *payload;
        size_t plen;
        long got = culeak_next_record(p, n, &type, &payload, &plen);
        if (got > 0 && type == CULEAK_REC_HELLO && (r->hello = malloc((size_t)got))) {
            memcpy(r->hello, p, (size_t)got);
            r->hello_len = (size_t)got;
        }
    }
    r->offset += n;
    r->part_bytes += n;
}

int culeak_roller_due(const struct culeak_roller *r, long long now)
{
    if (!r->hello || !r->part_bytes) /* a part holds at least one record of its own */
        return 0;
    return (r->opt.bytes && r->part_bytes >= r->opt.bytes) ||
           (r->opt.seconds && now - r->started >= (long long)r->opt.seconds);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* A ROLL record of which into fd. */
static int write_roll(int fd, unsigned which, unsigned part, uint64_t offset, const char *other)
{
    const char *b = base_name(other);
    size_t len = strlen(b);
    uint8_t rec[CULEAK_REC_HEADROOM + 3 * CULEAK_UVARINT_MAX + 5 + PATH_MAX];
    if (len > PATH_MAX)
        len = PATH_MAX;
    return write_all(fd, rec, culeak_enc_roll(rec, which, part, offset, b, len));
}

int culeak_roller_next(struct culeak_roller *r, int *fd, long long now)
{
    char next[PATH_MAX];
    if (!r->tmpl || culeak_expand_part(r->tmpl, r->part + 1, now, next, sizeof next) < 0) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (culeak_make_parent_dirs(next) != 0)
        return -1;
    int nfd = culeak_create_private(next, 0); /* never over an earlier part */
    if (nfd < 0)
        return -1;
    char *name = strdup(next);
    if (!name || write_all(nfd, CULEAK_MAGIC, CULEAK_MAGIC_LEN) != 0 ||
        write_all(nfd, r->hello, r->hello_len) != 0 ||
        write_roll(nfd, CULEAK_ROLL_PREVIOUS, r->part + 1, r->offset, r->name) != 0 ||
        write_roll(*fd, CULEAK_ROLL_NEXT, r->part, r->offset, next) != 0) {
        int e = name ? errno : ENOMEM;
        close(nfd);
        unlink(next);
        free(name);
        errno = e;
        return -1;
    }
    close(*fd);
    *fd = nfd;
    free(r->name);
    r->name = name;
    r->part++;
    r->part_bytes = 0;
    r->started = now;
    return 0;
}

void culeak_roller_free(struct culeak_roller *r)
{
    free(r->tmpl);
    free(r->name);
    free(r->hello);
    memset(r, 0, sizeof *r);
}
