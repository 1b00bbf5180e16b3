/* A program hard on its tracer keeps its own files and loses nothing: one that closes
 * every descriptor and opens files, or puts a file on every descriptor number, gets no
 * stream byte in its files and every event recorded; one that ends without destructors
 * (abort, a fatal signal, _exit, _Exit, exec, a forked child's _exit, abort after out of
 * memory) has every event it made in the recording, and its exit status unchanged. A
 * symbolic link planted at the recording's path is not followed; a file put at that path
 * while the job runs is never written to; a signal the job ignores stays ignored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>

#include "test_shim_harness.h"

#include "cuda/culeak_cuda.h"
#include "common/wire.h"

#define HOSTILE_ALLOC 4096 /* client_hostile.c */

static size_t allocs(const struct th_rec *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nev; i++)
        n += r->ev[i].op == CULEAK_OP_ALLOC && r->ev[i].size == HOSTILE_ALLOC;
    return n;
}

static void file_is(const char *path, const char *want)
{
    char got[256] = "";
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    ssize_t n = read(fd, got, sizeof got - 1);
    close(fd);
    got[n > 0 ? n : 0] = 0;
    if (strcmp(got, want) != 0)
        fail_msg("%s holds %zd bytes, not just the program's own '%s'", path, n, want);
}

/* Runs client_hostile ARGS with CULEAK_OUTPUT=<dir>/rec.culeak (extra: one more setting). */
static void run(struct th_rec *rec, struct th_run *r, const char *dir, const char *const *args, const char *extra)
{
    char out_env[PATH_MAX + 32], path[PATH_MAX];
    snprintf(path, sizeof path, "%s/rec.culeak", dir);
    snprintf(out_env, sizeof out_env, "CULEAK_OUTPUT=%s", path);
    const char *env[] = {out_env, extra, NULL};
    assert_int_equal(th_run_client(r, "client_hostile", args, env, 1), 0);
    if (strstr(r->err, "FAIL"))
        fail_msg("%s", r->err);
    th_rec_load(rec, path);
    if (rec->rc < 0)
        fail_msg("recording: %s (stderr: %s)", rec->err, r->err);
}

static void test_closeall_then_open(void **s)
{
    char dir[64], f[128];
    struct th_run r;
    struct th_rec rec;
    assert_non_null(th_mkdtemp(dir, sizeof dir));
    const char *args[] = {"closeall", dir, "100", NULL};
    run(&rec, &r, dir, args, NULL);
    assert_true(th_exited_ok(&r));
    for (int i = 0; i < 3; i++) {
        char want[32];
        snprintf(f, sizeof f, "%s/f%d", dir, i);
        snprintf(want, sizeof want, "program data %d\n", i);
        file_is(f, want);
    }
    assert_int_equal(rec.rc, 0);
    assert_int_equal(allocs(&rec), 101);
    assert_int_equal(rec.exits, 1);
    assert_int_equal(rec.exit_reason, CULEAK_EXIT_NORMAL);
    th_rec_free(&rec);
    th_rmdir(dir);
}

/* libunwind checks memory through a pipe it opens at start, on the program's numbers: a
 * program that closes them and makes its own pipe there must not have it read from. */
static void test_closeall_then_pipe(void **s)
{
    char dir[64], f[128];
    struct th_run r;
    struct th_rec rec;
    assert_non_null(th_mkdtemp(dir, sizeof dir));
    const char *args[] = {"closepipe", dir, "100", NULL};
    run(&rec, &r, dir, args, NULL);
    if (!th_exited_ok(&r))
        fail_msg("status %#x (%s)", r.status, r.err);
    snprintf(f, sizeof f, "%s/f0", dir);
    file_is(f, "program data 0\n");
    assert_int_equal(rec.rc, 0);
    assert_int_equal(allocs(&rec), 101);
    assert_int_equal(rec.exits, 1);
    th_rec_free(&rec);
    th_rmdir(dir);
}

static void test_dup2_over_every_descriptor(void **s)
{
    char dir[64], f[128];
    struct th_run r;
    struct th_rec rec;
    assert_non_null(th_mkdtemp(dir, sizeof dir));
    snprintf(f, sizeof f, "%s/program.out", dir);
    const char *args[] = {"dup2all", f, "100", NULL};
    run(&rec, &r, dir, args, NULL);
    assert_true(th_exited_ok(&r));
    file_is(f, "program data\n");
    assert_int_equal(rec.rc, 0);
    assert_int_equal(allocs(&rec), 101);
    assert_int_equal(rec.exits, 1);
    th_rec_free(&rec);
    th_rmdir(dir);
}

