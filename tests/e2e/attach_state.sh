#!/usr/bin/env bash
# culeak's own injector gives the thread it borrows back every register and the system call
# it was in, gdb not on PATH: the job of tests/e2e/c/attach_state.c (two threads blocking
# in read, nanosleep, clock_nanosleep, futex, poll, epoll_wait and accept with known values
# in every register class the CPU has; a thread allocating on the fake driver; the main
# thread in ppoll with a signal mask) is attached by record --pid and detached 50 times at
# random moments. It must see no changed register, no unexpected result (EINTR or a
# restart code), no early sleep, no wrong read; its output equals an untraced run's and it
# exits 0. No sleep may end later than asked plus the longest stop and a tolerance for
# this machine's scheduling (printed). Prints the attach's time and the borrowed thread's
# stop (median, max).
set -u
. "$(dirname "$0")/attach/job.sh"
attach_test_setup
ATTACHES=${ATTACHES:-50}
TOLERANCE_MS=250
cc -O2 -g -pthread -o "$T/job" "$ROOT/tests/e2e/c/attach_state.c" "$ROOT/tests/e2e/c/attach_state_regs.S" \
    -L"$B/fakecuda" -l:libcuda.so.1 -Wl,-rpath,"$B/fakecuda" || fail "cannot build the job"

# untraced, for its output
mkdir "$T/plain"
"$T/job" "$T/plain" >"$T/plain/out" 2>"$T/plain/err" &
job=$!
sleep 1
touch "$T/plain/end"
rc=0
wait "$job" || rc=$?
job=
[ "$rc" -eq 0 ] || fail "the untraced job exited $rc: $(cat "$T/plain/out" "$T/plain/err")"

D=$T/traced
mkdir "$D"
"$T/job" "$D" >"$D/out" 2>"$D/err" &
job=$!
RANDOM=7
attach_many attach_state "$D" "$ATTACHES"
end_job "attach_state" "$D" "$T/plain/out"
[ "$(wc -l <"$D/timing")" -eq "$ATTACHES" ] || fail "not every attach said its timing: $(cat "$D/timing")"

# figures: the attach's time and the stop (median, max); the sleeps' lateness
echo "attach time: $(cut -d' ' -f1 "$D/timing" | timing_stats)"
echo "borrowed thread stopped: $(cut -d' ' -f2 "$D/timing" | timing_stats)"
max_stop=$(cut -d' ' -f2 "$D/timing" | sort -n | tail -n 1)
grep "calls .* max_late_ms" "$D/figures"
late=$(sed -n 's/.*max_late_ms \([0-9.]*\)/\1/p' "$D/figures" | sort -n | tail -n 1)
echo "latest sleep: $late ms past the time asked; allowed: the longest stop $max_stop ms + $TOLERANCE_MS ms"
awk -v l="$late" -v s="$max_stop" -v t="$TOLERANCE_MS" 'BEGIN {exit !(l <= s + t)}' ||
    fail "a sleep ended $late ms late: longer than any stop ($max_stop ms) could explain"
head -n 1 "$D/out"
echo "attach_state: ok"
