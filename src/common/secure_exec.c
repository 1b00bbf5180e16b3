/* Programs the dynamic loader runs with AT_SECURE: secure_exec.h. */
#include "secure_exec.h"

#include <stdio.h>
#include <sys/prctl.h>
#include <sys/statvfs.h>
#include <unistd.h>

int culeak_exec_is_secure(const struct stat *st, int fd, const char *path, char *why, size_t len)
{
    int uid = (st->st_mode & S_ISUID) && st->st_uid != getuid();
    /* set-group-ID without group execute is mandatory locking, not an id change */
    int gid = (st->st_mode & S_ISGID) && (st->st_mode & S_IXGRP) && st->st_gid != getgid();
    if (!uid && !gid)
        return 0;
    struct statvfs vfs;
    int nosuid = fd >= 0 ? fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & ST_NOSUID)
                         : statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_NOSUID);
    if (nosuid || prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1)
        return 0; /* the ids do not change */
    snprintf(why, len, "%s program: the loader ignores LD_PRELOAD for it", uid ? "a set-user-ID" : "a set-group-ID");
    return 1;
}
