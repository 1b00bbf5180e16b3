#!/usr/bin/env bash
# The console on a job of several processes (tmux, fake driver): a shell runs the `fork`
# scenario (a parent allocates, one child allocates, another never touches CUDA), a leak
# in another child, then execs a third client that leaks. Every traced process is listed
# by `info processes`; the table sums them and `process PID` shows one alone.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static client_driver

# the table's rows: between the header (2 lines) and the stack pane's title
table() { screen | sed -n '3,/^ stack/p'; }

# the clients run as ./NAME: info processes lists them whole, however long the checkout's
# path (a line wider than the pane wraps)
printf '#!/bin/bash\ncd "%s" || exit 1\n./client_static fork\n./client_static leak 2 4096\nexec ./client_driver leak 3 1048576\n' \
    "$FAKE" >"$T/job.sh"
chmod +x "$T/job.sh"
start_sized 160 50 -- "$T/job.sh"
wait_for "EXITED (status 0)"
wait_for "LEAK SUMMARY: 3153920 bytes leaked in 5 allocations"
type_line "info processes"
wait_for "processes listed in the output pane"
procs=$(screen | grep -E "^ +pid [0-9]+ ")
[ "$(grep -c . <<<"$procs")" -eq 4 ] || fail "expected 4 traced processes (the child without CUDA sends nothing)"
pid_of() { grep -- "$1" <<<"$procs" | sed 's/^ *pid \([0-9]*\).*/\1/'; }
forks=$(grep "exited.*client_static fork" <<<"$procs")
[ "$(grep -c . <<<"$forks")" -eq 2 ] || fail "the fork parent and its CUDA child are not both listed"
# the child is the one whose parent is the other
child=$(awk '{print $2, $4}' <<<"$forks" | awk 'NR==1{a=$1;pa=$2} NR==2{b=$1;pb=$2} END{print (pb==a)?b:(pa==b)?a:""}')
[ -n "$child" ] || fail "no fork child whose ppid is the fork parent"
drv=$(pid_of "exited.*client_driver leak 3 1048576")
leaker=$(pid_of "exited.*client_static leak 2 4096")
[ -n "$drv" ] && [ -n "$leaker" ] || fail "the leaking child or the exec'd client is not listed"

# all together: the two leaks and the fork sites
table | grep -q "3.00 MiB" || fail "the exec'd client's leak is not in the table"
table | grep -q "8.00 KiB" || fail "the child's leak is not in the table"
table | grep -q "2.16 KiB" || fail "the forked child's site is not in the table"  # peak 2222 B
table | grep -q "1.08 KiB" || fail "the fork parent's site is not in the table"    # peak 1111 B

# one process at a time
type_line "process $child"
wait_for "process $child only"
table | grep -q "2.16 KiB" || fail "the forked child's site is missing from its own table"
table | grep -q "1.08 KiB" && fail "the parent's site shows under process $child"
table | grep -q "3.00 MiB" && fail "another process's leak shows under process $child"
table | grep -q "8.00 KiB" && fail "another process's leak shows under process $child"
type_line "process $drv"
wait_for "process $drv only"
table | grep -q "3.00 MiB" || fail "the exec'd client's leak is missing from its own table"
table | grep -q "8.00 KiB" && fail "the other child's leak shows under process $drv"
type_line "process $leaker"
wait_for "process $leaker only"
screen | head -n 2 | grep -q "live 8.00 KiB" || fail "the header does not count process $leaker alone"
table | grep -q "3.00 MiB" && fail "the exec'd client's leak shows under process $leaker"
type_line "process all"
wait_for "all 4 processes together"
table | grep -q "8.00 KiB" || fail "process all does not bring every process back"
table | grep -q "3.00 MiB" || fail "process all does not bring every process back"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
echo "console processes e2e ok"
