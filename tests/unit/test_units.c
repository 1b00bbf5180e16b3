/* culeak_units_size (common/units.c), the one formatter of sizes: its edges in both
 * styles, rounded down, never four digits in the short style, exact up to 2^64 - 1;
 * and the three callers that dress it (console, reports, suspects). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/units.h"
#include "console/fmt.h"
#include "model/suspects.h"
#include "report/report.h"

static void expect(uint64_t bytes, const char *short_text, const char *one_decimal)
{
    char buf[32];
    assert_string_equal(culeak_units_size(buf, sizeof buf, bytes, CULEAK_UNITS_SHORT), short_text);
    assert_string_equal(culeak_units_size(buf, sizeof buf, bytes, CULEAK_UNITS_ONE_DECIMAL), one_decimal);
}

static void test_edges(void **state)
{
    (void)state;
    expect(0, "0 B", "0 B");
    expect(1, "1 B", "1 B");
    expect(1023, "1023 B", "1023 B");
    expect(1024, "1.00 KiB", "1.0 KiB");
    expect(1536, "1.50 KiB", "1.5 KiB");
    expect(10239, "9.99 KiB", "9.9 KiB");   /* rounded down: not "10.00 KiB", not "10.0 KiB" */
    expect(10240, "10.0 KiB", "10.0 KiB");
    expect(102400, "100 KiB", "100.0 KiB");
    expect(1000 * 1024 - 1, "999 KiB", "999.9 KiB");
    expect(1000 * 1024, "0.97 MiB", "1000.0 KiB"); /* short: three digits at most */
    expect((1u << 20) - 1, "0.99 MiB", "1023.9 KiB"); /* never "1024.0 KiB" */
    expect(1u << 20, "1.00 MiB", "1.0 MiB");
    expect(64ull << 20, "64.0 MiB", "64.0 MiB");
    expect(3ull << 30, "3.00 GiB", "3.0 GiB");
    expect(1ull << 40, "1.00 TiB", "1.0 TiB");
    expect(1ull << 50, "1.00 PiB", "1.0 PiB");
    expect(1ull << 63, "8.00 EiB", "8.0 EiB");
    expect(UINT64_MAX, "15.9 EiB", "15.9 EiB");
}

static void test_small_buffer(void **state)
{
    (void)state;
    char buf[5];
    assert_string_equal(culeak_units_size(buf, sizeof buf, 64ull << 20, CULEAK_UNITS_SHORT), "64.0");
}

static void test_callers(void **state)
{
    (void)state;
    char buf[64];
    assert_string_equal(fmt_size(buf, sizeof buf, 1536), "1.50 KiB");
    assert_string_equal(fmt_delta(buf, sizeof buf, -1536), "-1.50 KiB");
    report_format_bytes(buf, sizeof buf, 1);
    assert_string_equal(buf, "1 byte");
    report_format_bytes(buf, sizeof buf, 1023);
    assert_string_equal(buf, "1023 bytes");
    report_format_bytes(buf, sizeof buf, (1u << 20) - 1);
    assert_string_equal(buf, "1023.9 KiB (1048575 bytes)");
    model_format_size(buf, sizeof buf, 16384.4);
    assert_string_equal(buf, "16.0 KiB");
    model_format_size(buf, sizeof buf, -512.6);
    assert_string_equal(buf, "-513 B");
    model_format_size(buf, sizeof buf, 10239);
    assert_string_equal(buf, "9.99 KiB");
    model_format_size(buf, sizeof buf, 1e30);
    assert_string_equal(buf, "15.9 EiB");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_small_buffer),
        cmocka_unit_test(test_callers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
