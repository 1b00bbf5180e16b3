/* Starting a program under the shim: finding libculeak.so and setting the environment. */
#include "launch.h"
#include "common/secure_exec.h"
#include "collect.h"
#include "common/frameworks.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int exists(const char *p) { return access(p, R_OK) == 0; }

/* The directory of this executable, into dir[len]: 0, or -1 when it cannot be read. */
static int exe_dir(char *dir, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", dir, len - 1);
    if (n <= 0)
        return -1;
    dir[n] = 0;
    char *slash = strrchr(dir, '/');
    if (!slash)
        return -1;
    *slash = 0;
    return 0;
}

const char *culeak_shim_path(void)
{
    static char path[PATH_MAX + 32];
    const char *env = getenv("CULEAK_LIB");
    if (env && *env)
        return exists(env) ? env : NULL;
    char bindir[PATH_MAX];
    if (exe_dir(bindir, sizeof bindir) != 0)
        return NULL;
    snprintf(path, sizeof path, "%s/libculeak.so", bindir);
    if (exists(path))
        return path;
    snprintf(path, sizeof path, "%s/../lib/culeak/libculeak.so", bindir);
    if (exists(path))
        return path;
    return NULL;
}

int culeak_data_file(const char *name, char *path, size_t len)
{
    char bindir[PATH_MAX];
    if (exe_dir(bindir, sizeof bindir) != 0)
        return -1;
    int n = snprintf(path, len, "%s/../share/culeak/%s", bindir, name);
    return n > 0 && (size_t)n < len && exists(path) ? 0 : -1;
}

/* The directory of culeak.py: share/culeak/python (culeak_data_file), else the source
 * tree's python/ next to a build directory. NULL when neither exists. */
static const char *python_dir(void)
{
    static char dir[PATH_MAX + 64];
    char p[PATH_MAX + 64], bindir[PATH_MAX];
    if (culeak_data_file("python/culeak.py", p, sizeof p) != 0) {
        if (exe_dir(bindir, sizeof bindir) != 0)
            return NULL;
        snprintf(p, sizeof p, "%s/../python/culeak.py", bindir);
    }
    if (!exists(p) || !realpath(p, dir))
        return NULL;
    *strrchr(dir, '/') = 0;
    return dir;
}

const char *culeak_default_suppressions_path(void)
{
    static char path[PATH_MAX];
    char p[PATH_MAX + 64];
    if (culeak_data_file("default.supp", p, sizeof p) != 0 || !realpath(p, path))
        return NULL;
    return path;
}

static void prepend_env(const char *name, const char *value)
{
    const char *old = getenv(name);
    size_t len = strlen(value) + (old ? strlen(old) : 0) + 2;
    char *v = malloc(len);
    if (!v)
        return;
    snprintf(v, len, "%s%s%s", value, old && *old ? ":" : "", old ? old : "");
    setenv(name, v, 1);
    free(v);
}

void culeak_no_pool_env(void)
{
    for (unsigned c = 1; c < CULEAK_FRAMEWORK_COUNT; c++)
        for (const char *const *env = culeak_framework(c)->no_pool_env; *env; env++) {
            char name[128];
            size_t n = strcspn(*env, "=");
            snprintf(name, sizeof name, "%.*s", (int)n, *env);
            setenv(name, (*env)[n] ? *env + n + 1 : "", 1);
        }
}

#ifdef __SANITIZE_ADDRESS__
static int find_asan(struct dl_phdr_info *info, size_t size, void *out)
{
    (void)size;
    const char *slash = strrchr(info->dlpi_name, '/');
    if (!slash || strncmp(slash + 1, "libasan.so", 10) != 0)
        return 0;
    snprintf(out, PATH_MAX, "%s", info->dlpi_name);
    return 1;
}
#endif

/* A sanitizer build of culeak comes with a sanitizer build of the shim, whose runtime must
 * be the first library of every traced program: the one culeak itself runs on. NULL in a
 * plain build. */
static const char *sanitizer_runtime(void)
{
#ifdef __SANITIZE_ADDRESS__
    static char path[PATH_MAX];
    if (!path[0])
        dl_iterate_phdr(find_asan, path);
    return path[0] ? path : NULL;
#else
    return NULL;
#endif
}

