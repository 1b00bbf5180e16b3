/* The environment of a program the process execs or spawns: culeak follows the job into
 * it, as sanitizers' runtimes and heaptrack do. A program that sets LD_PRELOAD for its
 * child (LD_PRELOAD=libtcmalloc.so python ...) gets the shim appended to it, and one that
 * passes an environment without it (env -i, execle) gets LD_PRELOAD and the CULEAK_*
 * variables the process was started with back; a CULEAK_* variable the program set
 * itself is left as it is. The new environment is built on the caller's stack: exec may
 * run in a vfork child, where malloc is not safe.
 *
 * A set-user-ID or set-group-ID program that changes the ids runs with AT_SECURE, where
 * the loader ignores LD_PRELOAD: it cannot be followed. That is said on stderr and in a
 * NOTE beginning "untraced: " (culeak-stream(5)), so check reports the job incomplete. */
#include "common/secure_exec.h"
#include "shim.h"
#include "common/wire.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PRELOAD "LD_PRELOAD="

static const char *shim_path; /* the shim as the loader found it; NULL: not following */
static char **kept;           /* CULEAK_* variables at load, "NAME=VALUE" */
static size_t nkept;
static pid_t me;              /* this process: a vfork child shares the memory, not the pid */

static void fork_child(void) { me = (pid_t)syscall(SYS_getpid); }

void culeak_exec_env_init(void)
{
    Dl_info di;
    if (!dladdr((void *)&culeak_exec_env_init, &di) || !di.dli_fname || !*di.dli_fname)
        return;
    size_t n = 0;
    for (char **e = environ; *e; e++)
        n += !strncmp(*e, "CULEAK_", 7);
    kept = calloc(n + 1, sizeof *kept);
    char *path = strdup(di.dli_fname);
    if (!kept || !path) {
        free(kept);
        free(path);
        kept = NULL;
        return;
    }
    for (char **e = environ; *e; e++)
        if (!strncmp(*e, "CULEAK_", 7) && strncmp(*e, "CULEAK_RING_FD=", 15) != 0 && (kept[nkept] = strdup(*e)))
            nkept++;
    shim_path = path;
    me = (pid_t)syscall(SYS_getpid);
    pthread_atfork(NULL, NULL, fork_child);
}

static const char *base_name(const char *p, size_t n, size_t *bn)
{
    size_t i = n;
    while (i > 0 && p[i - 1] != '/')
        i--;
    *bn = n - i;
    return p + i;
}

/* Whether a LD_PRELOAD value (names separated by ':' or ' ') holds the shim. */
static int preloads_shim(const char *v)
{
    size_t sn, tn;
    const char *sb = base_name(shim_path, strlen(shim_path), &sn);
    while (*v) {
        size_t n = strcspn(v, ": ");
        const char *tb = base_name(v, n, &tn);
        if (n && tn == sn && !memcmp(tb, sb, sn))
            return 1;
        v += n + (v[n] != 0);
    }
    return 0;
}

static int has_name(char *const envp[], const char *kv)
{
    size_t n = strcspn(kv, "=") + 1;
    for (size_t i = 0; envp && envp[i]; i++)
        if (!strncmp(envp[i], kv, n))
            return 1;
    return 0;
}

void culeak_exec_env_room(char *const envp[], struct culeak_env_room *r)
{
    r->slots = 1;
    r->chars = 1;
    if (!shim_path)
        return;
    size_t n = 0, shim = strlen(shim_path);
    int preload = 0;
    for (; envp && envp[n]; n++)
        if (!strncmp(envp[n], PRELOAD, sizeof PRELOAD - 1)) {
            preload = 1;
            r->chars += strlen(envp[n]) + 1 + shim + 1;
        }
    if (!preload)
        r->chars += sizeof PRELOAD + shim;
    r->slots += n + 1 + nkept;
}

