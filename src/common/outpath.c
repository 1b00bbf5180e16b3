/* Output paths (outpath.h). */
#include "outpath.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The launcher's own variable before Slurm's: mpirun inside a Slurm allocation starts its
 * ranks through one srun task per node, whose SLURM_PROCID every rank of the node inherits. */
const char *const culeak_rank_vars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                        "MV2_COMM_WORLD_RANK", "SLURM_PROCID", NULL};

const char *culeak_env_rank(void)
{
    for (size_t i = 0; culeak_rank_vars[i]; i++) {
        const char *v = getenv(culeak_rank_vars[i]);
        if (v && *v)
            return v;
    }
    const char *local = getenv("LOCAL_RANK"); /* still one name per process of a node */
    return local && *local ? local : "0";
}

int culeak_expand_path(const char *tmpl, long pid, const char *host, const char *rank, char *out, size_t cap)
{
    char here[256] = "";
    if (!host) {
        gethostname(here, sizeof here - 1);
        host = here;
    }
    if (cap == 0)
        return -1;
    size_t n = 0;
    int has_pid = 0, full = 0;
    for (const char *t = tmpl; *t && !full; t++) {
        char num[32];
        const char *add = NULL;
        if (t[0] == '%') {
            switch (t[1]) {
            case 'p': snprintf(num, sizeof num, "%ld", pid); add = num; has_pid = 1; break;
            case 'h': add = host; break;
            case 'r': add = rank ? rank : culeak_env_rank(); break;
            case '%': add = "%"; break;
            }
        }
        size_t len = add ? strlen(add) : 1;
        if (n + len >= cap) {
            len = cap - 1 - n;
            full = 1;
        }
        memcpy(out + n, add ? add : t, len);
        n += len;
        t += add != NULL;
    }
    out[n] = 0;
    return full ? -1 : has_pid;
}

/* The directory part of path into dir ("/" for a file in the root): its length, 0 for a
 * path with no directory, or -1 with ENAMETOOLONG. */
static long dir_of(const char *path, char *dir, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return 0;
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    if (n >= size) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(dir, path, n);
    dir[n] = 0;
    return (long)n;
}

int culeak_output_dir_writable(const char *path)
{
    char dir[4096];
    long n = dir_of(path, dir, sizeof dir);
    if (n == 0) /* the working directory */
        return faccessat(AT_FDCWD, ".", W_OK | X_OK, AT_EACCESS);
    if (n < 0)
        return -1;
    struct stat st;
    if (stat(dir, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS);
}

/* A link is followed only where no one else could have put it: it is this user's, or its
 * directory is writable by its owner alone, who is this user or root (as the kernel's
 * protected_symlinks, which guards only sticky directories). */
static int link_trusted(int dirfd, const struct stat *link)
{
    struct stat d;
    return link->st_uid == geteuid() || (fstat(dirfd, &d) == 0 && !(d.st_mode & (S_IWGRP | S_IWOTH)) &&
                                         (d.st_uid == geteuid() || d.st_uid == 0));
}

/* One step of the walk: name under dirfd, made when missing (with make); its descriptor,
 * or -1. */
static int enter_dir(int dirfd, const char *name, int make)
{
    if (make && mkdirat(dirfd, name, 0700) != 0 && errno != EEXIST)
        return -1;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 || (errno != ELOOP && errno != ENOTDIR))
        return fd;
    int e = errno;
    struct stat l;
    if (fstatat(dirfd, name, &l, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(l.st_mode)) {
        errno = e;
        return -1;
    }
    if (!link_trusted(dirfd, &l)) {
        errno = ELOOP;
        return -1;
    }
    return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* Walks path's directories, each entered as enter_dir does: 0, or -1 with errno. */
static int walk_dirs(const char *path, int make)
{
    char dir[4096];
    long n = dir_of(path, dir, sizeof dir);
    if (n < 0)
        return -1;
    if (n == 0 || !strcmp(dir, "/"))
        return 0; /* the working directory, or / */
    int fd = open(path[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (char *name = dir, *end; fd >= 0 && *name; name = end) {
        end = name + strcspn(name, "/");
        if (*end)
            *end++ = 0;
        if (!*name || !strcmp(name, "."))
            continue;
        int next = enter_dir(fd, name, make), e = errno;
        close(fd);
        errno = e;
        fd = next;
    }
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

int culeak_make_parent_dirs(const char *path)
{
    struct stat st;
    char dir[4096];
    if (dir_of(path, dir, sizeof dir) > 0 && stat(dir, &st) != 0 && errno != ENOENT)
        return 0; /* culeak_output_dir_writable and open say what is wrong */
    return walk_dirs(path, 1); /* there already too: a planted link on the way is refused */
}

int culeak_parent_dirs_trusted(const char *path)
{
    if (walk_dirs(path, 0) == 0 || errno != ELOOP)
        return 0; /* a missing directory: the open says so */
    return -1;
}

/* A recording holds the program's arguments and environment: mode 0600, never through a
 * symbolic link (one planted at the path would have its target overwritten). Created
 * fresh; with replace, an existing regular file of this user is truncated instead. A FIFO
 * there is opened without waiting for a reader (none may ever come) and refused; so is a
 * file with other names (a hard link to one of this user's files). */
int culeak_create_private(const char *path, int replace)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST || !replace)
        return fd;
    fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 && errno == ENXIO)
        errno = EPERM; /* a FIFO nobody reads */
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1 ||
                    fcntl(fd, F_SETFL, 0) != 0)) {
        close(fd);
        errno = EPERM;
        return -1;
    }
    if (fd >= 0 && ftruncate(fd, 0) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int culeak_create_recording(const char *path, int shared, long pid, char *made, size_t cap)
{
    snprintf(made, cap, "%s", path);
    if (culeak_make_parent_dirs(path) != 0)
        return -1;
    if (!shared)
        return culeak_create_private(path, 1);
    int fd = culeak_create_private(path, 0);
    if (fd >= 0 || errno != EEXIST)
        return fd;
    snprintf(made, cap, "%s.%ld", path, pid);
    return culeak_create_private(made, 1);
}

int culeak_expand_part(const char *tmpl, unsigned part, long long t, char *out, size_t cap)
{
    size_t n = 0;
    int named = 0;
    for (const char *s = tmpl; *s; s++) {
        char piece[32] = {s[0], 0};
        if (s[0] == '%' && (s[1] == 't' || s[1] == 'n')) {
            time_t tt = (time_t)t;
            struct tm tm;
            if (s[1] == 'n')
                snprintf(piece, sizeof piece, "%04u", part);
            else if (!gmtime_r(&tt, &tm) || !strftime(piece, sizeof piece, "%Y%m%dT%H%M%SZ", &tm))
                snprintf(piece, sizeof piece, "%lld", t);
            named = 1;
            s++;
        } else if (s[0] == '%' && s[1] == '%') { /* kept for culeak_expand_path */
            piece[1] = '%';
            piece[2] = 0;
            s++;
        }
        size_t k = strlen(piece);
        if (n + k >= cap) {
            if (cap)
                out[n] = 0;
            return -1;
        }
        memcpy(out + n, piece, k);
        n += k;
    }
    if (cap)
        out[n] = 0;
    else
        return -1;
    return named;
}
