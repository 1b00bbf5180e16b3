/* The stream's lock: held for a few hundred instructions (never across I/O or a wait),
 * except while a new stack's nodes are made.
 *
 * It is a spin lock (one atomic exchange to take it, a store to give it back), biased to
 * the thread that started the stream: while that thread (the owner) is the only one that
 * records events, it takes the lock with plain stores and no atomic operation. It says
 * it is inside (owner_in), then looks whether anyone wants the lock (want). Anyone else
 * (the flush thread, a console command, an abrupt end) first counts itself in want, then
 * makes every running thread of the process pass a full memory barrier (membarrier(2),
 * MEMBARRIER_CMD_PRIVATE_EXPEDITED), then waits for owner_in to be 0 and takes the spin
 * lock: after the barrier, either the owner is seen inside, or the owner sees want and
 * takes the spin lock like anyone. The barrier costs microseconds: the flush thread pays
 * it once per tick, and the first event recorded by another thread ends the bias for
 * good (the owner then takes the spin lock too). Without membarrier there is no bias.
 *
 * A holder that was preempted is waited for with sched_yield; the flush thread waits
 * about a microsecond at most (then tries again at its next tick). */
#ifndef CULEAK_STREAM_LOCK_H
#define CULEAK_STREAM_LOCK_H

#include "shim.h"

#include <time.h>

enum { CULEAK_BIAS_OFF = 0, CULEAK_BIAS_ON, CULEAK_BIAS_ENDING };

/* How the lock was taken, for culeak_slock_unlock. */
enum culeak_held {
    CULEAK_HELD_NOT = -1,  /* not taken (trylock, lock_until) */
    CULEAK_HELD_OWNER = 0, /* the owner's plain stores */
    CULEAK_HELD_SPIN,      /* the spin lock */
    CULEAK_HELD_WANT,      /* the spin lock, counted in want */
};

struct culeak_slock {
    int mu;            /* the spin lock */
    int bias;          /* CULEAK_BIAS_* */
    const void *owner; /* the owner's token (culeak_slock_token) */
    int owner_in;      /* the owner holds the lock by its plain stores */
    unsigned want;     /* others taking the lock while biased */
};

extern CULEAK_TLS char culeak_slock_token; /* its address names the thread */

/* Biased to the calling thread where membarrier(2) can be used. */
void culeak_slock_init(struct culeak_slock *l);
/* records: the caller records an event or mark (its first one in a thread other than the
 * owner ends the bias). */
enum culeak_held culeak_slock_lock_slow(struct culeak_slock *l, int records);
/* Never waits for the lock: CULEAK_HELD_NOT when it is busy. */
enum culeak_held culeak_slock_trylock(struct culeak_slock *l);
/* Waits until `until` (CLOCK_REALTIME) at most; CULEAK_HELD_NOT when it passed. An abrupt
 * end may come while this very thread holds the lock (a signal): it never waits forever. */
enum culeak_held culeak_slock_lock_until(struct culeak_slock *l, const struct timespec *until);
void culeak_slock_unlock_slow(struct culeak_slock *l, enum culeak_held how);

static inline enum culeak_held culeak_slock_lock(struct culeak_slock *l, int records)
{
    if (__atomic_load_n(&l->owner, __ATOMIC_RELAXED) == &culeak_slock_token &&
        __atomic_load_n(&l->bias, __ATOMIC_RELAXED) == CULEAK_BIAS_ON) {
        __atomic_store_n(&l->owner_in, 1, __ATOMIC_RELAXED);
        /* No fence: the others' membarrier stands for it. The bias is read again: the
         * thread may have stopped between the first reading and the store while
         * another one ended the bias. */
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        if (__atomic_load_n(&l->want, __ATOMIC_RELAXED) == 0 &&
            __atomic_load_n(&l->bias, __ATOMIC_RELAXED) == CULEAK_BIAS_ON) {
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
            return CULEAK_HELD_OWNER;
        }
        __atomic_store_n(&l->owner_in, 0, __ATOMIC_RELEASE);
    }
    return culeak_slock_lock_slow(l, records);
}

static inline void culeak_slock_unlock(struct culeak_slock *l, enum culeak_held how)
{
    if (how == CULEAK_HELD_OWNER) {
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        __atomic_store_n(&l->owner_in, 0, __ATOMIC_RELEASE);
    } else {
        culeak_slock_unlock_slow(l, how);
    }
}

#endif
