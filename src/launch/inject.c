/* The injector: culeak's own (inject_ptrace.c), or, when CULEAK_GDB names one, a debugger
 * that attaches to the process, calls dlopen(libculeak.so) and culeak_attach_start(endpoint)
 * in it, and detaches. culeak drives it step by step on its standard input, each step followed by
 * a marker it waits for, with a timeout; gdb's own rules do the rest (a signal during a
 * call unwinds it: unwindonsignal; end of input detaches).
 *
 * The process must never be left stopped or broken. A step that fails or times out
 * interrupts the debugger (SIGINT: a call in progress is unwound), tells it to detach and
 * quit, kills it when it does not, and a process then found stopped gets SIGCONT: the
 * kernel detaches a dead tracer's tracee but may leave it in the stop of the attach. */
#include "inject.h"
#include "inject_ptrace.h"
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define OUT_MAX (64u << 10)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A field of /proc/PID/status ("Uid:", "TracerPid:"), its first number; -1 when absent. */
static long status_field(pid_t pid, const char *key)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    long v = -1;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, key, n) == 0) {
            v = strtol(line + n, NULL, 10);
            break;
        }
    if (f)
        fclose(f);
    return v;
}

/* The state letter of /proc/PID/stat (R, S, T, t, Z...), 0 when the process is gone. */
static char proc_state(pid_t pid, int *exit_code)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* the command name may hold anything but ends at the last ')' */
    if (!p || p[1] != ' ')
        return 0;
    if (exit_code) { /* field 52, exit_code: the wait status of a zombie */
        char *q = p + 2;
        for (int field = 3; q && field < 52; field++) {
            q = strchr(q, ' ');
            if (q)
                q++;
        }
        *exit_code = q ? atoi(q) : 0;
    }
    return p[2];
}

static void comm_of(pid_t pid, char *out, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    FILE *f = fopen(path, "re");
    out[0] = 0;
    if (f && fgets(out, (int)len, f))
        out[strcspn(out, "\n")] = 0;
    if (f)
        fclose(f);
}

void culeak_proc_cmdline(pid_t pid, char *out, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, out, len - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (n <= 0) {
        comm_of(pid, out, len);
        return;
    }
    out[n] = 0;
    while (n > 0 && out[n - 1] == 0)
        n--;
    for (ssize_t i = 0; i < n; i++)
        if (out[i] == 0)
            out[i] = ' ';
}

int culeak_proc_ended(pid_t pid, int *status)
{
    int code = 0;
    char s = proc_state(pid, &code);
    if (s && s != 'Z' && s != 'X')
        return 0;
    *status = s ? code : -1;
    return 1;
}

int culeak_attach_precheck(pid_t pid, char *err, size_t len)
{
    if (pid <= 0) {
        snprintf(err, len, "not a process id: %d", (int)pid);
        return -1;
    }
    if (pid == getpid()) {
        snprintf(err, len, "culeak cannot attach to itself");
        return -1;
    }
    char s = proc_state(pid, NULL);
    if (!s || s == 'Z' || s == 'X') {
        snprintf(err, len, "no running process with pid %d", (int)pid);
        return -1;
    }
    if (s == 'T') {
        snprintf(err, len, "pid %d is stopped (state T): culeak attaches to running processes only; resume it "
                           "(kill -CONT %d), then attach", (int)pid, (int)pid);
        return -1;
    }
    long uid = status_field(pid, "Uid:");
    if (uid >= 0 && geteuid() != 0 && (uid_t)uid != geteuid()) {
        snprintf(err, len,
                 "pid %d belongs to another user (uid %ld): culeak attaches to your own processes only; "
                 "run culeak attach as that user (or as root)", (int)pid, uid);
        return -1;
    }
    long tracer = status_field(pid, "TracerPid:");
    if (tracer > 0) {
        char comm[64];
        comm_of((pid_t)tracer, comm, sizeof comm);
        snprintf(err, len,
                 "pid %d is already traced by pid %ld (%s): a process has one tracer at a time; "
                 "detach that debugger (or end that culeak attach) first", (int)pid, tracer, comm[0] ? comm : "?");
        return -1;
    }
    return 0;
}