int culeak_setenv_for_child(const char *output_file, int depth)
{
    const char *shim = culeak_shim_path();
    if (!shim) {
        fprintf(stderr, "culeak: cannot find libculeak.so (next to the culeak executable, in "
                        "../lib/culeak, or named by CULEAK_LIB)\n");
        return -1;
    }
    char abs[PATH_MAX];
    if (!realpath(shim, abs))
        snprintf(abs, sizeof abs, "%s", shim);
    const char *old = getenv("LD_PRELOAD");
    const char *runtime = sanitizer_runtime();
    if (runtime && (!old || !strstr(old, "libasan"))) {
        size_t n = strlen(runtime) + (old ? strlen(old) : 0) + 2;
        char *with_runtime = malloc(n);
        if (!with_runtime)
            return -1;
        snprintf(with_runtime, n, "%s%s%s", runtime, old && *old ? ":" : "", old ? old : "");
        setenv("LD_PRELOAD", with_runtime, 1);
        free(with_runtime);
        old = getenv("LD_PRELOAD");
    }
    size_t len = strlen(abs) + (old ? strlen(old) : 0) + 2;
    char *preload = malloc(len);
    if (!preload)
        return -1;
    /* A sanitizer runtime preloaded first must stay first (a sanitizer build of the shim
     * in an uninstrumented program): the shim goes right after it. */
    size_t first = old ? strcspn(old, ": ") : 0;
    const char *slash = old ? memrchr(old, '/', first) : NULL;
    const char *name = slash ? slash + 1 : old;
    if (first && (!strncmp(name, "libasan", 7) || !strncmp(name, "libubsan", 8)))
        snprintf(preload, len, "%.*s:%s%s", (int)first, old, abs, old + first);
    else
        snprintf(preload, len, "%s%s%s", abs, old && *old ? ":" : "", old ? old : "");
    setenv("LD_PRELOAD", preload, 1);
    free(preload);
    /* NVTX ranges and marks (torch.cuda.nvtx, any library's) become culeak marks; a
     * profiler's injection library already named there is left alone. */
    const char *nvtx = getenv("NVTX_INJECTION64_PATH");
    if (!nvtx || !*nvtx)
        setenv("NVTX_INJECTION64_PATH", abs, 1);
    const char *py = python_dir();
    if (py) /* `import culeak` works in the job */
        prepend_env("PYTHONPATH", py);
    if (output_file)
        setenv("CULEAK_OUTPUT", output_file, 1);
    else
        unsetenv("CULEAK_OUTPUT");
    /* only the console's own launch (pty.c) answers a held allocation: record and check,
     * run from inside a console's job too, must not hold theirs */
    unsetenv("CULEAK_HOLD_AT_START");
    if (depth > 0) {
        char d[32];
        snprintf(d, sizeof d, "%d", depth);
        setenv("CULEAK_DEPTH", d, 1);
    }
    return 0;
}

/* 0 when path is an executable file, else the errno execve would give. */
static int runnable(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return errno;
    if (S_ISDIR(st.st_mode))
        return EISDIR;
    if (!S_ISREG(st.st_mode) || access(path, X_OK) != 0)
        return EACCES;
    return 0;
}

/* The path execvp would run for prog, into out: 0, or -1 when there is none. */
static int find_program(const char *prog, char *out, size_t len)
{
    if (strchr(prog, '/')) {
        snprintf(out, len, "%s", prog);
        return runnable(out) ? -1 : 0;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin";
    for (const char *d = path;; d++) {
        size_t n = strcspn(d, ":");
        snprintf(out, len, "%.*s/%s", (int)n, n ? d : ".", prog);
        if (!runnable(out))
            return 0;
        d += n;
        if (!*d)
            return -1;
    }
}

int culeak_program_is_static(const char *prog)
{
    char path[PATH_MAX];
    if (find_program(prog, path, sizeof path) != 0)
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return 0;
    Elf64_Ehdr eh;
    int is_static = 0;
    if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
        eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum < 4096) {
        is_static = 1; /* until a PT_INTERP names the dynamic loader */
        for (unsigned i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph ||
                ph.p_type == PT_INTERP) {
                is_static = 0;
                break;
            }
        }
    }
    close(fd);
    return is_static;
}

