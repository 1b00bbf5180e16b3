/* The stream's lock, biased to the thread that started the stream: stream_lock.h says how. */
#include "stream_lock.h"

#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

CULEAK_TLS char culeak_slock_token;

static int membarrier(int cmd) { return (int)syscall(SYS_membarrier, cmd, 0, 0); }

void culeak_slock_init(struct culeak_slock *l)
{
    l->mu = 0;
    l->owner_in = 0;
    l->want = 0;
    l->owner = &culeak_slock_token;
    /* registered per process (a forked child registers again when its stream opens) */
    int cmds = membarrier(MEMBARRIER_CMD_QUERY);
    int usable = cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
                 membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
    l->bias = usable ? CULEAK_BIAS_ON : CULEAK_BIAS_OFF;
}

static int passed(const struct timespec *until)
{
    if (!until)
        return 0;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return now.tv_sec > until->tv_sec || (now.tv_sec == until->tv_sec && now.tv_nsec >= until->tv_nsec);
}

static int spin_try(int *mu)
{
    return !__atomic_load_n(mu, __ATOMIC_RELAXED) && !__atomic_exchange_n(mu, 1, __ATOMIC_ACQUIRE);
}

/* How long a taker that must not wait (the flush thread) looks for the lock to be free:
 * about a microsecond, one event's work. */
#define TRY_SPINS 200

/* Until *word is 0; mode 0: however long, 1: TRY_SPINS, 2: until `until`. -1: gave up. */
static int wait_zero(const int *word, int mode, const struct timespec *until)
{
    for (int i = 0; __atomic_load_n(word, __ATOMIC_ACQUIRE); i++) {
        if (mode == 1 && i >= TRY_SPINS)
            return -1;
        if (mode == 2 && passed(until))
            return -1;
        if (i < 100 || mode == 1)
            __builtin_ia32_pause();
        else
            sched_yield();
    }
    return 0;
}

/* The spin lock (modes as wait_zero's). */
static int spin(int *mu, int mode, const struct timespec *until)
{
    while (!spin_try(mu))
        if (wait_zero(mu, mode, until) < 0)
            return -1;
    return 0;
}

/* Another thread than the owner, while the lock may be biased: counted in want, the
 * barrier, the owner out, then the spin lock (modes as spin's). */
static enum culeak_held wanting(struct culeak_slock *l, int mode, const struct timespec *until)
{
    __atomic_add_fetch(&l->want, 1, __ATOMIC_SEQ_CST);
    membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
    if (wait_zero(&l->owner_in, mode, until) == 0 && spin(&l->mu, mode, until) == 0)
        return CULEAK_HELD_WANT;
    __atomic_sub_fetch(&l->want, 1, __ATOMIC_RELEASE);
    return CULEAK_HELD_NOT;
}

static enum culeak_held take(struct culeak_slock *l, int records, int mode, const struct timespec *until)
{
    int mine = __atomic_load_n(&l->owner, __ATOMIC_RELAXED) == &culeak_slock_token;
    int bias = __atomic_load_n(&l->bias, __ATOMIC_ACQUIRE);
    if (mine || bias == CULEAK_BIAS_OFF) {
        /* the owner in a signal handler that interrupted its own holding: never */
        if (mine && mode == 2 && __atomic_load_n(&l->owner_in, __ATOMIC_RELAXED))
            return CULEAK_HELD_NOT;
        return spin(&l->mu, mode, until) == 0 ? CULEAK_HELD_SPIN : CULEAK_HELD_NOT;
    }
    int on = CULEAK_BIAS_ON;
    if (records && mode == 0 &&
        __atomic_compare_exchange_n(&l->bias, &on, CULEAK_BIAS_ENDING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        /* a second thread records events: the bias ends, once the owner is out */
        enum culeak_held h = wanting(l, 0, NULL);
        __atomic_store_n(&l->bias, CULEAK_BIAS_OFF, __ATOMIC_RELEASE);
        return h;
    }
    return wanting(l, mode, until);
}

enum culeak_held culeak_slock_lock_slow(struct culeak_slock *l, int records) { return take(l, records, 0, NULL); }

enum culeak_held culeak_slock_trylock(struct culeak_slock *l) { return take(l, 0, 1, NULL); }

enum culeak_held culeak_slock_lock_until(struct culeak_slock *l, const struct timespec *until)
{
    return take(l, 0, 2, until);
}

void culeak_slock_unlock_slow(struct culeak_slock *l, enum culeak_held how)
{
    if (how == CULEAK_HELD_NOT)
        return;
    __atomic_store_n(&l->mu, 0, __ATOMIC_RELEASE);
    if (how == CULEAK_HELD_WANT)
        __atomic_sub_fetch(&l->want, 1, __ATOMIC_RELEASE);
}
