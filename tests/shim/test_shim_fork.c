/* fork without exec (DataLoader workers): with CULEAK_OUTPUT=<dir>/rec.%p each process
 * writes its own recording; the CUDA child is a new process (ppid = parent) carrying only
 * its own events; the child that never touches CUDA sends nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_shim_harness.h"
#include "../fakecuda/scenarios.h"

static void rec_of(struct th_rec *r, const char *dir, int pid)
{
    char path[256];
    snprintf(path, sizeof path, "%s/rec.%d", dir, pid);
    th_rec_load(r, path);
    if (r->rc != 0)
        fail_msg("recording of %d: %d %s", pid, r->rc, r->err);
}

static void test_fork(void **s)
{
    char dir[64], out_env[128];
    struct th_run run;
    int parent, child, plain;
    const char *args[] = {"fork", NULL};
    assert_non_null(th_mkdtemp(dir, sizeof dir));
    snprintf(out_env, sizeof out_env, "CULEAK_OUTPUT=%s/rec.%%p", dir);
    const char *env[] = {out_env, NULL};
    assert_int_equal(th_run_client(&run, "client_static", args, env, 1), 0);
    assert_true(th_exited_ok(&run));
    const char *line = strstr(run.out, "fork parent=");
    assert_non_null(line);
    assert_int_equal(sscanf(line, "fork parent=%d child_cuda=%d child_plain=%d", &parent, &child, &plain), 3);
    assert_int_equal(parent, run.pid);

    struct th_rec p, c;
    rec_of(&p, dir, parent);
    assert_int_equal(p.hello.pid, (uint64_t)parent);
    assert_int_equal(p.nev, 2);
    assert_int_equal(p.ev[0].api, CULEAK_API_CU_MEM_ALLOC);
    assert_int_equal(p.ev[0].size, SZ_FORK_PARENT);
    assert_int_equal(p.ev[1].op, CULEAK_OP_FREE);
    assert_int_equal(p.ev[1].addr, p.ev[0].addr);

    rec_of(&c, dir, child);
    assert_int_equal(c.hellos, 1);
    assert_int_equal(c.hello.pid, (uint64_t)child);
    assert_int_equal(c.hello.ppid, (uint64_t)parent);
    assert_int_equal(c.nev, 2); /* its own pair only, numbered afresh */
    assert_int_equal(c.ev[0].api, CULEAK_API_CU_MEM_ALLOC);
    assert_int_equal(c.ev[0].size, SZ_FORK_CHILD);
    assert_int_equal(c.ev[0].seq, 1);
    assert_int_equal(c.ev[1].op, CULEAK_OP_FREE);
    assert_int_equal(c.ev[1].addr, c.ev[0].addr);
    assert_true(c.nframe > 0 || c.ev[0].stack == 0); /* frames it references are in its own stream */
    for (size_t i = 0; i < c.nev; i++)
        if (c.ev[i].stack) {
            int found = 0;
            for (size_t f = 0; f < c.nframe; f++)
                found |= c.frame[f].id == c.ev[i].stack;
            assert_true(found);
        }

    /* the child that never called CUDA: no recording, or an empty one */
    char path[256];
    struct stat st;
    snprintf(path, sizeof path, "%s/rec.%d", dir, plain);
    if (stat(path, &st) == 0 && st.st_size != 0)
        fail_msg("the non-CUDA child wrote %lld bytes", (long long)st.st_size);
    th_rec_free(&p);
    th_rec_free(&c);
    th_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fork),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