/* One allocation, then an end without destructors: the allocation is recorded, the
 * recording says how the process ended (reason: CULEAK_EXIT_*), and the program ends as
 * it would untraced. */
static void abrupt(const char *how, int signal, int code, uint64_t reason)
{
    char dir[64];
    struct th_run r;
    struct th_rec rec;
    assert_non_null(th_mkdtemp(dir, sizeof dir));
    const char *args[] = {how, NULL};
    /* a sanitizer build preloads its runtime, whose own SIGSEGV handler would answer */
    run(&rec, &r, dir, args, "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0:handle_segv=0");
    if (signal) {
        assert_true(WIFSIGNALED(r.status));
        assert_int_equal(WTERMSIG(r.status), signal);
    } else {
        assert_true(WIFEXITED(r.status));
        assert_int_equal(WEXITSTATUS(r.status), code);
    }
    if (allocs(&rec) != 1)
        fail_msg("%s: %zu of 1 allocation recorded (%s)", how, allocs(&rec), rec.err);
    assert_int_equal(rec.rc, 0);
    assert_int_equal(rec.exits, 1); /* the recording says the process ended */
    assert_int_equal(rec.exit_reason, reason); /* ... and how */
    th_rec_free(&rec);
    th_rmdir(dir);
}

static void test_abort(void **s) { abrupt("abort", SIGABRT, 0, CULEAK_EXIT_SIGNAL); }
static void test_segv(void **s) { abrupt("segv", SIGSEGV, 0, CULEAK_EXIT_SIGNAL); }
static void test_exit(void **s) { abrupt("exit", 0, 3, CULEAK_EXIT_QUICK); }
static void test_Exit(void **s) { abrupt("Exit", 0, 4, CULEAK_EXIT_QUICK); }
static void test_exec(void **s) { abrupt("exec", 0, 0, CULEAK_EXIT_EXEC); }

static void test_oom_then_abort(void **s)
{
    char dir[64];
    struct th_run r;
    struct th_rec rec;
    assert_non_null(th_mkdtemp(dir, sizeof dir));
    const char *args[] = {"oomabort", NULL};
    run(&rec, &r, dir, args, "FAKECUDA_MEM_BYTES=1048576");
    assert_true(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT);
    size_t failed = 0;
    for (size_t i = 0; i < rec.nev; i++)
        failed += rec.ev[i].op == CULEAK_OP_ALLOC && rec.ev[i].result == CUDA_ERROR_OUT_OF_MEMORY;
    assert_int_equal(failed, 1);
    th_rec_free(&rec);
    th_rmdir(dir);
}

/* SIGHUP ignored by the job's parent (nohup): the job raises it and goes on, as untraced;
 * its recording ends normally, both allocations in. */
static void test_ignored_signal_stays_ignored(void **s)
{
    char dir[64];
    struct th_run r;
    struct th_rec rec;
    assert_non_null(th_mkdtemp(dir, sizeof dir));
    const char *args[] = {"hup", NULL};
    struct sigaction ign = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ign.sa_mask);
    assert_int_equal(sigaction(SIGHUP, &ign, &old), 0); /* inherited through fork and exec */
    run(&rec, &r, dir, args, NULL);
    sigaction(SIGHUP, &old, NULL);
    if (!th_exited_ok(&r))
        fail_msg("the job that ignores SIGHUP ended with status %#x", r.status);
    assert_int_equal(allocs(&rec), 2);
    assert_int_equal(rec.exits, 1);
    assert_int_equal(rec.exit_reason, CULEAK_EXIT_NORMAL);
    th_rec_free(&rec);
    th_rmdir(dir);
}

/* The recording is renamed and another file put at its path while the job runs; then the
 * job closes every descriptor, the shim's too. The shim may reopen only the file it made:
 * the new one keeps exactly its own bytes, and the job is unharmed. */
