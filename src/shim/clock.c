/* The events' clock: CLOCK_MONOTONIC nanoseconds. Read through the vDSO it costs about
 * as much as the rest of an event's encoding, so where the CPU's time-stamp counter is
 * invariant, events read the counter and scale it. The scale is anchored to
 * CLOCK_MONOTONIC at the first reading (the stream's start) and again at every tick of
 * the flush thread (culeak_clock_calibrate), with the rate measured from the first
 * reading on. Until CALIBRATE_SPAN_NS has passed since the first reading (too short a
 * span for a precise rate), and without an invariant counter, events read
 * CLOCK_MONOTONIC; the first event past that span calibrates the scale itself, so a
 * short program does not wait for the flush thread's ticks. */
#include "shim.h"

#include <cpuid.h>
#include <time.h>
#include <x86intrin.h>

/* 1 ms: clock readings a few tens of ns apart give a rate within about 1e-5, a drift
 * under 0.2 us before the flush thread's next tick anchors the scale again. */
#define CALIBRATE_SPAN_NS 1000000u

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ns = ns0 + (tsc - tsc0) * mult / 2^32, published under a sequence lock; mult 0: not
 * calibrated. Writers (the flush thread, or an event's thread before the first
 * calibration) take cal_writer first, never waiting for it. */
static unsigned cal_seq;
static uint64_t cal_tsc0, cal_ns0, cal_mult;
static int cal_writer;
static uint64_t first_tsc, first_ns; /* under cal_writer */
static int tsc_usable = -1;          /* written under cal_writer */

static int invariant_tsc(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
        return 0;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1;
}

/* With cal_writer held: anchors the scale at (ns, tsc), read together. */
static void calibrate_at(uint64_t ns, uint64_t tsc)
{
    if (tsc_usable < 0)
        __atomic_store_n(&tsc_usable, invariant_tsc(), __ATOMIC_RELAXED);
    if (!tsc_usable)
        return;
    if (!first_tsc) {
        first_tsc = tsc;
        first_ns = ns;
        return;
    }
    if (tsc <= first_tsc || ns < first_ns + CALIBRATE_SPAN_NS)
        return;
    uint64_t mult = (uint64_t)((((unsigned __int128)(ns - first_ns)) << 32) / (tsc - first_tsc));
    __atomic_add_fetch(&cal_seq, 1, __ATOMIC_ACQ_REL);
    __atomic_store_n(&cal_tsc0, tsc, __ATOMIC_RELAXED);
    __atomic_store_n(&cal_ns0, ns, __ATOMIC_RELAXED);
    __atomic_store_n(&cal_mult, mult, __ATOMIC_RELAXED);
    __atomic_add_fetch(&cal_seq, 1, __ATOMIC_RELEASE);
}

/* Reads CLOCK_MONOTONIC and the counter together and anchors the scale there, unless
 * another thread is at it; returns the monotonic time. */
static uint64_t anchor(void)
{
    uint64_t ns = monotonic_ns();
    if (__atomic_load_n(&tsc_usable, __ATOMIC_RELAXED) == 0)
        return ns;
    if (!__atomic_load_n(&cal_writer, __ATOMIC_RELAXED) && !__atomic_exchange_n(&cal_writer, 1, __ATOMIC_ACQUIRE)) {
        calibrate_at(ns, __rdtsc());
        __atomic_store_n(&cal_writer, 0, __ATOMIC_RELEASE);
    }
    return ns;
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
        return monotonic_ns();
    }
    return mult ? monotonic_ns() : anchor();
}

void culeak_clock_calibrate(void) { anchor(); }

void culeak_clock_fork_child(void)
{
    /* A thread of the parent that is gone here may have been calibrating: the scale it
     * was writing is started over. (Otherwise the parent's scale holds here too: the
     * same counter, the same clock.) */
    if (!__atomic_load_n(&cal_writer, __ATOMIC_RELAXED))
        return;
    __atomic_store_n(&cal_mult, 0, __ATOMIC_RELAXED);
    if (__atomic_load_n(&cal_seq, __ATOMIC_RELAXED) & 1)
        __atomic_add_fetch(&cal_seq, 1, __ATOMIC_RELEASE);
    first_tsc = first_ns = 0;
    __atomic_store_n(&cal_writer, 0, __ATOMIC_RELEASE);
}
