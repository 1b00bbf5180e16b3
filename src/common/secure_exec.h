/* Whether running a program file makes the process AT_SECURE, where the dynamic loader
 * ignores LD_PRELOAD (and so culeak's shim): a set-user-ID or set-group-ID file whose
 * owner is not the caller's id, on a file system that honours those bits, with new
 * privileges allowed. */
#ifndef CULEAK_SECURE_EXEC_H
#define CULEAK_SECURE_EXEC_H

#include <stddef.h>
#include <sys/stat.h>

/* st: the file's; fd (>= 0) or path names it for its file system. 1 with the reason in
 * why[len], else 0. */
int culeak_exec_is_secure(const struct stat *st, int fd, const char *path, char *why, size_t len);

#endif
