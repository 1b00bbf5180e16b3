/* The stream's lock (src/shim/stream_lock.c, compiled in here): mutual exclusion between
 * the owner's plain stores and the other takers (blocking, trying, with a deadline), the
 * bias kept while only the owner records and ended by a second recording thread, and an
 * owner interrupted inside the lock never taking it again (an abrupt end's signal). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>

#include "../../src/shim/stream_lock.c"

#define ROUNDS 20000 /* per taker other than the owner: a system call each while biased */

static struct culeak_slock L;
static volatile uint64_t counter; /* changed only inside the lock, in two steps */
static volatile int inside;

static void critical(void)
{
    assert_int_equal(inside, 0);
    inside = 1;
    uint64_t c = counter;
    for (volatile int i = 0; i < 30; i++) /* widen the window a broken lock would leave */
        ;
    counter = c + 1;
    inside = 0;
}

struct taker {
    int mode; /* 0: lock (not recording), 1: lock (recording), 2: trylock, 3: lock_until */
    int rounds;
    long done;
};

static pthread_barrier_t start;
static int running; /* takers other than the owner still at it */

static void *take_loop(void *arg)
{
    struct taker *t = arg;
    pthread_barrier_wait(&start);
    /* the owner goes on as long as the others do (rounds < 0) */
    for (int i = 0; t->rounds < 0 ? __atomic_load_n(&running, __ATOMIC_ACQUIRE) > 0 : i < t->rounds; i++) {
        enum culeak_held h;
        if (t->mode == 2) {
            h = culeak_slock_trylock(&L);
        } else if (t->mode == 3) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_sec += 10;
            h = culeak_slock_lock_until(&L, &until);
        } else {
            h = culeak_slock_lock(&L, t->mode);
        }
        if (h == CULEAK_HELD_NOT)
            continue;
        critical();
        t->done++;
        culeak_slock_unlock(&L, h);
    }
    if (t->rounds >= 0)
        __atomic_sub_fetch(&running, 1, __ATOMIC_ACQ_REL);
    return NULL;
}

/* The calling thread is the owner; `others` take the lock their way meanwhile. */
static void race(const int *modes, int others)
{
    pthread_t th[4];
    struct taker t[4] = {{0, 0, 0}};
    counter = 0;
    running = others;
    pthread_barrier_init(&start, NULL, (unsigned)others + 1);
    for (int i = 0; i < others; i++) {
        t[i].mode = modes[i];
        t[i].rounds = ROUNDS;
        assert_int_equal(pthread_create(&th[i], NULL, take_loop, &t[i]), 0);
    }
    struct taker me = {1, -1, 0};
    take_loop(&me);
    long total = me.done;
    for (int i = 0; i < others; i++) {
        pthread_join(th[i], NULL);
        total += t[i].done;
    }
    pthread_barrier_destroy(&start);
    assert_int_equal(counter, (uint64_t)total);
    assert_int_equal(L.want, 0);
    assert_int_equal(L.mu, 0);
    assert_int_equal(L.owner_in, 0);
}

static void test_owner_and_flusher(void **s)
{
    const int modes[] = {0, 2, 3};
    culeak_slock_init(&L);
    int biased = L.bias == CULEAK_BIAS_ON;
    race(modes, 3);
    /* nobody else recorded: the bias holds (where membarrier can be used at all) */
    assert_int_equal(L.bias, biased ? CULEAK_BIAS_ON : CULEAK_BIAS_OFF);
}

static void test_second_recorder_ends_bias(void **s)
{
    const int modes[] = {1, 0, 2};
    culeak_slock_init(&L);
    race(modes, 3);
    assert_int_equal(L.bias, CULEAK_BIAS_OFF);
}

static void test_no_bias(void **s)
{
    const int modes[] = {1, 2, 3};
    culeak_slock_init(&L);
    L.bias = CULEAK_BIAS_OFF; /* as without membarrier */
    race(modes, 3);
}

/* An abrupt end on the owner's thread while it holds the lock (a signal handler): it
 * gets CULEAK_HELD_NOT at once, whatever the deadline. */
static void test_owner_interrupted_inside(void **s)
{
    culeak_slock_init(&L);
    if (L.bias != CULEAK_BIAS_ON)
        skip();
    enum culeak_held h = culeak_slock_lock(&L, 1);
    assert_int_equal(h, CULEAK_HELD_OWNER);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 3600;
    assert_int_equal(culeak_slock_lock_until(&L, &until), CULEAK_HELD_NOT);
    culeak_slock_unlock(&L, h);
    h = culeak_slock_lock_until(&L, &until);
    assert_int_not_equal(h, CULEAK_HELD_NOT);
    culeak_slock_unlock(&L, h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_owner_and_flusher),
        cmocka_unit_test(test_second_recorder_ends_bias),
        cmocka_unit_test(test_no_bias),
        cmocka_unit_test(test_owner_interrupted_inside),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