int culeak_program_is_secure(const char *prog, char *why, size_t len)
{
    char path[PATH_MAX];
    struct stat st;
    return find_program(prog, path, sizeof path) == 0 && stat(path, &st) == 0 &&
           culeak_exec_is_secure(&st, -1, path, why, len);
}

int culeak_check_program(const char *prog)
{
    int err = ENOENT;
    if (strchr(prog, '/')) {
        err = runnable(prog);
    } else if (*prog) {
        const char *path = getenv("PATH");
        if (!path)
            path = "/bin:/usr/bin"; /* execvp's default */
        int denied = 0;
        for (const char *d = path;; d++) {
            size_t n = strcspn(d, ":");
            char full[PATH_MAX];
            snprintf(full, sizeof full, "%.*s%s%s", (int)n, n ? d : ".", "/", prog);
            int e = runnable(full);
            if (!e) {
                err = 0;
                break;
            }
            denied |= e == EACCES || e == EISDIR;
            d += n;
            if (!*d)
                break;
        }
        if (err && denied) /* execvp reports EACCES when a match could not be run */
            err = EACCES;
    }
    if (!err) {
        char why[128];
        if (culeak_program_is_static(prog))
            fprintf(stderr, "culeak: warning: %s is statically linked: a preloaded library cannot reach it, "
                            "so nothing of it is traced (link it dynamically; the CUDA runtime may stay "
                            "static)\n",
                    prog);
        else if (culeak_program_is_secure(prog, why, sizeof why))
            fprintf(stderr, "culeak: warning: %s is %s, so nothing of it is traced\n", prog, why);
        return 0;
    }
    fprintf(stderr, "culeak: cannot run %s: %s\n", prog, strerror(err));
    return err == ENOENT || err == ENOTDIR || err == ENAMETOOLONG || err == ELOOP ? 127 : 126;
}

int culeak_absolute_path(const char *path, char *abs, size_t len)
{
    char cwd[PATH_MAX];
    if (path[0] == '/')
        snprintf(abs, len, "%s", path);
    else if (getcwd(cwd, sizeof cwd))
        snprintf(abs, len, "%s/%s", cwd, path);
    else
        return -1;
    return 0;
}

int culeak_exit_code(int wstatus)
{
    if (WIFEXITED(wstatus))
        return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus))
        return 128 + WTERMSIG(wstatus);
    return 1;
}

/* How often the rings are read while the job runs: soon again while events come (a
 * ring holds a few milliseconds of them), less often while none do. */
#define POLL_BUSY_MS 1
#define POLL_IDLE_MS 10

/* The environment the job starts with: this one as culeak_setenv_for_child and the
 * collector change it, which are undone here after (a copy of the array is taken). NULL
 * when it cannot be made (said on stderr). */
static char **job_environment(const char *output_file, int depth, struct culeak_collector *c)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **saved = malloc((n + 1) * sizeof *saved);
    if (!saved) {
        fprintf(stderr, "culeak: out of memory\n");
        return NULL;
    }
    memcpy(saved, environ, (n + 1) * sizeof *saved);
    char **job = NULL;
    if (culeak_setenv_for_child(output_file, depth) == 0 && (!c || culeak_collector_child_env(c) == 0)) {
        size_t m = 0;
        while (environ[m])
            m++;
        job = malloc((m + 1) * sizeof *job);
        if (job)
            memcpy(job, environ, (m + 1) * sizeof *job);
        else
            fprintf(stderr, "culeak: out of memory\n");
    }
    environ = saved; /* setenv keeps the strings it replaced: both arrays stay valid */
    return job;
}

/* culeak's own disposition of sig is SIG_IGN, as the kernel holds it (glibc's sigaction
 * refuses its own signals). */
static int ignored_here(int sig)
{
    struct {
        void *handler;
        unsigned long flags;
        void *restorer;
        unsigned long mask;
    } k;
    return syscall(SYS_rt_sigaction, sig, NULL, &k, sizeof k.mask) == 0 && k.handler == (void *)SIG_IGN;
}

/* glibc's posix_spawn leaves its own signals (32 and 33: thread cancellation and set*id)
 * ignored in the child unless the spawn's default set names them, and an ignored signal
 * stays ignored across exec: the job would start with both ignored where culeak was not.
 * sigaddset refuses those numbers, so their bits are set in the set directly (glibc's
 * sigset_t: one bit per signal, signal N at bit N-1). Every signal culeak was given
 * ignored stays so (nohup's SIGHUP, or 32 and 33 from a parent's posix_spawn). */
