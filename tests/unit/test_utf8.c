/* UTF-8 of the console (grid.h), the one encoder the grid and the output pane share: each
 * length round-trips through utf8_decode, and a code point past U+1FFFFF (a terminal's
 * garbage) still gets a four-byte lead byte, never 0xF8 and up. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "../../src/console/grid.h"

#include <string.h>

static void round_trip(uint32_t cp, size_t want_len, const char *want)
{
    char buf[8] = {0};
    size_t n = utf8_encode(cp, buf);
    assert_int_equal(n, want_len);
    assert_memory_equal(buf, want, want_len);
    uint32_t back = 0;
    assert_int_equal(utf8_decode(buf, n, &back), (int)n);
    assert_int_equal(back, cp);
}

static void test_lengths_round_trip(void **state)
{
    (void)state;
    round_trip('A', 1, "A");
    round_trip(0xE9, 2, "\xC3\xA9");            /* é */
    round_trip(0x2588, 3, "\xE2\x96\x88");      /* █ */
    round_trip(0x1F600, 4, "\xF0\x9F\x98\x80"); /* 😀 */
    round_trip(0x10FFFF, 4, "\xF4\x8F\xBF\xBF");
}

static void test_lead_byte_stays_four_byte(void **state)
{
    (void)state;
    char buf[8] = {0};
    assert_int_equal(utf8_encode(0x200000, buf), 4);
    assert_int_equal((unsigned char)buf[0], 0xF0);
    assert_int_equal(utf8_encode(0xFFFFFFFF, buf), 4);
    assert_int_equal((unsigned char)buf[0], 0xF7);
    for (int k = 1; k < 4; k++)
        assert_int_equal((unsigned char)buf[k] & 0xC0, 0x80);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lengths_round_trip),
        cmocka_unit_test(test_lead_byte_stays_four_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
