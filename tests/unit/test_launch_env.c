/* The job culeak_run_traced starts (src/launch/launch.c) gets the shim's environment
 * (LD_PRELOAD with libculeak.so, CULEAK_OUTPUT, its ring's CULEAK_RING_FD),
 * while culeak's own environment is left as it was: what `check` runs after the job must
 * not be traced. A program that cannot be started reads as a shell's status 127. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "launch/launch.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char shim[PATH_MAX];

static int setup(void **state)
{
    (void)state;
    const char *b = getenv("BUILD");
    char rel[PATH_MAX];
    snprintf(rel, sizeof rel, "%s/libculeak.so", b && *b ? b : "build");
    if (!realpath(rel, shim))
        return -1;
    setenv("CULEAK_LIB", shim, 1);
    unsetenv("CULEAK_OUTPUT");
    unsetenv("CULEAK_RING_FD");
    setenv("LD_PRELOAD", "", 1);
    return 0;
}

static void test_job_environment(void **state)
{
    (void)state;
    char dir[] = "/tmp/culeak-launch-XXXXXX", out[PATH_MAX], script[3 * PATH_MAX];
    assert_non_null(mkdtemp(dir));
    snprintf(out, sizeof out, "%s/job.culeak", dir);
    /* exit 3 when the job saw both (the shim takes its ring's descriptor at its start) */
    snprintf(script, sizeof script,
             "case \"$LD_PRELOAD\" in *%s*) ;; *) exit 10;; esac; [ \"$CULEAK_OUTPUT\" = %s ] || exit 11; exit 3",
             shim, out);
    char *argv[] = {"/bin/sh", "-c", script, NULL};
    int st = culeak_run_traced(argv, out, 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 3);
    assert_null(getenv("CULEAK_OUTPUT"));
    assert_null(getenv("CULEAK_RING_FD"));
    assert_string_equal(getenv("LD_PRELOAD"), "");
    assert_string_equal(getenv("CULEAK_LIB"), shim);
    unlink(out);
    rmdir(dir);
}

static void test_cannot_start(void **state)
{
    (void)state;
    char *argv[] = {"/nonexistent/culeak-test-program", NULL};
    int st = culeak_run_traced(argv, NULL, 0);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 127);
    assert_string_equal(getenv("LD_PRELOAD"), "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_environment),
        cmocka_unit_test(test_cannot_start),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
