/* The pickle writer and the restricted unpickler (src/common/pickle_write.c,
 * pickle_read.c): what Python's pickle wrote (protocols 2 to 5) reads back value for
 * value; what the writer writes reads back, its lists batched and its keys from the memo;
 * every opcode that imports or calls is refused with its name and offset, as are deep
 * nesting, a cut-off pickle and a memo key never put. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/pickle_read.h"
#include "common/pickle_write.h"
#include "pickle_samples.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_sample(const uint8_t *buf, size_t n, int has_bytes)
{
    struct pkdoc d;
    char err[256] = "";
    assert_int_equal(pkr_load(&d, buf, n, err, sizeof err), 0);
    const struct pkv *a = pkv_get(d.root, "a"), *r = pkv_get(d.root, "r");
    struct pkv *const *it;
    size_t k = pkv_items(a, &it);
    assert_int_equal(k, 10 + has_bytes);
    assert_ptr_equal(a, r); /* the memo gives the same list */
    assert_int_equal(pkv_int(it[0], 0), 1);
    assert_int_equal(pkv_int(it[1], 0), -2);
    assert_int_equal(pkv_int(it[2], 0), (int64_t)1 << 40);
    assert_int_equal(pkv_int(it[3], 0), -((int64_t)1 << 40));
    assert_true(pkv_is(it[4], "x\xc3\xa9"));
    size_t i = 5;
    if (has_bytes) {
        assert_int_equal(it[i]->type, PKV_BYTES);
        assert_true(pkv_is(it[i++], "y"));
    }
    assert_true(pkv_num(it[i++], 0) == 1.5);
    assert_int_equal(it[i]->type, PKV_BOOL);
    assert_int_equal(pkv_int(it[i++], 0), 1);
    assert_int_equal(it[i++]->type, PKV_NONE);
    struct pkv *const *t;
    assert_int_equal(it[i]->type, PKV_TUPLE);
    assert_int_equal(pkv_items(it[i++], &t), 2);
    assert_int_equal(pkv_int(t[1], 0), 2);
    assert_int_equal(it[i]->type, PKV_BIGINT); /* 2**64 does not fit */
    const struct pkv *s = pkv_get(d.root, "s");
    assert_int_equal(s->type, PKV_STR);
    assert_int_equal(s->n, 300);
    assert_null(pkv_get(d.root, "nope"));
    pkr_free(&d);
}

static void test_python_pickles(void **state)
{
    (void)state;
    check_sample(pickle_proto2, sizeof pickle_proto2, 0);
    check_sample(pickle_proto3, sizeof pickle_proto3, 1);
    check_sample(pickle_proto4, sizeof pickle_proto4, 1);
    check_sample(pickle_proto5, sizeof pickle_proto5, 1);
}

static void test_round_trip(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct pkw w;
    static const char key[] = "addr";
    pkw_begin(&w, f);
    pkw_dict(&w);
    pkw_str(&w, "list");
    pkw_list(&w);
    for (int i = 0; i < 2500; i++) { /* three batches */
        pkw_dict(&w);
        pkw_key(&w, key);
        pkw_uint(&w, (uint64_t)i * 1000003);
        pkw_dict_end(&w);
    }
    pkw_list_end(&w);
    pkw_str(&w, "big");
    pkw_uint(&w, UINT64_C(0x80000000000000ff)); /* 9 bytes: positive */
    pkw_str(&w, "neg");
    pkw_int(&w, INT64_MIN);
    pkw_str(&w, "bad");
    pkw_strn(&w, "a\xffz", 3);
    pkw_str(&w, "f");
    pkw_float(&w, -0.25);
    pkw_str(&w, "t");
    pkw_tuple(&w);
    pkw_bool(&w, 0);
    pkw_none(&w);
    pkw_int(&w, -7);
    pkw_tuple_end(&w);
    pkw_dict_end(&w);
    pkw_end(&w);
    fclose(f);
    assert_int_equal(w.bytes, len);
    assert_int_equal(w.overflow, 0);
    /* the batches: 2 APPENDS closing a batch ("e(") and the last one */
    size_t batches = 0;
    for (size_t i = 0; i + 1 < len; i++)
        batches += buf[i] == 'e' && buf[i + 1] == '(' && i > 0 && buf[i - 1] == 'u';
    assert_int_equal(batches, 2);

    struct pkdoc d;
    char err[256] = "";
    assert_int_equal(pkr_load(&d, (const uint8_t *)buf, len, err, sizeof err), 0);
    struct pkv *const *it;
    assert_int_equal(pkv_items(pkv_get(d.root, "list"), &it), 2500);
    assert_int_equal(pkv_int(pkv_get(it[2499], "addr"), 0), 2499LL * 1000003);
    assert_int_equal(pkv_get(d.root, "big")->type, PKV_BIGINT);
    assert_int_equal(pkv_int(pkv_get(d.root, "neg"), 0), INT64_MIN);
    assert_true(pkv_is(pkv_get(d.root, "bad"), "a\xef\xbf\xbdz"));
    assert_true(pkv_num(pkv_get(d.root, "f"), 0) == -0.25);
    struct pkv *const *t;
    assert_int_equal(pkv_items(pkv_get(d.root, "t"), &t), 3);
    assert_int_equal(t[0]->type, PKV_BOOL);
    assert_int_equal(t[1]->type, PKV_NONE);
    assert_int_equal(pkv_int(t[2], 0), -7);
    pkr_free(&d);
    free(buf);
}

