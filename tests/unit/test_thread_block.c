/* The shim's per-thread blocks (src/shim/thread_block.c, compiled in here): a thread's
 * block is the same at each ask and zeroed when made; its blocks are freed when it ends;
 * a block asked for again by a later key destructor (as libraries free per-thread handles
 * at thread exit, through the shim) is a fresh one, never the freed one, and is freed in
 * turn. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <malloc.h>
#include <pthread.h>
#include <string.h>

#include "../../src/shim/thread_block.c"

#define BLOCK 65536

static pthread_key_t late_key;
static int late_fresh, late_made;

/* A key made after the blocks' own: its destructor runs after theirs. */
static void late(void *unused)
{
    (void)unused;
    unsigned char *p = culeak_thread_block(CULEAK_TB_WALKER, BLOCK);
    late_made += p != NULL;
    int zero = p != NULL;
    for (size_t i = 0; p && i < BLOCK; i++)
        zero &= p[i] == 0;
    late_fresh += zero;
}

static void *thread_main(void *arg)
{
    int *ok = arg;
    unsigned char *a = culeak_thread_block(CULEAK_TB_WALKER, BLOCK);
    unsigned char *b = culeak_thread_block(CULEAK_TB_PY_SEEN, BLOCK);
    *ok = a && b && a != b && culeak_thread_block(CULEAK_TB_WALKER, BLOCK) == a && a[0] == 0 && a[BLOCK - 1] == 0;
    if (a)
        memset(a, 0xab, BLOCK);
    pthread_setspecific(late_key, ok);
    return NULL;
}

static void test_blocks_per_thread(void **state)
{
    (void)state;
    assert_non_null(culeak_thread_block(CULEAK_TB_TREE_PREFIX, 16)); /* the blocks' key first */
    assert_int_equal(pthread_key_create(&late_key, late), 0);
    size_t before = mallinfo2().uordblks;
    for (int i = 0; i < 50; i++) {
        int ok = 0;
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, thread_main, &ok), 0);
        pthread_join(t, NULL);
        assert_true(ok);
    }
    size_t after = mallinfo2().uordblks;
    assert_int_equal(late_made, 50);
    assert_int_equal(late_fresh, 50); /* not the freed block, which held 0xab */
    /* 50 threads made 150 blocks of 64 KiB: none is left */
    if (after > before + BLOCK)
        fail_msg("%zu bytes more in use after 50 threads ended", after - before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocks_per_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
