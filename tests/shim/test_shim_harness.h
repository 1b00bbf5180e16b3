/* Shared by the test_shim_* tests: runs a client program of build/fakecuda under the shim
 * (LD_PRELOAD=$BUILD/libculeak.so) and loads the recording it wrote into memory. */
#ifndef TEST_SHIM_HARNESS_H
#define TEST_SHIM_HARNESS_H

#include "common/apis.h"
#include "common/decode.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static inline const char *th_build(void)
{
    static char abs[PATH_MAX];
    const char *b = getenv("BUILD");
    if (!abs[0] && !realpath(b && *b ? b : "build", abs))
        snprintf(abs, sizeof abs, "%s", b && *b ? b : "build");
    return abs;
}

struct th_run {
    int status;          /* raw waitpid status */
    char out[16384];
    char err[16384];
    pid_t pid;
};

static inline void th_slurp(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    ssize_t r;
    lseek(fd, 0, SEEK_SET);
    while (n + 1 < cap && (r = read(fd, buf + n, cap - 1 - n)) > 0)
        n += (size_t)r;
    buf[n] = 0;
}

/* Starts $BUILD/fakecuda/<client> argv... with the shim preloaded (or not), extra
 * "KEY=VALUE" settings and stdin from stdin_fd (-1: /dev/null). Does not wait. */
