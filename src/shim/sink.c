/* The stream's descriptor, guarded: the program owns every descriptor number and may close
 * ours (a daemon's closefrom) or put its own file on our number (dup2). The shim keeps its
 * descriptor high, out of the way of the numbers programs reuse, remembers the identity of
 * what it opened (device and inode), and checks it before every read or write: it never
 * touches a descriptor that is no longer its own. A recording taken away is reopened by
 * its path (the same file, appended to), so recording goes on. */
#include "shim.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static struct {
    int fd;           /* -1: none, or given up */
    dev_t dev;
    ino_t ino;
    char path[4096];  /* a recording's absolute path, from /proc/self/fd at open */
} K = {-1, 0, 0, ""};

/* fd moved to a number near the top of the descriptor limit (7/8 of it, at most 3584),
 * close-on-exec; fd itself when that cannot be done. */
static int move_high(int fd)
{
    struct rlimit rl;
    rlim_t lim = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
    if (lim == RLIM_INFINITY || lim > 4096)
        lim = 4096;
    int want = (int)(lim * 7 / 8);
    if (want <= fd)
        return fd;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, want);
    if (high < 0)
        return fd;
    close(fd);
    return high;
}

int culeak_sink_adopt(int fd)
{
    struct stat st;
    fd = move_high(fd);
    K.fd = -1;
    if (fstat(fd, &st) != 0)
        return fd;
    K.dev = st.st_dev;
    K.ino = st.st_ino;
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, K.path, sizeof K.path - 1);
    K.path[n > 0 ? n : 0] = 0;
    K.fd = fd;
    return fd;
}

int culeak_sink_fd(void)
{
    struct stat st;
    if (K.fd < 0)
        return -1;
    if (fstat(K.fd, &st) == 0 && st.st_dev == K.dev && st.st_ino == K.ino)
        return K.fd;
    K.fd = -1; /* that number is the program's now: never touched again */
    if (K.path[0] != '/')
        return -1;
    int fd = open(K.path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || st.st_dev != K.dev || st.st_ino != K.ino) { /* replaced meanwhile */
        close(fd);
        return -1;
    }
    K.fd = move_high(fd);
    return K.fd;
}

ssize_t culeak_sink_write(const void *p, size_t n)
{
    int fd = culeak_sink_fd();
    if (fd < 0) {
        errno = EBADF;
        return -1;
    }
    /* A file size limit (RLIMIT_FSIZE) answers a write past it with SIGXFSZ, which kills
     * by default: the recording's write must fail with EFBIG instead, and the program go
     * on. The signal is blocked around the write and a pending one it caused taken back. */
    sigset_t xfsz, old;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, &old);
    ssize_t k = write(fd, p, n);
    int e = errno;
    if (k < 0 && e == EFBIG && !sigismember(&old, SIGXFSZ)) {
        struct timespec zero = {0, 0};
        sigtimedwait(&xfsz, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return k;
}
