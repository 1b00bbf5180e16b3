/* Ends without destructors: the stream's buffer (up to FLUSH_MS of events) would be lost
 * with the process. Each such end writes it out first:
 *   _exit, _Exit   exported here (os._exit and a forked child's _exit come through them);
 *                  libc's own exit() runs the shim's destructor instead (exit_paths.c:
 *                  several threads in exit() at once, daemon()'s parent, quick_exit)
 *   exec*          exported here: the buffer is written, then the real call runs (a
 *                  failed exec leaves the EXIT record in place; the process traces on),
 *                  with the shim kept in the program's environment (exec_env.c)
 *   fatal signals  a handler, installed only where the program left the default action,
 *                  writes the buffer, restores the default and raises the signal again, so
 *                  the program dies of it as it would have (status, core dump); the
 *                  program reads the default back (signal_view.c)
 * Each writes an EXIT record saying how the process ended, so a recording without one was
 * cut short (SIGKILL, a full disk). Locks are taken with a deadline: the end may interrupt
 * a thread inside the shim. A vfork child shares its parent's stream: it writes nothing. */
#include "shim.h"
#include "common/wire.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ABRUPT_FLUSH_MS 200

static pid_t owner; /* the process whose stream this is: not a vfork child sharing it */

/* Writes the buffer out, with an EXIT record of reason (how the recording ends). */
static void end_now(unsigned reason)
{
    int s = __atomic_load_n(&culeak_state, __ATOMIC_ACQUIRE);
    if (s == CULEAK_ACTIVE && (pid_t)syscall(SYS_getpid) == owner)
        culeak_stream_end_abrupt(reason, ABRUPT_FLUSH_MS);
}

void culeak_abrupt_end(unsigned reason) { end_now(reason); }

/* ---- fatal signals ---- */

static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTRAP, SIGTERM,
                            SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGXCPU, SIGXFSZ};

static void on_fatal(int sig, siginfo_t *info, void *uc)
{
    (void)info;
    (void)uc;
    end_now(CULEAK_EXIT_SIGNAL);
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    culeak_real_sigaction(sig, &dfl, NULL);
    /* pending until the handler returns (sig is blocked in it); then delivered to this
     * thread with the default action: a fault re-executed would raise it again anyway */
    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
}

void culeak_abrupt_end_arm(void)
{
    owner = (pid_t)syscall(SYS_getpid);
    culeak_exit_paths_arm();
    struct sigaction sa = {.sa_sigaction = on_fatal, .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART};
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof fatal / sizeof *fatal; i++)
        culeak_signal_take(fatal[i], &sa); /* where the program left the default action */
}

/* ---- _exit, _Exit ---- */

CULEAK_EXPORT void _exit(int status)
{
    end_now(CULEAK_EXIT_QUICK);
    for (;;)
        syscall(SYS_exit_group, status);
}

CULEAK_EXPORT void _Exit(int status)
{
    end_now(CULEAK_EXIT_QUICK);
    for (;;)
        syscall(SYS_exit_group, status);
}

/* ---- exec ---- */

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

static void *real(const char *name) { return culeak_real_dlsym(RTLD_NEXT, name); }

/* Each exec: a program culeak cannot follow is named, the buffer is written with EXIT,
 * and the program runs with the shim in its environment (exec_env.c). */
#define EXEC_ENV(envp, env)                                                                  \
    struct culeak_env_room room_;                                                            \
    culeak_exec_env_room(envp, &room_);                                                      \
    char *slots_[room_.slots], chars_[room_.chars];                                          \
    char *const *env = culeak_exec_env(envp, &room_, slots_, chars_)

CULEAK_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    culeak_exec_check(path, -1, 0);
    end_now(CULEAK_EXIT_EXEC);
    EXEC_ENV(envp, env);
    execve_fn f = (execve_fn)real("execve");
    return f ? f(path, argv, env) : (int)syscall(SYS_execve, path, argv, env);
}

CULEAK_EXPORT int execv(const char *path, char *const argv[])
{
    culeak_exec_check(path, -1, 0);
    end_now(CULEAK_EXIT_EXEC);
    EXEC_ENV(environ, env);
    execve_fn f = (execve_fn)real("execve");
    return f ? f(path, argv, env) : -1;
}

CULEAK_EXPORT int execvp(const char *file, char *const argv[])
{
    culeak_exec_check(file, -1, 1);
    end_now(CULEAK_EXIT_EXEC);
    EXEC_ENV(environ, env);
    execve_fn f = (execve_fn)real("execvpe");
    return f ? f(file, argv, env) : -1;
}

CULEAK_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    culeak_exec_check(file, -1, 1);
    end_now(CULEAK_EXIT_EXEC);
    EXEC_ENV(envp, env);
    execve_fn f = (execve_fn)real("execvpe");
    return f ? f(file, argv, env) : -1;
}

CULEAK_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    culeak_exec_check(NULL, fd, 0);
    end_now(CULEAK_EXIT_EXEC);
    EXEC_ENV(envp, env);
    fexecve_fn f = (fexecve_fn)real("fexecve");
    return f ? f(fd, argv, env) : -1;
}

CULEAK_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
    if (path[0] == '/' || dirfd == AT_FDCWD)
        culeak_exec_check(path, -1, 0);
    end_now(CULEAK_EXIT_EXEC);
    EXEC_ENV(envp, env);
    execveat_fn f = (execveat_fn)real("execveat");
    return f ? f(dirfd, path, argv, env, flags) : -1;
}

/* execl, execlp, execle: the arguments gathered into an array for the v forms. */
#define GATHER_ARGS(first, ap, argv, extra)                                                  \
    size_t n_ = 1;                                                                           \
    va_start(ap, first);                                                                     \
    while (va_arg(ap, char *))                                                               \
        n_++;                                                                                \
    va_end(ap);                                                                              \
    char *argv[n_ + 1];                                                                      \
    va_start(ap, first);                                                                     \
    argv[0] = (char *)first;                                                                 \
    for (size_t i_ = 1; i_ <= n_; i_++)                                                      \
        argv[i_] = va_arg(ap, char *);                                                       \
    extra;                                                                                   \
    va_end(ap)

CULEAK_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    GATHER_ARGS(arg, ap, argv, (void)0);
    return execv(path, argv);
}

CULEAK_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    GATHER_ARGS(arg, ap, argv, (void)0);
    return execvp(file, argv);
}

CULEAK_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    char **envp;
    GATHER_ARGS(arg, ap, argv, envp = va_arg(ap, char **));
    return execve(path, argv, envp);
}
