/* Another tool that wraps dlsym, preloaded after the shim (build/fakecuda/
 * libdlsym_counter.so hands out its own counting cuMemAlloc_v2): the shim's dlsym hands a
 * program's lookups on to it, so both tools see every allocation of a program that finds
 * the driver's functions with dlsym. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_shim_harness.h"

#define ALLOCS 100

static char dir[64];

static int setup(void **s) { return th_mkdtemp(dir, sizeof dir) ? 0 : -1; }
static int teardown(void **s)
{
    th_rmdir(dir);
    return 0;
}

static void test_next_dlsym_sees_every_allocation(void **s)
{
#ifdef __SANITIZE_ADDRESS__
    /* The test double wraps dlsym the plain way, calling the next one from its own code:
     * the sanitizer runtime's lookups of the functions it intercepts (dlsym(RTLD_NEXT)
     * before main) then find its interceptors again and never end, shim or no shim. */
    skip();
#endif
    static struct th_rec rec;
    static struct th_run run;
    char preload[2 * PATH_MAX + 64], n[16];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s/libculeak.so %s/fakecuda/libdlsym_counter.so", th_build(),
             th_build());
    snprintf(n, sizeof n, "%d", ALLOCS);
    const char *args[] = {"leak", n, "64", NULL};
    const char *env[] = {preload, NULL};
    assert_int_equal(th_record(&rec, &run, dir, "client_dlsym", args, env, 0), 0);
    if (!th_exited_ok(&run))
        fail_msg("status %#x: %s", run.status, run.err);
    assert_int_equal(rec.rc, 0);
    const char *line = strstr(run.err, "dlsym_counter: ");
    if (!line)
        fail_msg("the other tool did not report: %s", run.err);
    unsigned long seen = strtoul(line + strlen("dlsym_counter: "), NULL, 10);
    if (seen != ALLOCS)
        fail_msg("the other tool saw %lu of %d allocations", seen, ALLOCS);
    assert_int_equal(th_count(&rec, -1, CULEAK_OP_ALLOC), ALLOCS);
    th_rec_free(&rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_next_dlsym_sees_every_allocation),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