static void job_signal_defaults(posix_spawnattr_t *attr)
{
#ifdef __GLIBC__
    sigset_t dfl;
    sigemptyset(&dfl);
    unsigned long *words = (unsigned long *)(void *)&dfl;
    for (int sig = 32; sig < SIGRTMIN; sig++)
        if (!ignored_here(sig))
            words[(sig - 1) / (8 * sizeof *words)] |= 1ul << ((sig - 1) % (8 * sizeof *words));
    posix_spawnattr_setsigdefault(attr, &dfl);
    posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGDEF);
#else
    (void)attr;
#endif
}

int culeak_run_traced(char **argv, const char *output_file, int depth)
{
    struct culeak_run run;
    return culeak_run_traced_job(argv, output_file, depth, &run);
}

int culeak_run_traced_job(char **argv, const char *output_file, int depth, struct culeak_run *run)
{
    return culeak_run_traced_tap(argv, output_file, depth, run, NULL, NULL);
}

static uint64_t aggregate_ns;
void culeak_launch_aggregate(uint64_t interval_ns) { aggregate_ns = interval_ns; }
uint64_t culeak_launch_aggregated(void) { return aggregate_ns; }

int culeak_run_traced_tap(char **argv, const char *output_file, int depth, struct culeak_run *run,
                          const struct culeak_collect_tap *tap, const struct culeak_roll_opts *roll)
{
    run->pid = -1;
    run->unrecorded = 0;
    /* the job's processes write rings this process reads (culeak-stream(5), The ring);
     * without one they write their recordings themselves */
    struct culeak_collector *c = culeak_collector_new();
    if (c && culeak_collector_expect(c, output_file) != 0) {
        culeak_collector_free(c);
        c = NULL; /* out of memory: the job's processes write their own recordings */
    }
    if (c && tap)
        culeak_collector_tap(c, tap);
    if (c && roll)
        culeak_collector_roll(c, roll);
    if (c)
        culeak_collector_aggregate(c, aggregate_ns);
    else if (aggregate_ns)
        fprintf(stderr, "culeak: no ring reader: the job's processes write full recordings, not aggregated ones\n");
    /* posix_spawn: the job starts without a copy of this process's address space being
     * made and thrown away (what fork + exec cost at every start) */
    char **envp = job_environment(output_file, depth, c);
    pid_t pid = -1;
    posix_spawnattr_t attr;
    int rc = envp ? posix_spawnattr_init(&attr) : -1;
    if (rc == 0) {
        job_signal_defaults(&attr);
        rc = posix_spawnp(&pid, argv[0], NULL, &attr, argv, envp);
        posix_spawnattr_destroy(&attr);
    }
    free(envp);
    if (rc != 0) {
        if (rc > 0)
            fprintf(stderr, "culeak: cannot run %s: %s\n", argv[0], strerror(rc));
        culeak_collector_free(c);
        return 127 << 8; /* as a shell's status for a program it cannot run */
    }
    run->pid = (long)pid;
    if (c)
        culeak_collector_started(c);
    /* The program owns the terminal's Ctrl-C: culeak waits for it to react. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, oldint, oldquit;
    sigaction(SIGINT, &ign, &oldint);
    sigaction(SIGQUIT, &ign, &oldquit);
    int st = 0, reaped = 0;
    size_t got = 0;
    /* as strace -f: until the program and every traced process it started have ended */
    while (!reaped || (c && culeak_collector_busy(c))) {
        if (c)
            got = culeak_collector_poll(c, got ? POLL_BUSY_MS : POLL_IDLE_MS);
        pid_t w = waitpid(pid, &st, reaped ? WNOHANG : c ? WNOHANG : 0);
        if (w == pid)
            reaped = 1;
        else if (w < 0 && errno != EINTR)
            reaped = 1;
    }
    if (c)
        culeak_collector_poll(c, 0); /* the last refusals, counted */
    run->unrecorded = culeak_collector_unrecorded(c);
    culeak_collector_free(c);
    sigaction(SIGINT, &oldint, NULL);
    sigaction(SIGQUIT, &oldquit, NULL);
    return st;
}
