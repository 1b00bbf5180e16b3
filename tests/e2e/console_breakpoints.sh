#!/usr/bin/env bash
# Conditional breakpoints driven end to end in tmux on the fake driver: `grows`, `live >`
# and `count >` pause the job at exactly the allocations their condition names, more than
# once, with the site's live bytes and the hit count on the PAUSED banner.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static

# The job: connects to the console with one allocation freed at once, waits for $T/go (the
# test sets its breakpoints meanwhile), then leaks 10 blocks of 1 MiB at the line marked LEAK.
cp "$(dirname "$0")/c/gated_leak.c" "$T/job.c"
cc -g -O0 -o "$T/job" "$T/job.c" -ldl || fail "cannot build the job"
LEAK=job.c:$(grep -n "LEAK" "$T/job.c" | cut -d: -f1)
gated_leak() {
    rm -f "$T/go"
    start -- "$T/job" "$T/go"
    wait_for "1 proc (1 live)"
}
# A wait for a pause fails at once when the job ends instead (ENDED on the screen); the
# first pause of a job also when another pause shows (STOPPED: no earlier banner is there).
ENDED='EXITED \(status'
STOPPED="PAUSED in|$ENDED"
# paused ID HIT LIVE GROWTH: the banner of breakpoint ID's HIT-th pause, the site at LIVE
paused() {
    UNLESS=${UNLESS:-$ENDED} wait_for "PAUSED in cuMemAlloc_v2(1.00 MiB) - breakpoint $1 (hit $2)"
    screen | grep -qF "site $3 live, $4 since break" ||
        fail "breakpoint $1, hit $2: the site should hold $3 ($4 since break)"
}

# 1. grows 3MiB, set before the first allocation: pauses at +3, +6, +9 MiB, nowhere else
gated_leak
type_expect "break $LEAK grows 3MiB" "breakpoint 1 at $LEAK when grows 3.00 MiB"
touch "$T/go"
UNLESS=$STOPPED paused 1 1 "3.00 MiB" "+3.00 MiB"
UNLESS=$ENDED type_expect "continue" "breakpoint 1 (hit 2)"
paused 1 2 "6.00 MiB" "+6.00 MiB"
UNLESS=$ENDED type_expect "continue" "breakpoint 1 (hit 3)"
paused 1 3 "9.00 MiB" "+9.00 MiB"
type_expect "continue" "EXITED (status 0)"
type_expect "info breakpoints" "1 breakpoint listed in the output pane"
screen | grep -qE "^1 +y +3  grows 3.00 MiB +$LEAK" || fail "info breakpoints: grows 3MiB should have 3 hits"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"

# 2. live > 5MiB and count > 8 together: live > 5MiB pauses at every allocation past 5 MiB
#    (6, 7 MiB) while count > 8 waits (the count, not the bytes, is compared); once
#    breakpoint 1 is deleted (only it), count > 8 pauses at the 9th and 10th blocks
gated_leak
type_expect "break $LEAK live > 5MiB" "breakpoint 1 at $LEAK when live > 5.00 MiB"
type_expect "break $LEAK count > 8" "breakpoint 2 at $LEAK when count > 8"
touch "$T/go"
UNLESS=$STOPPED paused 1 1 "6.00 MiB" "+6.00 MiB"
UNLESS=$ENDED type_expect "continue" "breakpoint 1 (hit 2)"
paused 1 2 "7.00 MiB" "+7.00 MiB"
type_expect "delete 1" "deleted breakpoint 1"
UNLESS=$ENDED type_expect "continue" "breakpoint 2 (hit 1)"
paused 2 1 "9.00 MiB" "+9.00 MiB"
UNLESS=$ENDED type_expect "continue" "breakpoint 2 (hit 2)"
paused 2 2 "10.0 MiB" "+10.0 MiB"
type_expect "continue" "EXITED (status 0)"
wait_for "LEAK SUMMARY: 10485760 bytes leaked in 10 allocations"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"

# 3. two breakpoints whose conditions hold at once are both hit: `break LEAK` pauses at
#    every block, `count > 8` at the 9th and 10th too, and each counts its hits; `grows 0`
#    is refused; a line without code is said to have none
gated_leak
type_expect "break $LEAK grows 0" "'grows' needs a size above 0"
type_expect "break job.c:999" "breakpoint 1 at job.c:999 when any allocation (no code at line 999 of job.c; pending)"
type_expect "delete 1" "deleted breakpoint 1"
type_expect "break $LEAK" "breakpoint 2 at $LEAK when any allocation"
type_expect "break $LEAK count > 8" "breakpoint 3 at $LEAK when count > 8"
touch "$T/go"
UNLESS=$STOPPED wait_for "breakpoint 2 (hit 1)"
for hit in 1 2 3 4 5 6 7 8 9 10; do
    wait_for "breakpoint 2 (hit $hit)"
    [ "$hit" -lt 10 ] && UNLESS=$ENDED type_expect "continue" "breakpoint 2 (hit $((hit + 1)))"
done
type_expect "continue" "EXITED (status 0)"
type_expect "info breakpoints" "2 breakpoints listed in the output pane"
screen | grep -qE "^2 +y +10  any allocation +$LEAK" || fail "info breakpoints: break LEAK should have 10 hits"
screen | grep -qE "^3 +y +2  count > 8 +$LEAK" || fail "info breakpoints: count > 8 should have 2 hits"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
echo "console breakpoints e2e ok"
