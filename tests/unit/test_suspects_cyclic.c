/* Growth suspects and cycles: a site whose live bytes climb with the batch and fall back to
 * their least (variable-length batches) is no suspect while it only returns to an earlier
 * high; a site that falls back and then climbs past its earlier high is one again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "model/model.h"
#include "stream_builder.h"
#include "model_fixture.h"
#include "model/suspects.h"

#include <stdio.h>
#include <string.h>

#define APP "/opt/app/bin/app"
#define CUDART "/usr/lib/libcudart.so.12"
#define APP_BASE 0x555500000000ull
#define CUDART_BASE 0x7f0000000000ull
#define MiB (1ull << 20)

/* Two sites, each reached by one stack: BATCH (stack 2, app+0x200), CACHE (stack 4,
 * app+0x300). */
enum { BATCH = 2, CACHE = 4 };

static struct sb *prefix(void)
{
    struct sb *b = sb_new();
    sb_hello(b, 100, APP, NULL);
    sb_module(b, APP, APP_BASE, 0, 0x10000);
    sb_module(b, CUDART, CUDART_BASE, 0, 0x100000);
    sb_frame(b, 1, 0, APP_BASE + 0x200);
    sb_frame(b, 2, 1, CUDART_BASE + 0x50);
    sb_frame(b, 3, 0, APP_BASE + 0x300);
    sb_frame(b, 4, 3, CUDART_BASE + 0x50);
    return b;
}

struct job {
    struct sb *b;
    uint64_t seq, addr, batch, cache[64];
    int iter, ncache;
};

static void mark(struct job *j)
{
    char label[32];
    snprintf(label, sizeof label, "iteration %d", j->iter++);
    sb_mark(j->b, ++j->seq, label);
}

/* The batch's input tensor: the new one, then the old one freed (a name rebound). */
static void batch_of(struct job *j, uint64_t bytes)
{
    uint64_t old = j->batch;
    sb_alloc(j->b, ++j->seq, BATCH, j->batch = j->addr += 0x10000000, bytes);
    if (old)
        sb_free_dev(j->b, ++j->seq, BATCH, old);
}

static int is_suspect(struct model *m, uint64_t app_off)
{
    struct model_suspects s;
    assert_int_equal(model_suspects(m, MODEL_ALL, 1, &s), 0);
    char name[32];
    snprintf(name, sizeof name, "app+0x%llx", (unsigned long long)app_off);
    int found = 0;
    for (size_t i = 0; i < s.n; i++)
        found |= strstr(s.v[i].text, name) != NULL;
    model_suspects_free(&s);
    return found;
}

/* Sequence lengths 64, 128, ... 1024, three times: the input tensor is 1 to 16 MiB, rising
 * at every mark of the last ramp. */
static void test_batch_ramps_are_no_suspect(void **state)
{
    (void)state;
    struct model *m = new_model();
    struct job j = {.b = prefix(), .addr = 0x7000000000ull};
    for (int epoch = 0; epoch < 3; epoch++)
        for (uint64_t k = 1; k <= 16; k++) {
            batch_of(&j, k * MiB);
            mark(&j);
        }
    assert_int_equal(load(m, j.b), 0);
    assert_false(is_suspect(m, 0x200));
    sb_free(j.b);
    model_free(m);
}

/* A cache that grows by 1 MiB an iteration, is cleared once after 12, and grows on: no
 * suspect while it climbs back to 12 MiB, one again past it. */
static void test_new_highs_after_a_fall_are_growth(void **state)
{
    (void)state;
    struct job j = {.b = prefix(), .addr = 0x7000000000ull};
    int verdict[30] = {0};
    for (int i = 0; i < 30; i++) {
        if (i == 12)
            while (j.ncache)
                sb_free_dev(j.b, ++j.seq, CACHE, j.cache[--j.ncache]);
        sb_alloc(j.b, ++j.seq, CACHE, j.cache[j.ncache++] = j.addr += 0x10000000, MiB);
        mark(&j);
        struct model *m = new_model();
        assert_int_equal(load(m, j.b), 0);
        verdict[i] = is_suspect(m, 0x300);
        model_free(m);
    }
    assert_true(verdict[11]);  /* 12 MiB: rose at every mark */
    assert_false(verdict[23]); /* back at 12 MiB after the clear */
    assert_true(verdict[24]);  /* 13 MiB: higher than ever */
    assert_true(verdict[29]);
    sb_free(j.b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batch_ramps_are_no_suspect),
        cmocka_unit_test(test_new_highs_after_a_fall_are_growth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
