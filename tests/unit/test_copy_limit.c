/* The bound on a console session's copies of its processes' streams (CULEAK_COPY_LIMIT,
 * src/console/ring_reader.c): bytes, or with a K, M or G suffix (binary, either case); 4 GiB
 * when unset or empty. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/console/ring_reader.h"

static char dir[64];

static int setup(void **st)
{
    snprintf(dir, sizeof dir, "/tmp/culeak-limit-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    setenv("XDG_RUNTIME_DIR", dir, 1);
    setenv("XDG_CACHE_HOME", dir, 1);
    return 0;
}

static int teardown(void **st)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* The limit a session opened with CULEAK_COPY_LIMIT=value (NULL: unset) has. */
static uint64_t limit_of(const char *value)
{
    if (value)
        setenv("CULEAK_COPY_LIMIT", value, 1);
    else
        unsetenv("CULEAK_COPY_LIMIT");
    struct ring_readers s;
    char err[256];
    assert_int_equal(ring_readers_open(&s, err, sizeof err), 0);
    uint64_t n = s.copy_limit;
    ring_readers_close(&s);
    printf("# CULEAK_COPY_LIMIT=%s: %llu bytes\n", value ? value : "(unset)", (unsigned long long)n);
    return n;
}

static void test_units(void **st)
{
    assert_int_equal(limit_of(NULL), UINT64_C(4) << 30);
    assert_int_equal(limit_of(""), UINT64_C(4) << 30);
    assert_int_equal(limit_of("12345"), 12345);
    assert_int_equal(limit_of("5K"), UINT64_C(5) << 10);
    assert_int_equal(limit_of("5k"), UINT64_C(5) << 10);
    assert_int_equal(limit_of("3M"), UINT64_C(3) << 20);
    assert_int_equal(limit_of("3m"), UINT64_C(3) << 20);
    assert_int_equal(limit_of("2G"), UINT64_C(2) << 30);
    assert_int_equal(limit_of("2g"), UINT64_C(2) << 30);
    unsetenv("CULEAK_COPY_LIMIT");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_units, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