static void refused(const char *pickle, size_t n, const char *want)
{
    struct pkdoc d;
    char err[256] = "";
    assert_int_equal(pkr_load(&d, (const uint8_t *)pickle, n, err, sizeof err), -1);
    if (!strstr(err, want))
        fail_msg("'%s' does not say '%s'", err, want);
    assert_null(d.root);
}

/* a literal, without its terminating NUL */
#define REFUSED(lit, want) refused(lit, sizeof lit - 1, want)

static void test_refused(void **state)
{
    (void)state;
    /* pickle.dumps of an object whose __reduce__ is (os.system, ("true",)) */
    static const char reduce2[] = "\x80\x02" "cposix\nsystem\nq\x00X\x04\x00\x00\x00trueq\x01\x85q\x02Rq\x03.";
    refused(reduce2, sizeof reduce2 - 1, "opcode GLOBAL (0x63) refused");
    refused(reduce2, sizeof reduce2 - 1, "at offset 2");
    static const char reduce4[] = "\x80\x04\x95\x20\x00\x00\x00\x00\x00\x00\x00\x8c\x05posix\x94\x8c\x06system\x94"
                                  "\x93\x94\x8c\x04true\x94\x85\x94R\x94.";
    refused(reduce4, sizeof reduce4 - 1, "opcode STACK_GLOBAL (0x93) refused");
    refused(reduce4, sizeof reduce4 - 1, "at offset 28");
    REFUSED("\x80\x02}R.", "REDUCE");       /* a call on whatever is there */
    REFUSED("\x80\x02}}b.", "BUILD");
    REFUSED("(iposix\nsystem\n.", "INST");
    REFUSED("\x80\x02(o.", "OBJ");
    REFUSED("\x80\x04\x8f.", "EMPTY_SET");
    REFUSED("\x80\x02\x82\x01.", "EXT1");
    REFUSED("\x80\x02X\x01\x00\x00\x00" "aQ.", "BINPERSID");
    REFUSED("\x80\x02\xff.", "unknown opcode 0xff");
    REFUSED("\x80\x06}.", "protocol 6");
}

static void test_bounds(void **state)
{
    (void)state;
    char deep[PKR_MAX_DEPTH + 8];
    memset(deep, '(', sizeof deep);
    refused(deep, sizeof deep, "nested deeper than");
    REFUSED("\x80\x02]q\x00", "no STOP");
    REFUSED("\x80\x02X\xff\x00\x00\x00" "ab.", "truncated");
    REFUSED("\x80\x02h\x05.", "memo key 5 not found");
    REFUSED("\x80\x02u.", "no mark");
    REFUSED("\x80\x02K\x01(K\x02u.", "not a dict");
    REFUSED("\x80\x02K\x01K\x02.", "STOP with 2 values");
    REFUSED("\x80\x02.", "STOP with 0 values");
    REFUSED("\x80\x02" "a.", "stack underflow");
    /* a list that holds itself reads (the walker bounds its work) */
    struct pkdoc d;
    char err[256];
    assert_int_equal(pkr_load(&d, (const uint8_t *)"\x80\x02]q\x00h\x00" "a.", 9, err, sizeof err), 0);
    struct pkv *const *it;
    assert_int_equal(pkv_items(d.root, &it), 1);
    assert_ptr_equal(it[0], d.root);
    pkr_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_python_pickles),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
