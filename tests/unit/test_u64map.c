/* The u64 -> u32 map (src/common/u64map.c): u64map_add counts from 0 for an absent key,
 * up and down in one probe, and agrees with get and put across the map's growth. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/u64map.h"

static void test_add(void **state)
{
    (void)state;
    struct u64map m;
    u64map_init(&m);
    assert_int_equal(u64map_add(&m, 5, 1), 0);
    assert_int_equal(u64map_get(&m, 5), 1);
    assert_int_equal(u64map_add(&m, 5, 2), 0);
    assert_int_equal(u64map_get(&m, 5), 3);
    assert_int_equal(u64map_add(&m, 5, (uint32_t)-3), 0); /* down to 0: present, 0 */
    assert_int_equal(u64map_get(&m, 5), 0);
    assert_int_equal(m.count, 1);
    /* many keys, through the map's growth: each key's sum is its own */
    for (uint64_t k = 1; k <= 1000; k++)
        for (uint64_t i = 0; i < k % 7 + 1; i++)
            assert_int_equal(u64map_add(&m, k << 32, (uint32_t)k), 0);
    for (uint64_t k = 1; k <= 1000; k++)
        assert_int_equal(u64map_get(&m, k << 32), (uint32_t)(k * (k % 7 + 1)));
    assert_int_equal(u64map_put(&m, 1ull << 32, 9), 0);
    assert_int_equal(u64map_add(&m, 1ull << 32, 1), 0);
    assert_int_equal(u64map_get(&m, 1ull << 32), 10);
    assert_int_equal(u64map_get(&m, 5), 0);
    assert_int_equal(m.count, 1001);
    u64map_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
