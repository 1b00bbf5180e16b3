/* Pseudo-random numbers for tests and benches: xorshift64 from a fixed seed, so every
 * run makes the same rows and events. xorshift_reset starts the sequence again. */
#ifndef CULEAK_TESTS_XORSHIFT_H
#define CULEAK_TESTS_XORSHIFT_H

#include <stdint.h>

#define XORSHIFT_SEED 88172645463325252ull

static uint64_t rng = XORSHIFT_SEED;

static inline void xorshift_reset(void) { rng = XORSHIFT_SEED; }

static inline uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

#endif
