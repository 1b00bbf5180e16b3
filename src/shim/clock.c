/* The events' clock: CLOCK_MONOTONIC_COARSE nanoseconds, the kernel's clock as of its last
 * tick (1 to 4 ms apart: clock_getres), read from the vDSO. It costs about 4 ns a reading
 * where the time-stamp counter costs 10 to 12 and CLOCK_MONOTONIC 25 (x86-64 VMs
 * measured), and an event is read twice per allocation and free. An event's time places
 * it on the process's timeline (intervals, marks, failed allocations, the HTML page);
 * its order is its sequence number, which is exact. (heaptrack times its events to
 * 10 ms.) */
#include "shim.h"

#include <time.h>

uint64_t culeak_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