static int on_path(const char *name, char *out, size_t len)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        snprintf(out, len, "%.*s/%s", (int)n, path, name);
        struct stat st;
        if (n && stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
            return 1;
        path += n + (path[n] == ':');
    }
    return 0;
}

const char *culeak_attach_debugger(char *err, size_t len)
{
    static char found[4096];
    const char *env = getenv("CULEAK_GDB");
    if (env && *env) {
        struct stat st;
        if (strchr(env, '/') ? stat(env, &st) == 0 && access(env, X_OK) == 0 : on_path(env, found, sizeof found))
            return env;
        snprintf(err, len, "CULEAK_GDB names %s, which cannot be run: install it, or unset CULEAK_GDB to use "
                           "culeak's own injector", env);
        return NULL;
    }
#if defined(__x86_64__)
    return ""; /* culeak's own */
#else
    snprintf(err, len, "culeak's own injector knows x86-64 only: on this machine, attach through gdb "
                       "(install it and set CULEAK_GDB=gdb)");
    return NULL;
#endif
}

struct gdb {
    pid_t pid;
    int in, out;
    char buf[OUT_MAX];
    size_t len;
    size_t step_start; /* where the current step's output begins */
};

static void gdb_send(struct gdb *g, const char *text)
{
    size_t n = strlen(text);
    while (n > 0 && g->in >= 0) {
        ssize_t k = write(g->in, text, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return;
        text += k;
        n -= (size_t)k;
    }
}

/* Reads until the marker line of step `name` or the deadline; 0, or -1 (timeout, or the
 * debugger ended). */
static int gdb_wait(struct gdb *g, const char *name, double deadline)
{
    char marker[64];
    snprintf(marker, sizeof marker, "CULEAK-DONE %s\n", name);
    for (;;) {
        g->buf[g->len] = 0;
        if (strstr(g->buf + g->step_start, marker))
            return 0;
        double left = deadline - now_s();
        if (left <= 0)
            return -1;
        struct pollfd p = {g->out, POLLIN, 0};
        int r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue;
        if (g->len + 1 >= sizeof g->buf) { /* keep the step's last output */
            size_t drop = g->len / 2;
            memmove(g->buf, g->buf + drop, g->len - drop);
            g->len -= drop;
            g->step_start = g->step_start > drop ? g->step_start - drop : 0;
        }
        ssize_t k = read(g->out, g->buf + g->len, sizeof g->buf - 1 - g->len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        g->len += (size_t)k;
    }
}

/* A step: its commands, then the marker; the output of the step from g->step_start. */
static int gdb_step(struct gdb *g, const char *name, const char *commands, int timeout_s)
{
    char begin[64], done[64];
    g->step_start = g->len;
    snprintf(begin, sizeof begin, "echo CULEAK-BEGIN %s\\n\n", name);
    snprintf(done, sizeof done, "echo \\nCULEAK-DONE %s\\n\n", name);
    gdb_send(g, begin);
    gdb_send(g, commands);
    gdb_send(g, done);
    return gdb_wait(g, name, now_s() + timeout_s);
}

/* The number after `key` in the step's output; 0 when absent. */
static int step_value(const struct gdb *g, const char *key, unsigned long long *v)
{
    const char *p = strstr(g->buf + g->step_start, key);
    if (!p)
        return 0;
    *v = strtoull(p + strlen(key), NULL, 10);
    return 1;
}

static int step_says(const struct gdb *g, const char *text) { return strstr(g->buf + g->step_start, text) != NULL; }

/* Ends the debugger however it is: asked to detach and quit, interrupted first when a
 * step did not finish, killed when it does not go; then the process is made to run. */
static void gdb_end(struct gdb *g, pid_t target, int interrupt)
{
    if (interrupt && g->pid > 0)
        kill(g->pid, SIGINT); /* a call in progress is unwound (unwindonsignal) */
    if (interrupt) {
        struct timespec ts = {0, 200 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    gdb_send(g, "detach\nquit\n");
    if (g->in >= 0)
        close(g->in); /* at the end of its input gdb detaches and quits as well */
    g->in = -1;
    double deadline = now_s() + 10;
    int st;
    while (g->pid > 0) {
        pid_t r = waitpid(g->pid, &st, WNOHANG);
        if (r == g->pid || (r < 0 && errno != EINTR))
            break;
        if (now_s() > deadline) {
            kill(g->pid, SIGKILL);
            waitpid(g->pid, &st, 0);
            break;
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    g->pid = 0;
    if (g->out >= 0)
        close(g->out);
    g->out = -1;
    /* a dead tracer's tracee can stay in the stop of the attach; once no one traces it,
     * it is made to run (a process stopped before culeak came stays as culeak found it
     * only if it was traced: then TracerPid is not 0) */
    for (int i = 0; i < 50; i++) {
        char s = proc_state(target, NULL);
        if (s != 'T' && s != 't')
            break;
        if (status_field(target, "TracerPid:") == 0) {
            kill(target, SIGCONT);
            break;
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static int gdb_start(struct gdb *g, const char *debugger, char *err, size_t len)
{
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0)
        return -1;
    if (pipe2(out, O_CLOEXEC) != 0) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    pid_t p = fork();
    if (p < 0) {
        snprintf(err, len, "cannot start %s: %s", debugger, strerror(errno));
        close(in[0]), close(in[1]), close(out[0]), close(out[1]);
        return -1;
    }
    if (p == 0) {
        /* its own process group: a Ctrl-C at the terminal never interrupts it mid-call */
        setpgid(0, 0);
        dup2(in[0], STDIN_FILENO);
        dup2(out[1], STDOUT_FILENO);
        dup2(out[1], STDERR_FILENO);
        unsetenv("LD_PRELOAD"); /* the debugger runs untraced */
        execlp(debugger, debugger, "-nx", "-nh", "-q", (char *)NULL);
        fprintf(stderr, "CULEAK-EXEC-FAILED %s\n", strerror(errno));
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    g->pid = p;
    g->in = in[1];
    g->out = out[0];
    g->len = g->step_start = 0;
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

void culeak_ptrace_refused(pid_t pid, char *err, size_t len)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
    int scope = -1;
    if (f && fscanf(f, "%d", &scope) != 1)
        scope = -1;
    if (f)
        fclose(f);
    if (scope == 1)
        snprintf(err, len,
                 "the kernel refused to let culeak trace pid %d: kernel.yama.ptrace_scope is 1, so a process "
                 "may trace only its descendants. Allow it with `sudo sysctl kernel.yama.ptrace_scope=0`, "
                 "attach as root (CAP_SYS_PTRACE), or have the program allow any tracer "
                 "(prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY))", (int)pid);
    else if (scope == 2)
        snprintf(err, len, "the kernel refused to let culeak trace pid %d: kernel.yama.ptrace_scope is 2, "
                            "only root (CAP_SYS_PTRACE) may attach: run culeak attach as root", (int)pid);
    else if (scope == 3)
        snprintf(err, len, "the kernel refused to let culeak trace pid %d: kernel.yama.ptrace_scope is 3, "
                            "no process may attach until the machine restarts", (int)pid);
    else
        snprintf(err, len, "the kernel refused to let culeak trace pid %d (Operation not permitted): in a "
                            "container, run it with CAP_SYS_PTRACE (docker run --cap-add=SYS_PTRACE)", (int)pid);
}

/* gdb's chatter that is no error */
static int informational(const char *line)
{
    static const char *const chatter[] = {"Attaching to ", "Reading symbols", "[Thread debugging", "Using host ",
                                          "Download", "0x", "[New ", "Symbols already loaded", "$",
                                          "No loaded shared libraries match"};
    for (size_t i = 0; i < sizeof chatter / sizeof chatter[0]; i++)
        if (strncmp(line, chatter[i], strlen(chatter[i])) == 0)
            return 1;
    return 0;
}

/* What gdb said went wrong in the step: dlerror's text or its ptrace error if it gave
 * one, else its FIRST line that is no chatter nor marker (without the prompts gdb prints
 * before each command it reads, from a pipe too): later lines are mostly the consequences
 * of the first (a failed call leaves the next command comparing nothing). */
static void first_error(const struct gdb *g, char *out, size_t len)
{
    char tmp[OUT_MAX];
    snprintf(tmp, sizeof tmp, "%s", g->buf + g->step_start);
    out[0] = 0;
    int chosen = 0;
    for (char *line = strtok(tmp, "\n"); line; line = strtok(NULL, "\n")) {
        for (;;) /* the prompts: "(gdb) ", and ">" in a block (if ... end) */
            if (strncmp(line, "(gdb) ", 6) == 0)
                line += 6;
            else if (line[0] == '>' || line[0] == ' ')
                line++;
            else
                break;
        if (strncmp(line, "ptrace: ", 8) == 0 || strncmp(line, "CULEAK-ERR ", 11) == 0) {
            snprintf(out, len, "%s", line + (line[0] == 'C' ? 11 : 0));
            return;
        }
        if (!chosen && strncmp(line, "CULEAK-", 7) != 0 && strcmp(line, "(gdb)") != 0 && line[0] &&
            !informational(line)) {
            snprintf(out, len, "%s", line);
            chosen = 1;
        }
    }
}

static int quotable(const char *s) { return !strpbrk(s, "\"\\\n"); }

static struct culeak_inject_timing last_timing;

int culeak_inject_timing(double *total_ms, double *stop_ms)
{
    *total_ms = last_timing.total_ms;
    *stop_ms = last_timing.stop_ms;
    return last_timing.tid;
}

int culeak_inject(pid_t pid, const char *endpoint, int timeout_s, char *err, size_t len)
{
    const char *shim = culeak_shim_path();
    if (!shim) {
        snprintf(err, len, "cannot find libculeak.so (set CULEAK_LIB)");
        return -1;
    }
    char real_shim[4096];
    if (!realpath(shim, real_shim))
        snprintf(real_shim, sizeof real_shim, "%s", shim);
    if (!quotable(real_shim) || !quotable(endpoint)) {
        snprintf(err, len, "the paths of libculeak.so and of culeak's socket must not hold quotes or backslashes");
        return -1;
    }
    if (culeak_attach_precheck(pid, err, len) != 0)
        return -1;
    const char *debugger = culeak_attach_debugger(err, len);
    if (!debugger)
        return -1;
    if (!*debugger) {
        int r = culeak_inject_ptrace(pid, real_shim, endpoint, timeout_s, &last_timing, err, len);
        if (r < 0 && culeak_proc_ended(pid, &(int){0}))
            snprintf(err, len, "pid %d exited during the attach", (int)pid);
        return r;
    }
    static struct gdb g;
    memset(&g, 0, sizeof g);
    if (gdb_start(&g, debugger, err, len) != 0)
        return -1;
    char cmd[9000], words[300];
    unsigned long long v = 0;
    int result = -1;

    snprintf(cmd, sizeof cmd,
             "set confirm off\nset pagination off\nset width 0\nset height 0\nset unwindonsignal on\n"
             "set debuginfod enabled off\n"
             "set auto-solib-add off\nset print thread-events off\nset print inferior-events off\n"
             "attach %d\ninfo proc\n", (int)pid);
    char attached[32];
    snprintf(attached, sizeof attached, "process %d\n", (int)pid);
    if (gdb_step(&g, "attach", cmd, timeout_s) != 0 || !step_says(&g, attached)) {
        if (step_says(&g, "CULEAK-EXEC-FAILED"))
            snprintf(err, len, "cannot run %s", debugger);
        else if (step_says(&g, "Operation not permitted"))
            culeak_ptrace_refused(pid, err, len);
        else if (!culeak_proc_ended(pid, &(int){0}) && culeak_attach_precheck(pid, err, len) != 0)
            ; /* err says why (traced meanwhile) */
        else if (culeak_proc_ended(pid, &(int){0}))
            snprintf(err, len, "pid %d exited during the attach", (int)pid);
        else {
            first_error(&g, words, sizeof words);
            snprintf(err, len, "%s could not attach to pid %d%s%s (unset CULEAK_GDB to use culeak's own injector)",
                     debugger, (int)pid, words[0] ? ": " : "", words);
        }
        gdb_end(&g, pid, 1);
        return -1;
    }

    snprintf(cmd, sizeof cmd,
             "sharedlibrary libc\\.so\nsharedlibrary libdl\\.so\n"
             "set $culeak_h = ((void *(*)(const char *, int)) dlopen)(\"%s\", 2)\n"
             "printf \"CULEAK-H %%lu\\n\", (unsigned long) $culeak_h\n"
             "if $culeak_h == 0\nprintf \"CULEAK-ERR %%s\\n\", ((char *(*)(void)) dlerror)()\nend\n",
             real_shim);
    if (gdb_step(&g, "dlopen", cmd, timeout_s) != 0 || !step_value(&g, "CULEAK-H ", &v) || v == 0) {
        if (culeak_proc_ended(pid, &(int){0}))
            snprintf(err, len, "pid %d exited during the attach", (int)pid);
        else {
            first_error(&g, words, sizeof words);
            snprintf(err, len, "%s could not load %s into pid %d%s%s (unset CULEAK_GDB to use culeak's own injector)",
                     debugger, real_shim, (int)pid, words[0] ? ": " : "", words);
        }
        gdb_end(&g, pid, 1);
        return -1;
    }

    snprintf(cmd, sizeof cmd,
             "set $culeak_f = ((void *(*)(void *, const char *)) dlsym)($culeak_h, \"culeak_attach_start\")\n"
             "printf \"CULEAK-R %%d\\n\", ((int (*)(const char *)) $culeak_f)(\"%s\") + 1\n",
             endpoint);
    if (gdb_step(&g, "start", cmd, timeout_s) != 0 || !step_value(&g, "CULEAK-R ", &v)) {
        if (culeak_proc_ended(pid, &(int){0}))
            snprintf(err, len, "pid %d exited during the attach", (int)pid);
        else {
            first_error(&g, words, sizeof words);
            snprintf(err, len, "%s could not start culeak in pid %d%s%s (unset CULEAK_GDB to use culeak's own injector)",
                     debugger, (int)pid, words[0] ? ": " : "", words);
        }
        gdb_end(&g, pid, 1);
        return -1;
    }
    /* culeak_attach_start's 0, 1 or -1, printed plus one */
    if (v == 2) {
        snprintf(err, len, "pid %d is traced by culeak already (launched under culeak, or attached to)", (int)pid);
        result = 1;
    } else if (v == 1)
        result = 0;
    else
        snprintf(err, len, "culeak could not start in pid %d (out of memory)", (int)pid);

    if (gdb_step(&g, "detach", "detach\n", timeout_s) != 0) {
        gdb_end(&g, pid, 1);
        if (result == 0 && culeak_proc_ended(pid, &(int){0})) {
            snprintf(err, len, "pid %d exited during the attach", (int)pid);
            return -1;
        }
        return result;
    }
    gdb_end(&g, pid, 0);
    return result;
}
