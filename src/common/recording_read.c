/* The one loop that reads a recording file (recording_read.h). */
#include "recording_read.h"

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
    int rc = 0;
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
        if (fn(ctx, chunk, (size_t)n) != 0) {
            rc = 1;
            break;
        }
    }
    free(chunk);
    close(fd);
    return rc;
}
