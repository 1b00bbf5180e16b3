/* The protocol buffer writer of report --format pprof (src/report/protobuf.c): fields
 * encoded byte for byte as protobuf's encoding guide gives them, negative int64 values as
 * ten bytes, packed fields with their length, and a gzip stream zlib reads back whole. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "report/protobuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static void assert_bytes(const struct pb *b, const uint8_t *want, size_t n)
{
    assert_int_equal(b->n, n);
    assert_memory_equal(b->p, want, n);
}

static void test_fields(void **state)
{
    (void)state;
    struct pb b = {0};
    pb_uint(&b, 1, 150); /* the guide's first example */
    assert_bytes(&b, (const uint8_t[]){0x08, 0x96, 0x01}, 3);
    pb_clear(&b);
    pb_bytes(&b, 2, "testing", 7);
    assert_bytes(&b, (const uint8_t[]){0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g'}, 9);
    pb_clear(&b);
    pb_int(&b, 2, -1); /* int64, not sint64: two's complement, ten bytes */
    assert_bytes(&b, (const uint8_t[]){0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 11);
    pb_clear(&b);
    pb_uint(&b, 3, 0); /* a zero is still written */
    assert_bytes(&b, (const uint8_t[]){0x18, 0x00}, 2);
    pb_clear(&b);
    pb_uint(&b, 16, UINT64_MAX); /* a field number past 15 takes two bytes */
    assert_bytes(&b, (const uint8_t[]){0x80, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 12);
    pb_free(&b);
}

static void test_packed_and_nested(void **state)
{
    (void)state;
    struct pb b = {0}, m = {0};
    pb_packed(&b, 4, (const uint64_t[]){3, 270, 86942}, 3); /* the guide's packed example */
    assert_bytes(&b, (const uint8_t[]){0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05}, 8);
    pb_clear(&b);
    pb_packed(&b, 2, NULL, 0);
    assert_bytes(&b, (const uint8_t[]){0x12, 0x00}, 2);
    pb_clear(&b);
    pb_uint(&m, 1, 150);
    pb_message(&b, 3, &m); /* the guide's embedded message */
    assert_bytes(&b, (const uint8_t[]){0x1a, 0x03, 0x08, 0x96, 0x01}, 5);
    pb_raw(&b, m.p, m.n);
    assert_bytes(&b, (const uint8_t[]){0x1a, 0x03, 0x08, 0x96, 0x01, 0x08, 0x96, 0x01}, 8);
    pb_free(&b);
    pb_free(&m);
}

static void test_gzip(void **state)
{
    (void)state;
    struct pb b = {0};
    for (uint64_t i = 0; i < 100000; i++) /* more than one output buffer's worth */
        pb_uint(&b, 1 + i % 7, i * 2654435761u);
    char path[] = "/tmp/culeak-pb-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    assert_int_equal(pb_write_gzip(&b, f), 0);
    assert_int_equal(fclose(f), 0);
    gzFile g = gzopen(path, "rb");
    assert_non_null(g);
    static uint8_t back[2 << 20];
    int n = gzread(g, back, sizeof back);
    gzclose(g);
    unlink(path);
    assert_int_equal(n, (int)b.n);
    assert_memory_equal(back, b.p, b.n);
    pb_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_packed_and_nested),
        cmocka_unit_test(test_gzip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
