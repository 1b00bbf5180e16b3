#!/usr/bin/env bash
# The console on a job whose traced processes outnumber its first tables (tmux, fake
# driver): nine programs run by a shell one after another (the ninth once made the ring
# table grow under the console's readers), then 5,000 forked children one after another
# (more than the 4,096 rings a job once had over its life). Every process's leak is in
# the table and the report, and the console stays up.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static
cc -O2 -o "$T/seq_forks" "$(dirname "$0")/c/seq_forks.c" -ldl || fail "cannot build the job"

# nine programs, each leaking i pages: 45 pages in 9 allocations
printf '#!/bin/sh\ncd "%s" || exit 1\nfor i in 1 2 3 4 5 6 7 8 9; do ./client_static leak 1 $((i * 4096)) >/dev/null || exit 1; done\n' \
    "$FAKE" >"$T/nine.sh"
chmod +x "$T/nine.sh"
start -- "$T/nine.sh"
UNLESS="CONSOLE-DONE" wait_for "LEAK SUMMARY: 184320 bytes leaked in 9 allocations"
screen | grep -q "EXITED (status 0)" || fail "the job did not end well"
type_line "info processes"
wait_for "processes listed in the output pane"
[ "$(screen | grep -cE '^ +pid [0-9]+ .*client_static leak 1')" -eq 9 ] || fail "not 9 processes listed"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"

# 5,000 children, one page each; a small ring each keeps their start cheap
N=${CONSOLE_MANY_N:-5000}
start_ts=$SECONDS
# (the report's summary scrolls off the pane under 5,000 lines of processes: its log file)
ENVS="$ENVS CULEAK_RING_SIZE=4096" start --log-file "$T/many.txt" -- "$T/seq_forks" $N 4096
WAIT_S=${WAIT_MANY_S:-600} wait_file "$T/many.txt" "LEAK SUMMARY: $((N * 4096)) bytes leaked in $N allocations"
screen | grep -q "EXITED (status 0)" || fail "the job did not end well"
[ "$(grep -c '^ *process [0-9]*: 4096 bytes leaked in 1 allocations' "$T/many.txt")" -eq "$N" ] ||
    fail "not every process's leak is in the report"
echo "console_many: $N processes in $((SECONDS - start_ts)) s"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
echo "console_many: ok"
