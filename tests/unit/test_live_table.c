/* The live allocations' table (src/model/live_table.c) against a plain list: entries put
 * in and taken out at random, through the index's growth, are each found while they live
 * and never after, and iteration sees exactly the live ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "model/live_table.h"
#include "xorshift.h"

#define N 20000

static void test_against_a_list(void **state)
{
    (void)state;
    struct live_table t;
    live_table_init(&t);
    static uint64_t addr[N];
    static int proc[N], live[N];
    for (int i = 0; i < N; i++) {
        /* addresses that share most bits, as allocations do; some numbers in two processes */
        addr[i] = 0x7f0000000000ull + (next() % (N / 2)) * 4096;
        proc[i] = (int)(next() % 3);
        live[i] = 0;
    }
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) {
            int in = live_table_find(&t, proc[i], 1, addr[i]) != NULL;
            if (!in && next() % 3 != 0) {
                struct live_entry e = {.addr = addr[i], .size = (uint64_t)i, .seq_proc = (uint64_t)proc[i], .space = 1};
                assert_non_null(live_table_insert(&t, &e));
            } else if (in && next() % 2) {
                live_table_remove(&t, live_table_find(&t, proc[i], 1, addr[i]));
            }
        }
        /* each key the list says lives is found, and only those */
        size_t n = 0;
        for (int i = 0; i < N; i++)
            live[i] = 0;
        for (size_t k = 0; k < t.n; k++) {
            const struct live_entry *e = &t.entries[k];
            struct live_entry *f = live_table_find(&t, live_entry_proc(e), e->space, e->addr);
            assert_ptr_equal(f, e);
            live[e->size] = 1;
            n++;
        }
        for (int i = 0; i < N; i++) {
            struct live_entry *f = live_table_find(&t, proc[i], 1, addr[i]);
            if (f)
                assert_true(live[f->size]);
        }
        assert_int_equal(n, t.n);
    }
    /* everything taken out: nothing is found */
    while (t.n)
        live_table_remove(&t, &t.entries[next() % t.n]);
    for (int i = 0; i < N; i++)
        assert_null(live_table_find(&t, proc[i], 1, addr[i]));
    live_table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_a_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
