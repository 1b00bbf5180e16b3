/* What the benches time with: seconds on a clock, and an order for sorting timings (the
 * median and range of repeated figures). */
#ifndef CULEAK_BENCH_TIME_H
#define CULEAK_BENCH_TIME_H

#include <time.h>

/* Seconds on clock id: CLOCK_MONOTONIC for wall time, CLOCK_THREAD_CPUTIME_ID or
 * CLOCK_PROCESS_CPUTIME_ID for CPU time (less noisy on a busy machine). */
static inline double bench_seconds(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline double now(void) { return bench_seconds(CLOCK_MONOTONIC); }

/* qsort's order for doubles, smallest first */
static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
