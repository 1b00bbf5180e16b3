#!/usr/bin/env bash
# What the console's hold at start (CULEAK_HOLD_AT_START) costs a job without breakpoints:
# the job's first allocation waits one round trip to the console, which answers HOLD_NEW 0.
# Runs a job of 20 allocations at 20 different stacks (the fake driver) under the console in
# tmux, RUNS times as launched (held at start) and RUNS times with the variable removed
# (`env -u`), allocating at once and 0.3 s after it starts, and prints the median and range of the first allocation's time and of the
# 20 allocations' time, in microseconds. Usage: bench/hold_at_start.sh [RUNS] (default 15).
set -u
RUNS=${1:-15}
. "$(dirname "$0")/../tests/e2e/tmux_harness.sh" client_static
cat >"$T/job.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

typedef int (*fn)();
static fn alloc, release;
static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}
/* depth d: the allocation's stack is d frames of this function deep, a new stack each */
static __attribute__((noinline)) int at_depth(int d)
{
    unsigned long long p;
    int rc = d > 0 ? at_depth(d - 1) : alloc(&p, (size_t)4096) || release(p);
    __asm__ volatile("" ::: "memory"); /* not a tail call */
    return rc;
}
int main(int argc, char **argv)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
    fn init = (fn)dlsym(cuda, "cuInit"), get = (fn)dlsym(cuda, "cuDeviceGet"),
       retain = (fn)dlsym(cuda, "cuDevicePrimaryCtxRetain"), current = (fn)dlsym(cuda, "cuCtxSetCurrent");
    alloc = (fn)dlsym(cuda, "cuMemAlloc_v2");
    release = (fn)dlsym(cuda, "cuMemFree_v2");
    int dev;
    void *ctx;
    if (argc < 2 || init(0) || get(&dev, 0) || retain(&ctx, dev) || current(ctx))
        return 1;
    if (argc > 2) /* a job that starts allocating later, when the console is idle */
        usleep(300000);
    double t0 = now_us();
    int rc = at_depth(0);
    double t1 = now_us();
    for (int d = 1; d < 20 && !rc; d++)
        rc = at_depth(d);
    double t2 = now_us();
    FILE *f = fopen(argv[1], "a");
    if (!f || rc)
        return 1;
    fprintf(f, "%.0f %.0f\n", t1 - t0, t2 - t0);
    return fclose(f) != 0;
}
C
cc -O2 -o "$T/job" "$T/job.c" -ldl || fail "cannot build the job"
one() { # one FIGS LATE [env -u ...]: runs the job once under the console, its figures into FIGS
    local figs=$1 late=$2
    shift 2
    local before
    before=$(wc -l <"$figs" 2>/dev/null || echo 0)
    start -- "$@" "$T/job" "$figs" $late
    wait_for "EXITED (status 0)"
    type_line "quit"
    wait_for "CONSOLE-DONE rc=0"
    [ "$(wc -l <"$figs")" -gt "$before" ] || fail "the job wrote no figures"
}
for _ in $(seq "$RUNS"); do
    one "$T/held" ""
    one "$T/free" "" env -u CULEAK_HOLD_AT_START
    one "$T/held-late" late
    one "$T/free-late" late env -u CULEAK_HOLD_AT_START
done
# stats FILE COLUMN: median [min..max] of the column
stats() { cut -d' ' -f"$2" "$1" | sort -n | awk '{v[NR]=$1} END {m = NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; printf "%.0f [%d..%d]", m, v[1], v[NR]}'; }
echo "job without breakpoints under the console, $RUNS runs each (microseconds, median [min..max]):"
echo "allocating at once (while the console draws its first screen):"
echo "  held at start:     first allocation $(stats "$T/held" 1), 20 new stacks $(stats "$T/held" 2)"
echo "  without the hold:  first allocation $(stats "$T/free" 1), 20 new stacks $(stats "$T/free" 2)"
echo "allocating 0.3 s after its start (the console idle):"
echo "  held at start:     first allocation $(stats "$T/held-late" 1), 20 new stacks $(stats "$T/held-late" 2)"
echo "  without the hold:  first allocation $(stats "$T/free-late" 1), 20 new stacks $(stats "$T/free-late" 2)"
