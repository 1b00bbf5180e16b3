/* The shim's cost to every CUDA program: while it waits for PyTorch's libc10_cuda (which
 * most programs never load), an allocation must not look through the loaded modules
 * (dl_iterate_phdr, which takes the loader lock); it looks again only when the modules
 * may have changed. build/fakecuda/libcount_phdr.so, preloaded after the shim, counts the
 * shim's calls per callback. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_shim_harness.h"

#define PAIRS 20000

static char dir[64];

static int setup(void **s) { return th_mkdtemp(dir, sizeof dir) ? 0 : -1; }
static int teardown(void **s)
{
    th_rmdir(dir);
    return 0;
}

static void test_no_loader_lock_per_allocation(void **s)
{
    static struct th_rec rec;
    static struct th_run run;
    char preload[2 * PATH_MAX + 64], pairs[16];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s/libculeak.so %s/fakecuda/libcount_phdr.so", th_build(),
             th_build());
    snprintf(pairs, sizeof pairs, "%d", PAIRS);
    const char *args[] = {"long", pairs, "0", NULL};
    const char *env[] = {preload, NULL};
    assert_int_equal(th_record(&rec, &run, dir, "client_static", args, env, 0), 0);
    assert_true(th_exited_ok(&run));
    assert_int_equal(rec.rc, 0);
    assert_int_equal(th_count(&rec, -1, CULEAK_OP_ALLOC), PAIRS);
    const char *line = strstr(run.err, "count_phdr: shim max ");
    assert_non_null(line);
    unsigned long most = strtoul(line + strlen("count_phdr: shim max "), NULL, 10);
    /* the stream's own look every few milliseconds stays far below one per allocation */
    if (most >= PAIRS / 4)
        fail_msg("the shim walked the loaded modules %lu times in %d allocations", most, PAIRS);
    th_rec_free(&rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_loader_lock_per_allocation),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
