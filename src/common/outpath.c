/* Output paths (outpath.h). */
#include "outpath.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *culeak_env_rank(void)
{
    static const char *const vars[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "LOCAL_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return v;
    }
    return "0";
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

int culeak_output_dir_writable(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash) /* the working directory */
        return faccessat(AT_FDCWD, ".", W_OK | X_OK, AT_EACCESS);
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    if (n >= sizeof dir) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(dir, path, n);
    dir[n] = 0;
    struct stat st;
    if (stat(dir, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS);
}

/* A recording holds the program's arguments and environment: mode 0600, never through a
 * symbolic link (one planted at the path would have its target overwritten). Created
 * fresh; with replace, an existing regular file of this user is truncated instead. */
int culeak_create_private(const char *path, int replace)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST || !replace)
        return fd;
    fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())) {
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
    if (!shared)
        return culeak_create_private(path, 1);
    int fd = culeak_create_private(path, 0);
    if (fd >= 0 || errno != EEXIST)
        return fd;
    snprintf(made, cap, "%s.%ld", path, pid);
    return culeak_create_private(made, 1);
}
