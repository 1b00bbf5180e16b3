/* The files culeak writes for the user (output_file.h). */
#include "output_file.h"
#include "outpath.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* dir/.NAME.XXXXXX beside path: the directory keeps the rename within one file system */
static int temp_name(struct culeak_output *o, unsigned attempt)
{
    const char *slash = strrchr(o->path, '/');
    int dirlen = slash ? (int)(slash - o->path) + 1 : 0;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    uint64_t r = (uint64_t)t.tv_nsec * 2654435761u ^ (uint64_t)getpid() << 20 ^ attempt;
    int n = snprintf(o->tmp, sizeof o->tmp, "%.*s.%s.%06llx", dirlen, o->path, slash ? slash + 1 : o->path,
                     (unsigned long long)(r & 0xffffff));
    return n > 0 && (size_t)n < sizeof o->tmp ? 0 : -1;
}

/* Whether no one but this user (or root) can have put a link in path's directory: only
 * such a link to a device is followed (/dev/stdout), never one in /tmp. */
static int dir_trusted(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    size_t n = !slash ? 0 : slash == path ? 1 : (size_t)(slash - path);
    if (n >= sizeof dir)
        return 0;
    memcpy(dir, n ? path : ".", n ? n : 1);
    dir[n ? n : 1] = 0;
    struct stat st;
    return stat(dir, &st) == 0 && !(st.st_mode & (S_IWGRP | S_IWOTH)) && (st.st_uid == geteuid() || st.st_uid == 0);
}

int culeak_output_open(struct culeak_output *o, const char *path)
{
    memset(o, 0, sizeof *o);
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof o->path || path[len - 1] == '/') {
        errno = len ? (path[len - 1] == '/' ? EISDIR : ENAMETOOLONG) : ENOENT;
        return -1;
    }
    memcpy(o->path, path, len + 1);
    if (culeak_parent_dirs_trusted(path) != 0)
        return -1; /* a link someone else planted on the way: ELOOP */
    struct stat st, lst;
    /* a terminal or pipe (or a trusted link to one, as /dev/stdout is): nothing on disk to
     * overwrite */
    if (lstat(path, &lst) == 0 && (!S_ISLNK(lst.st_mode) || dir_trusted(path)) && stat(path, &st) == 0 &&
        (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
        o->in_place = 1;
        o->f = fopen(path, "we");
        return o->f ? 0 : -1;
    }
    if (lstat(path, &lst) == 0 && S_ISDIR(lst.st_mode)) {
        errno = EISDIR;
        return -1;
    }
    int fd = -1;
    for (unsigned i = 0; fd < 0 && i < 100; i++) {
        if (temp_name(o, i) != 0) {
            errno = ENAMETOOLONG;
            return -1;
        }
        fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            return -1;
    }
    if (fd < 0)
        return -1;
    if (!(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        errno = e;
        return -1;
    }
    return 0;
}

int culeak_output_close(struct culeak_output *o, int failed)
{
    if (!o->f)
        return 0;
    errno = 0;
    int bad = failed || ferror(o->f) || fflush(o->f) != 0;
    int err = bad ? (errno ? errno : EIO) : 0;
    if (fclose(o->f) != 0 && !bad) {
        bad = 1;
        err = errno ? errno : EIO;
    }
    o->f = NULL;
    if (o->in_place) {
        errno = err;
        return bad ? -1 : 0;
    }
    /* the whole file, or nothing: rename replaces a link at path, never follows it */
    if (!bad && rename(o->tmp, o->path) != 0) {
        bad = 1;
        err = errno;
    }
    if (bad)
        unlink(o->tmp);
    errno = err;
    return bad ? -1 : 0;
}