static inline pid_t th_spawn(const char *client, const char *const *args, const char *const *env,
                             int preload, int stdin_fd, int out_fd, int err_fd)
{
    char exe[PATH_MAX + 256], lib[PATH_MAX + 64], pre[PATH_MAX + 64];
    snprintf(exe, sizeof exe, "%s/fakecuda/%s", th_build(), client);
    snprintf(lib, sizeof lib, "LD_LIBRARY_PATH=%s/fakecuda", th_build());
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s/libculeak.so", th_build());
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    char *argv[32];
    int n = 0;
    argv[n++] = exe;
    for (int i = 0; args && args[i] && n < 31; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    /* start from the test's environment minus anything culeak/fakecuda already set */
    for (int again = 1; again;) { /* unsetenv changes environ: rescan after each */
        again = 0;
        for (char **e = environ; *e && !again; e++) {
            if (strncmp(*e, "CULEAK_", 7) && strncmp(*e, "FAKECUDA_", 9) && strncmp(*e, "LD_PRELOAD=", 11))
                continue;
            char name[256];
            size_t len = strcspn(*e, "=");
            snprintf(name, sizeof name, "%.*s", (int)len, *e);
            unsetenv(name);
            again = 1;
        }
    }
    putenv(lib);
    if (preload)
        putenv(pre);
    /* an ASan-built shim preloaded ahead of the ASan runtime is fine for these runs */
    putenv((char *)"ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0");
    for (int i = 0; env && env[i]; i++)
        putenv((char *)env[i]);
    int in = stdin_fd >= 0 ? stdin_fd : open("/dev/null", O_RDONLY);
    dup2(in, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    execv(exe, argv);
    _exit(127);
}

static inline int th_tmpfd(void)
{
    char path[] = "/tmp/culeak-test-XXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0)
        unlink(path);
    return fd;
}

/* Runs a client to completion, capturing stdout and stderr. Returns 0, -1 on spawn trouble. */
static inline int th_run_client(struct th_run *r, const char *client, const char *const *args,
                                const char *const *env, int preload)
{
    int out = th_tmpfd(), err = th_tmpfd();
    memset(r, 0, sizeof *r);
    if (out < 0 || err < 0)
        return -1;
    r->pid = th_spawn(client, args, env, preload, -1, out, err);
    if (r->pid < 0 || waitpid(r->pid, &r->status, 0) != r->pid)
        return -1;
    th_slurp(out, r->out, sizeof r->out);
    th_slurp(err, r->err, sizeof r->err);
    close(out);
    close(err);
    return 0;
}

static inline int th_exited_ok(const struct th_run *r) { return WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0; }

/* The system call thread tid of process pid is in (/proc/PID/task/TID/syscall): its number,
 * and its first argument in *arg0; -1 when it runs (not in one), -2 when the thread is gone. */
static inline long th_syscall_of(pid_t pid, pid_t tid, unsigned long *arg0)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -2;
    ssize_t n = read(fd, line, sizeof line - 1);
    close(fd);
    if (n <= 0)
        return -2;
    line[n] = 0;
    long nr;
    if (sscanf(line, "%ld %lx", &nr, arg0) != 2)
        return -1; /* "running", or a number alone */
    return nr;
}

/* Waits until thread tid of the child pid sits in system call nr with first argument
 * arg0 (~0ul: any): 0, or -1 when the child ended first (reaped: its status in *status). */
static inline int th_wait_in_syscall(pid_t pid, pid_t tid, long nr, unsigned long arg0, int *status)
{
    for (;;) {
        unsigned long a = 0;
        if (th_syscall_of(pid, tid, &a) == nr && (arg0 == ~0ul || a == arg0))
            return 0;
        if (waitpid(pid, status, WNOHANG) == pid)
            return -1;
        usleep(500);
    }
}

/* The deadline, in seconds, of a wait for what comes in milliseconds (only a failure
 * reaches it): $WAIT_S, as the e2e harness's waits, 60 unless set. */
static inline long th_wait_s(void)
{
    const char *w = getenv("WAIT_S");
    long s = w && *w ? strtol(w, NULL, 10) : 0;
    return s > 0 ? s : 60;
}

/* A unique scratch directory under /tmp (removed with th_rmdir). */
static inline char *th_mkdtemp(char *buf, size_t cap)
{
    snprintf(buf, cap, "/tmp/culeak-shim-XXXXXX");
    return mkdtemp(buf);
}

static inline void th_rmdir(const char *dir)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/* ---- a recording, fully loaded ---- */

struct th_frame {
    uint64_t id, parent, ip;
};

struct th_module {
    char path[512];
    uint64_t base;
    size_t nseg;
    struct culeak_segment seg[16];
};

struct th_mark {
    uint64_t seq, tid;
    char label[64];
};

struct th_rec {
    int rc;                      /* culeak_decode_file's return */
    char err[256];
    int hellos;
    struct culeak_hello hello;   /* strings not kept */
    size_t nev, cap_ev;
    struct culeak_event *ev;
    size_t nframe, cap_frame;
    struct th_frame *frame;
    size_t nmod;
    struct th_module mod[256];
    int modules_records;
    size_t nmark;
    struct th_mark mark[64];
    int exits;
    uint64_t exit_seq, exit_reason; /* of the last EXIT record */
    int notes;
    uint64_t records;            /* every record delivered to a callback */
};

static inline int th_on_hello(void *c, const struct culeak_hello *h)
{
    struct th_rec *r = c;
    r->records++;
    r->hellos++;
    r->hello = *h;
    r->hello.argv = r->hello.env = NULL;
    r->hello.host.p = r->hello.exe.p = NULL;
    return 0;
}

static inline int th_on_modules(void *c, const struct culeak_modules *m)
{
    struct th_rec *r = c;
    r->records++;
    r->modules_records++;
    for (size_t i = 0; i < m->count && r->nmod < sizeof r->mod / sizeof r->mod[0]; i++) {
        struct th_module *t = &r->mod[r->nmod++];
        size_t n = m->mod[i].path.n < sizeof t->path - 1 ? m->mod[i].path.n : sizeof t->path - 1;
        memcpy(t->path, m->mod[i].path.p, n);
        t->path[n] = 0;
        t->base = m->mod[i].base;
        t->nseg = m->mod[i].nseg < 16 ? m->mod[i].nseg : 16;
        memcpy(t->seg, m->mod[i].seg, t->nseg * sizeof t->seg[0]);
    }
    return 0;
}

static inline int th_on_frame(void *c, uint64_t id, uint64_t parent, uint64_t ip)
{
    struct th_rec *r = c;
    r->records++;
    if (r->nframe == r->cap_frame) {
        r->cap_frame = r->cap_frame ? 2 * r->cap_frame : 256;
        r->frame = realloc(r->frame, r->cap_frame * sizeof *r->frame);
    }
    r->frame[r->nframe++] = (struct th_frame){id, parent, ip};
    return 0;
}

static inline int th_on_event(void *c, const struct culeak_event *e)
{
    struct th_rec *r = c;
    r->records++;
    if (r->nev == r->cap_ev) {
        r->cap_ev = r->cap_ev ? 2 * r->cap_ev : 256;
        r->ev = realloc(r->ev, r->cap_ev * sizeof *r->ev);
    }
    r->ev[r->nev++] = *e;
    return 0;
}

static inline int th_on_mark(void *c, const struct culeak_mark *m)
{
    struct th_rec *r = c;
    r->records++;
    if (r->nmark < sizeof r->mark / sizeof r->mark[0]) {
        struct th_mark *t = &r->mark[r->nmark++];
        size_t n = m->label.n < sizeof t->label - 1 ? m->label.n : sizeof t->label - 1;
        t->seq = m->seq;
        t->tid = m->tid;
        memcpy(t->label, m->label.p, n);
        t->label[n] = 0;
    }
    return 0;
}

static inline int th_on_exit(void *c, const struct culeak_exit *x)
{
    struct th_rec *r = c;
    r->records++;
    r->exits++;
    r->exit_seq = x->seq;
    r->exit_reason = x->reason;
    return 0;
}

static inline int th_on_note(void *c, struct culeak_str text)
{
    struct th_rec *r = c;
    r->records++;
    r->notes++;
    return 0;
}

static inline void th_rec_load(struct th_rec *r, const char *path)
{
    memset(r, 0, sizeof *r);
    struct culeak_sink s = {r, th_on_hello, th_on_modules, th_on_frame, th_on_event,
                            th_on_mark, th_on_exit, th_on_note, NULL, NULL, NULL, NULL, NULL, NULL};
    r->rc = culeak_decode_file(path, &s, r->err, sizeof r->err);
}

static inline void th_rec_free(struct th_rec *r)
{
    free(r->ev);
    free(r->frame);
    r->ev = NULL;
    r->frame = NULL;
}

static inline size_t th_count(const struct th_rec *r, int api, int op)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nev; i++)
        n += (api < 0 || r->ev[i].api == (uint32_t)api) && (op < 0 || r->ev[i].op == (uint32_t)op);
    return n;
}

