/* Which module an address is in, as MODULES records come: a module loaded where others
 * were owns those addresses from then on, a repeated map changes nothing, and many records
 * (a process that loads thousands of libraries) cost no sort of every range per record
 * (the test counts the elements the model's qsort calls are given). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "model/model.h"
#include "stream_builder.h"
#include "model_fixture.h"
#include "xorshift.h"

static size_t sorted_elements;

/* Every qsort of the program, counted, then done by libc's. */
void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    static void (*real)(void *, size_t, size_t, int (*)(const void *, const void *));
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "qsort");
    sorted_elements += n;
    real(base, n, size, cmp);
}

/* The module of ip, through a one-frame stack (frame id) and an allocation there. */
static const char *module_at(struct model *m, uint64_t stack)
{
    struct model_frame f[4];
    size_t n = model_stack_frames(m, 0, stack, f, 4);
    assert_true(n >= 1);
    return f[0].module;
}

static void test_newer_module_owns_addresses(void **state)
{
    struct model *m = new_model();
    struct sb *b = sb_new();
    sb_hello(b, 100, "/bin/app", NULL);
    sb_module(b, "/lib/a.so", 0x10000, 0, 0x10000);
    sb_module(b, "/lib/b.so", 0x30000, 0, 0x10000);
    sb_module(b, "/lib/c.so", 0x18000, 0, 0x20000); /* over the end of a and the start of b */
    sb_module(b, "/lib/d.so", 0x50000, 0, 0x10000);
    sb_module(b, "/lib/d.so", 0x50000, 0, 0x10000); /* a map repeated */
    sb_module(b, "/lib/e.so", 0x48000, 0, 0x1000);  /* between c and d, touching neither */
    sb_frame(b, 1, 0, 0x11000);
    sb_frame(b, 2, 0, 0x19000);
    sb_frame(b, 3, 0, 0x37000);
    sb_frame(b, 4, 0, 0x52000);
    sb_frame(b, 5, 0, 0x48800);
    sb_frame(b, 6, 0, 0x3a000);
    sb_alloc(b, 1, 1, 0x1000, 64);
    assert_int_equal(load(m, b), MODEL_FEED_OK);
    assert_string_equal(module_at(m, 1), "?"); /* a was unloaded under c */
    assert_string_equal(module_at(m, 2), "/lib/c.so");
    assert_string_equal(module_at(m, 3), "/lib/c.so");
    assert_string_equal(module_at(m, 4), "/lib/d.so");
    assert_string_equal(module_at(m, 5), "/lib/e.so");
    assert_string_equal(module_at(m, 6), "?"); /* b's end, gone with b */
    sb_free(b);
    model_free(m);
}

#define RECORDS 4000

static void test_many_records_sort_nothing_per_record(void **state)
{
    struct model *m = new_model();
    struct sb *b = sb_new();
    sb_hello(b, 100, "/bin/app", NULL);
    xorshift_reset();
    uint64_t last = 0;
    for (int i = 0; i < RECORDS; i++) {
        char path[64];
        snprintf(path, sizeof path, "/lib/l%d.so", i);
        last = (next() % 1000000) << 16; /* distinct 64 KiB slots, in no order */
        sb_module(b, path, last, 0, 0x10000);
    }
    sb_frame(b, 1, 0, last + 0x100);
    sb_alloc(b, 1, 1, 0x1000, 64);
    sorted_elements = 0;
    assert_int_equal(load(m, b), MODEL_FEED_OK);
    char want[64];
    snprintf(want, sizeof want, "/lib/l%d.so", RECORDS - 1);
    assert_string_equal(module_at(m, 1), want);
    if (sorted_elements >= 10 * RECORDS)
        fail_msg("%zu elements sorted for %d MODULES records", sorted_elements, RECORDS);
    sb_free(b);
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_newer_module_owns_addresses),
        cmocka_unit_test(test_many_records_sort_nothing_per_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
