/* culeak_rec_finish_short: a record built after two bytes of header room is framed
 * exactly like culeak_rec_finish frames it, below and above 128 payload bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "common/wire.h"

static void check(size_t payload_len)
{
    uint8_t a[CULEAK_REC_HEADROOM + 300], b[CULEAK_REC_HEADROOM + 300];
    for (size_t i = 0; i < payload_len; i++)
        a[CULEAK_REC_HEADROOM + i] = b[CULEAK_REC_SHORT + i] = (uint8_t)(i * 7 + 1);
    size_t na = culeak_rec_finish(a, CULEAK_REC_EVENT, payload_len);
    size_t nb = culeak_rec_finish_short(b, CULEAK_REC_EVENT, payload_len);
    assert_int_equal(na, nb);
    assert_memory_equal(a, b, na);
    uint8_t type;
    const uint8_t *payload;
    size_t plen;
    assert_int_equal(culeak_next_record(b, nb, &type, &payload, &plen), (long)nb);
    assert_int_equal(type, CULEAK_REC_EVENT);
    assert_int_equal(plen, payload_len);
    for (size_t i = 0; i < payload_len; i++)
        assert_int_equal(payload[i], (uint8_t)(i * 7 + 1));
}

static void test_short_and_long(void **state)
{
    (void)state;
    static const size_t lens[] = {0, 1, 30, 127, 128, 129, 140, 255, 256, 290};
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++)
        check(lens[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_short_and_long)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