/* Runs client under the shim writing to <dir>/rec.culeak and loads it; also runs it once
 * without the shim and checks the program's output and exit status are unchanged. */
static inline int th_record(struct th_rec *rec, struct th_run *run, const char *dir, const char *client,
                            const char *const *args, const char *const *extra_env, int compare_baseline)
{
    char out_env[PATH_MAX + 32], path[PATH_MAX];
    const char *env[8];
    int n = 0;
    snprintf(path, sizeof path, "%s/rec.culeak", dir);
    snprintf(out_env, sizeof out_env, "CULEAK_OUTPUT=%s", path);
    env[n++] = out_env;
    for (int i = 0; extra_env && extra_env[i] && n < 7; i++)
        env[n++] = extra_env[i];
    env[n] = NULL;
    if (th_run_client(run, client, args, env, 1) != 0)
        return -1;
    if (compare_baseline) {
        static struct th_run base;
        if (th_run_client(&base, client, args, extra_env, 0) != 0 || base.status != run->status ||
            strcmp(base.out, run->out) != 0) {
            fprintf(stderr, "output changed under the shim:\n--- plain (status %d)\n%s--- shim (status %d)\n%s",
                    base.status, base.out, run->status, run->out);
            return -1;
        }
    }
    th_rec_load(rec, path);
    return 0;
}

#endif
