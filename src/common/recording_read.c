/* The one loop that reads a recording file (recording_read.h). */
#include "recording_read.h"
#include "torch_snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* 1 MiB: a recording of 100M events is about 1.4 GB, read in 1,400 system calls rather
 * than 22,000 at 64 KiB; on the heap, not the stack or thread-local storage. */
#define CHUNK (1u << 20)

/* A PyTorch memory snapshot (its first bytes a pickle's, chunk[0..n)): the whole file
 * read, then handed on as the stream it amounts to (torch_snapshot.h). */
static int read_snapshot(int fd, const char *path, uint8_t *chunk, size_t n, culeak_bytes_fn fn, void *ctx, char *err,
                         size_t errlen)
{
    size_t cap = n > CHUNK ? n : CHUNK, len = n;
    uint8_t *all = malloc(cap);
    if (!all) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    memcpy(all, chunk, n);
    for (;;) {
        if (len == cap) {
            uint8_t *more = cap < SIZE_MAX / 2 ? realloc(all, cap * 2) : NULL;
            if (!more) {
                free(all);
                snprintf(err, errlen, "%s: out of memory", path);
                return -1;
            }
            all = more;
            cap *= 2;
        }
        ssize_t r = read(fd, all + len, cap - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(err, errlen, "%s: read error: %s", path, strerror(errno));
            free(all);
            return -1;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    int rc = culeak_torch_snapshot_stream(all, len, path, fn, ctx, err, errlen);
    free(all);
    return rc;
}

int culeak_read_recording(const char *path, culeak_bytes_fn fn, void *ctx, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    /* a small file gets a buffer its size: a job of 10,000 processes' recordings of a few
     * kilobytes each took a fresh 1 MiB mapping (a system call and its page faults) each */
    struct stat st;
    size_t size = fstat(fd, &st) == 0 && st.st_size >= 0 && (uint64_t)st.st_size < CHUNK
                      ? (size_t)st.st_size + 1 < 4096 ? 4096 : (size_t)st.st_size + 1
                      : CHUNK;
    uint8_t *chunk = malloc(size);
    if (!chunk) {
        snprintf(err, errlen, "%s: out of memory", path);
        close(fd);
        return -1;
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    int rc = 0, first = 1;
    for (;;) {
        ssize_t n = read(fd, chunk, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errlen, "%s: read error: %s", path, strerror(errno));
            rc = -1;
            break;
        }
        if (n == 0)
            break;
        if (first && culeak_is_pickle(chunk, (size_t)n)) {
            rc = read_snapshot(fd, path, chunk, (size_t)n, fn, ctx, err, errlen);
            break;
        }
        first = 0;
        if (fn(ctx, chunk, (size_t)n) != 0) {
            rc = 1;
            break;
        }
    }
    free(chunk);
    close(fd);
    return rc;
}
