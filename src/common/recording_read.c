/* The one loop that reads a recording file (recording_read.h). */
#include "recording_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* 1 MiB: a recording of 100M events is about 1.4 GB, read in 1,400 system calls rather
 * than 22,000 at 64 KiB; on the heap, not the stack or thread-local storage. */
#define CHUNK (1u << 20)

int culeak_read_recording(const char *path, culeak_bytes_fn fn, void *ctx, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    uint8_t *chunk = malloc(CHUNK);
    if (!chunk) {
        snprintf(err, errlen, "%s: out of memory", path);
        close(fd);
        return -1;
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    int rc = 0;
    for (;;) {
        ssize_t n = read(fd, chunk, CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errlen, "%s: read error: %s", path, strerror(errno));
            rc = -1;
            break;
        }
        if (n == 0)
            break;
        if (fn(ctx, chunk, (size_t)n) != 0) {
            rc = 1;
            break;
        }
    }
    free(chunk);
    close(fd);
    return rc;
}
