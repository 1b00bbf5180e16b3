/* The events' clock: CLOCK_MONOTONIC nanoseconds. Read through the vDSO it costs about
 * as much as the rest of an event's encoding, so where the CPU's time-stamp counter is
 * invariant, events read the counter and scale it: the flush thread anchors the scale
 * to CLOCK_MONOTONIC at every tick (culeak_clock_calibrate), with the rate measured
 * over the whole run. Until the first two ticks, and without an invariant counter,
 * events read CLOCK_MONOTONIC. */
#include "shim.h"

#include <cpuid.h>
#include <time.h>
#include <x86intrin.h>

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ns = ns0 + (tsc - tsc0) * mult / 2^32, published under a sequence lock (one writer:
 * the flush thread); mult 0: not calibrated. */
static unsigned cal_seq;
static uint64_t cal_tsc0, cal_ns0, cal_mult;
static int tsc_usable = -1;

static int invariant_tsc(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1;
}

uint64_t culeak_now_ns(void)
{
    unsigned s = __atomic_load_n(&cal_seq, __ATOMIC_ACQUIRE);
    uint64_t tsc0 = __atomic_load_n(&cal_tsc0, __ATOMIC_RELAXED);
    uint64_t ns0 = __atomic_load_n(&cal_ns0, __ATOMIC_RELAXED);
    uint64_t mult = __atomic_load_n(&cal_mult, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (!(s & 1) && mult && __atomic_load_n(&cal_seq, __ATOMIC_RELAXED) == s) {
        uint64_t tsc = __rdtsc();
        if (tsc >= tsc0 && tsc - tsc0 < (UINT64_C(1) << 40))
            return ns0 + (uint64_t)(((unsigned __int128)(tsc - tsc0) * mult) >> 32);
    }
    return monotonic_ns();
}

void culeak_clock_calibrate(void)
{
    static uint64_t first_tsc, first_ns;
    if (tsc_usable < 0)
        tsc_usable = invariant_tsc();
    if (!tsc_usable)
        return;
    uint64_t ns = monotonic_ns(), tsc = __rdtsc();
    if (!first_tsc) {
        first_tsc = tsc;
        first_ns = ns;
        return;
    }
    if (tsc <= first_tsc || ns <= first_ns)
        return;
    uint64_t mult = (uint64_t)((((unsigned __int128)(ns - first_ns)) << 32) / (tsc - first_tsc));
    __atomic_add_fetch(&cal_seq, 1, __ATOMIC_ACQ_REL);
    __atomic_store_n(&cal_tsc0, tsc, __ATOMIC_RELAXED);
    __atomic_store_n(&cal_ns0, ns, __ATOMIC_RELAXED);
    __atomic_store_n(&cal_mult, mult, __ATOMIC_RELAXED);
    __atomic_add_fetch(&cal_seq, 1, __ATOMIC_RELEASE);
}
