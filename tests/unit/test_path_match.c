/* Recording paths against the output pattern (src/common/path_match.c): %p is the
 * writer's pid and no other, %h and %r any name within one component, %% a percent sign,
 * ".PID" may follow; anything else is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/path_match.h"

static void test_matches(void **state)
{
    (void)state;
    assert_true(culeak_path_matches("/d/r.%p.culeak", 42, "/d/r.42.culeak"));
    assert_false(culeak_path_matches("/d/r.%p.culeak", 42, "/d/r.43.culeak"));
    assert_false(culeak_path_matches("/d/r.%p.culeak", 42, "/d/r.421.culeak"));
    assert_false(culeak_path_matches("/d/r.%p.culeak", 42, "/etc/passwd"));
    assert_true(culeak_path_matches("/d/r.culeak", 42, "/d/r.culeak"));
    assert_true(culeak_path_matches("/d/r.culeak", 42, "/d/r.culeak.42")); /* a forked child's */
    assert_false(culeak_path_matches("/d/r.culeak", 42, "/d/r.culeak.43"));
    assert_false(culeak_path_matches("/d/r.culeak", 42, "/d/r.culeakx"));
    assert_false(culeak_path_matches("/d/r.culeak", 42, "/d/r.culea"));
    assert_true(culeak_path_matches("/d/%h-%r.%p", 7, "/d/gpu1-0.7"));
    assert_true(culeak_path_matches("/d/%h-%r.%p", 7, "/d/gpu-a-3.7"));
    assert_false(culeak_path_matches("/d/%h.%p", 7, "/d/x/../../etc/y.7")); /* %h stays in its component */
    assert_false(culeak_path_matches("/d/%h.%p", 7, "/d/h.8"));
    /* nor is it "." or "..", alone or with the template's text */
    assert_false(culeak_path_matches("/d/%h/r.%p", 7, "/d/../r.7"));
    assert_false(culeak_path_matches("/d/%r/%h/r.%p", 7, "/d/../../r.7"));
    assert_false(culeak_path_matches("/d/.%h/r.%p", 7, "/d/../r.7"));
    assert_false(culeak_path_matches("/d/%h/r.%p", 7, "/d/./r.7"));
    assert_true(culeak_path_matches("/d/%h/r.%p", 7, "/d/.h/r.7"));
    assert_true(culeak_path_matches("/d/%h/r.%p", 7, "/d/.../r.7"));
    assert_true(culeak_path_matches("/d/../e/%h/r.%p", 7, "/d/../e/h/r.7")); /* the template's own */
    assert_true(culeak_path_matches("/d/100%%.%p", 7, "/d/100%.7"));
    assert_false(culeak_path_matches("/d/100%%.%p", 7, "/d/100%%.7"));
    assert_true(culeak_path_matches("/d/a%q", 7, "/d/a%q")); /* % before another character stays */
    assert_false(culeak_path_matches("/d/r.%p", 0, "/d/r.0"));
    assert_false(culeak_path_matches("/d/r", 7, ""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