char *const *culeak_exec_env(char *const envp[], const struct culeak_env_room *r, char **slots, char *chars)
{
    if (!shim_path)
        return envp;
    size_t n = 0, used = 0;
    int changed = 0, preload = 0;
    for (size_t i = 0; envp && envp[i]; i++) {
        char *e = envp[i];
        if (!strncmp(e, PRELOAD, sizeof PRELOAD - 1)) {
            preload = 1;
            if (!preloads_shim(e + sizeof PRELOAD - 1)) { /* the program's first, then the shim */
                int k = snprintf(chars + used, r->chars - used, "%s%s%s", e,
                                 e[sizeof PRELOAD - 1] ? ":" : "", shim_path);
                e = chars + used;
                used += (size_t)k + 1;
                changed = 1;
            }
        }
        slots[n++] = e;
    }
    if (!preload) {
        int k = snprintf(chars + used, r->chars - used, "%s%s", PRELOAD, shim_path);
        slots[n++] = chars + used;
        used += (size_t)k + 1;
        changed = 1;
    }
    for (size_t i = 0; i < nkept; i++)
        if (!has_name(envp, kept[i])) {
            slots[n++] = kept[i];
            changed = 1;
        }
    slots[n] = NULL;
    return changed ? slots : envp;
}

/* A name without '/' as execvp finds it in PATH, into out: 0, or -1. */
static int find_in_path(const char *file, char *out, size_t len)
{
    if (strchr(file, '/'))
        return snprintf(out, len, "%s", file) < (int)len ? 0 : -1;
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        if (snprintf(out, len, "%.*s%s%s", (int)n, n ? path : ".", "/", file) < (int)len &&
            access(out, X_OK) == 0)
            return 0;
        path += n + (path[n] != 0);
    }
    return -1;
}

/* Says that `what` runs untraced: on stderr, and in this process's stream (started for
 * it if need be), unless this is a vfork child, whose memory is its parent's. */
static void say_untraced(const char *what, const char *why)
{
    if (!shim_path)
        return;
    char text[600];
    int k = snprintf(text, sizeof text, "untraced: %s runs untraced (%s)", what, why);
    if (k >= (int)sizeof text)
        k = (int)sizeof text - 1;
    char line[620]; /* one write, no stdio: this may be a vfork child */
    int m = snprintf(line, sizeof line, "culeak: %s\n", text + 10); /* past "untraced: " */
    ssize_t w = write(2, line, m < (int)sizeof line ? (size_t)m : sizeof line - 1);
    (void)w;
    if ((pid_t)syscall(SYS_getpid) != me || !culeak_ensure_started())
        return;
    culeak_stream_note(text, (size_t)k);
}

void culeak_exec_check(const char *file, int fd, int search)
{
    if (!shim_path)
        return;
    char path[PATH_MAX], why[128];
    struct stat st;
    if (fd >= 0) {
        if (fstat(fd, &st) != 0)
            return;
        snprintf(path, sizeof path, "descriptor %d", fd);
    } else if (!file || (search ? find_in_path(file, path, sizeof path) : snprintf(path, sizeof path, "%s", file) < 0) ||
               stat(path, &st) != 0) {
        return;
    }
    if (culeak_exec_is_secure(&st, fd, path, why, sizeof why))
        say_untraced(path, why);
}

/* ---- posix_spawn, posix_spawnp: glibc's exec the child inside libc, past the shim ---- */

typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
                        char *const[], char *const[]);

static int spawn(const char *name, int search, pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    spawn_fn f = (spawn_fn)culeak_real_dlsym(RTLD_NEXT, name);
    if (!f)
        return ENOSYS;
    culeak_exec_check(file, -1, search);
    struct culeak_env_room r;
    culeak_exec_env_room(envp, &r);
    char *slots[r.slots], chars[r.chars];
    return f(pid, file, fa, attr, argv, culeak_exec_env(envp, &r, slots, chars));
}

CULEAK_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                              const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    return spawn("posix_spawn", 0, pid, path, fa, attr, argv, envp);
}

CULEAK_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                               const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    return spawn("posix_spawnp", 1, pid, file, fa, attr, argv, envp);
}