static void test_replaced_recording_never_written(void **s)
{
    char dir[64], path[128], moved[160], out_env[160];
    assert_non_null(th_mkdtemp(dir, sizeof dir));
    snprintf(path, sizeof path, "%s/rec.culeak", dir);
    snprintf(moved, sizeof moved, "%s.moved", path);
    snprintf(out_env, sizeof out_env, "CULEAK_OUTPUT=%s", path);
    int gate[2];
    assert_int_equal(pipe(gate), 0);
    int out = th_tmpfd(), err = th_tmpfd();
    const char *args[] = {"gateclose", "50", NULL};
    const char *env[] = {out_env, NULL};
    pid_t pid = th_spawn("client_hostile", args, env, 1, gate[0], out, err);
    assert_true(pid > 0);
    close(gate[0]);
    int status; /* at the gate (reading stdin): the shim has opened its recording */
    if (th_wait_in_syscall(pid, pid, SYS_read, 0, &status) != 0)
        fail_msg("the job ended (status %#x) before its gate", status);
    assert_int_equal(rename(path, moved), 0);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "precious\n", 9), 9);
    close(fd);
    assert_int_equal(write(gate[1], "g", 1), 1);
    close(gate[1]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    char errs[4096];
    th_slurp(err, errs, sizeof errs);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("status %#x: %s", status, errs);
    file_is(path, "precious\n");
    assert_non_null(strstr(errs, "cannot be reopened")); /* it says that it stopped */
    close(out);
    close(err);
    th_rmdir(dir);
}

static void test_forked_child_exit(void **s)
{
    char dir[64], out_env[128];
    struct th_run r;
    assert_non_null(th_mkdtemp(dir, sizeof dir));
    snprintf(out_env, sizeof out_env, "CULEAK_OUTPUT=%s/rec.%%p", dir);
    const char *env[] = {out_env, NULL};
    const char *args[] = {"forkexit", NULL};
    assert_int_equal(th_run_client(&r, "client_hostile", args, env, 1), 0);
    assert_true(th_exited_ok(&r));
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int children = 0;
    char parent[32];
    snprintf(parent, sizeof parent, "rec.%d", (int)r.pid);
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "rec.", 4) || !strcmp(e->d_name, parent))
            continue;
        char path[512];
        struct th_rec rec;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        th_rec_load(&rec, path);
        assert_int_equal(allocs(&rec), 1);
        assert_int_equal(rec.exits, 1);
        assert_int_equal(rec.exit_reason, CULEAK_EXIT_QUICK); /* the child's _exit */
        th_rec_free(&rec);
        children++;
    }
    closedir(d);
    assert_int_equal(children, 1);
    th_rmdir(dir);
}

/* A symbolic link planted where the recording goes: its target is never written; a
 * recording made is private (0600). */
static void test_planted_symlink(void **s)
{
    char dir[64], target[128], link[128], out_env[160];
    struct th_run r;
    assert_non_null(th_mkdtemp(dir, sizeof dir));
    snprintf(target, sizeof target, "%s/precious", dir);
    snprintf(link, sizeof link, "%s/rec.culeak", dir);
    int fd = open(target, O_WRONLY | O_CREAT, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "precious\n", 9), 9);
    close(fd);
    assert_int_equal(symlink(target, link), 0);
    snprintf(out_env, sizeof out_env, "CULEAK_OUTPUT=%s", link);
    const char *env[] = {out_env, NULL};
    const char *args[] = {"exit", NULL};
    assert_int_equal(th_run_client(&r, "client_hostile", args, env, 1), 0);
    assert_true(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 3);
    file_is(target, "precious\n");
    assert_non_null(strstr(r.err, "cannot create"));

    unlink(link);
    struct th_rec rec;
    run(&rec, &r, dir, args, NULL);
    struct stat st;
    assert_int_equal(stat(link, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    th_rec_free(&rec);
    th_rmdir(dir);
}

int main(void)
{
    struct rlimit no_core = {0, 0}; /* abort and SIGSEGV leave no core files behind */
    setrlimit(RLIMIT_CORE, &no_core);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_closeall_then_open),
        cmocka_unit_test(test_closeall_then_pipe),
        cmocka_unit_test(test_dup2_over_every_descriptor),
        cmocka_unit_test(test_abort),
        cmocka_unit_test(test_segv),
        cmocka_unit_test(test_exit),
        cmocka_unit_test(test_Exit),
        cmocka_unit_test(test_exec),
        cmocka_unit_test(test_oom_then_abort),
        cmocka_unit_test(test_forked_child_exit),
        cmocka_unit_test(test_ignored_signal_stays_ignored),
        cmocka_unit_test(test_replaced_recording_never_written),
        cmocka_unit_test(test_planted_symlink),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
