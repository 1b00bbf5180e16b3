#!/usr/bin/env bash
# The console on a real GPU: the loop-leak demo under `culeak --` in tmux, a breakpoint
# `live > 32MiB` that pauses the job inside cudaMalloc at loop_leak.cu:23 past 32 MiB,
# continue to EXITED with the leak report; the demo again with a breakpoint whose commands
# snapshot and continue, unattended; then demo/train_leak.py, its leaking Python line
# in the table, a diff between iterations, a breakpoint on that line. Screens go to $OUT;
# a check that fails prints the screen it failed on and the script exits 1. Also: the
# console stopped with SIGSTOP while the demo runs, which must run to its end meanwhile,
# and the job's /proc/PID/fd without a descriptor of culeak's.
#   tests/gpu/console.sh WORKDIR OUT     (WORKDIR holds the built demos; CULEAK: the culeak to run)
# Without a GPU, the first half runs on the simulated demo:
#   LOOP_DEMO=build/demo/loop_leak_sim LOOP_SITE=loop_leak_sim.c:39 LOOP_ONLY=1 \
#       LD_LIBRARY_PATH=build/fakecuda tests/gpu/console.sh DIR OUT
set -u
W=$1 OUT=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CULEAK=${CULEAK:-$ROOT/${BUILD:-build}/culeak} # run.sh: the wheel's
LOOP_DEMO=${LOOP_DEMO:-$W/loop_leak}
LOOP_SITE=${LOOP_SITE:-loop_leak.cu:23}
[ -x "$LOOP_DEMO" ] || { echo "console: $LOOP_DEMO not built"; exit 1; }
TMUX_TMPDIR=$(mktemp -d)
export TMUX_TMPDIR
trap 'tmux kill-server 2>/dev/null; rm -rf "$TMUX_TMPDIR"' EXIT
S=gpu-console
screen() { tmux capture-pane -p -t "$S"; }
fail() {
    echo "console: FAIL $*"
    echo "---- screen ----"
    screen | tee "$OUT/console-failed.txt"
    exit 1
}
wait_for() {
    for _ in $(seq 1 600); do screen | grep -qF -- "$1" && return 0; sleep 0.1; done
    fail "never saw '$1'"
}
type_line() { tmux send-keys -t "$S" -l -- "$1"; tmux send-keys -t "$S" Enter; }
# types LINE and waits for TEXT, which must not be on the screen before (no stale match)
type_expect() {
    ! screen | grep -qF -- "$2" || fail "'$2' is on the screen before '$1'"
    type_line "$1"
    wait_for "$2"
}
# the held allocation's stack: the lines between the PAUSED banner and the output pane
held_stack() { screen | sed -n '/ PAUSED in /,/^ output /p'; }

tmux new-session -d -s "$S" -x 120 -y 40 \
    "env TERM=xterm-256color LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-} $CULEAK -- $LOOP_DEMO --delay-ms 200; sleep 600"
wait_for "RUNNING"
wait_for "$LOOP_SITE"
type_expect "break $LOOP_SITE live > 32MiB" "breakpoint 1 at $LOOP_SITE when live > 32.0 MiB"
wait_for "(4.00 MiB) - breakpoint 1 (hit 1)"
screen >"$OUT/console-paused.txt"
held_stack | grep -qF "$LOOP_SITE" || fail "the job is not paused at $LOOP_SITE"
live=$(held_stack | sed -n 's/.*; site \([0-9.]*\) MiB live,.*/\1/p')
[ -n "$live" ] || fail "no 'site N MiB live' on the PAUSED banner"
awk -v l="$live" 'BEGIN { exit !(l > 32) }' || fail "paused with the site at $live MiB, not past 32 MiB"
type_expect "delete" "Delete all breakpoints? (y or n)"
type_expect "y" "deleted every breakpoint"
type_expect "continue" "EXITED (status 0)"
wait_for "LEAK SUMMARY: 79691776 bytes leaked in 19 allocations from 1 call sites"
screen >"$OUT/console-exited.txt"
type_line "quit"
tmux kill-session -t "$S"
echo "console: ok   a breakpoint live > 32MiB paused the job at $LOOP_SITE with the site at $live MiB; EXITED with the leak report"
grep -E "PAUSED|$LOOP_SITE" "$OUT/console-paused.txt" | head -n 4

# The same demo unattended, as gdb users script it: no init file (-nx), a breakpoint whose
# commands take a snapshot and continue, read from a file (-x); it pauses at +16, +32, +48,
# +64 and +80 MiB (20 allocations of 4 MiB) and the job runs to its end with no one typing. The key bar is on the last line.
printf 'break %s grows 16MiB\ncommands\n  snapshot\n  continue\nend\n' "$LOOP_SITE" >"$OUT/console-bps.txt"
tmux new-session -d -s "$S" -x 120 -y 40 \
    "env TERM=xterm-256color LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-} $CULEAK -nx -x $OUT/console-bps.txt -- $LOOP_DEMO --delay-ms 50; sleep 600"
wait_for "EXITED (status 0)"
screen | tail -n 1 | grep -qE "^F1Help +F3Search" || fail "no key bar on the last line"
type_expect "snapshots" "5 snapshots listed in the output pane"
screen >"$OUT/console-unattended.txt"
for s in "s1 +16.0 MiB" "s2 +32.0 MiB" "s3 +48.0 MiB" "s4 +64.0 MiB" "s5 +80.0 MiB"; do
    screen | grep -qE "^  $s live" || fail "breakpoint 1's commands should have taken snapshot $s"
done
type_line "quit"
tmux kill-session -t "$S"
echo "console: ok   commands of break $LOOP_SITE grows 16MiB took snapshots at 16, 32, 48, 64, 80 MiB and continued, unattended"

# The console stopped (as Ctrl-Z stops it) while its job runs: the job runs to its end all
# the same (no allocation waits for a console that does not read); the console, resumed,
# shows it EXITED. Meanwhile the job holds no descriptor of culeak's (/proc/PID/fd: no
# ring, no socket of the console's); what it holds is listed for a look.
tmux new-session -d -s "$S" -x 120 -y 40 \
    "env TERM=xterm-256color LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-} $CULEAK -- $LOOP_DEMO --delay-ms 100; sleep 600"
wait_for "$LOOP_SITE"
job=$(screen | sed -n 's/.*\[culeak\] started pid \([0-9]*\);.*/\1/p' | head -n 1)
[ -n "$job" ] || fail "no job pid on the screen"
fds=$(for f in /proc/"$job"/fd/*; do printf '%s -> %s\n' "${f##*/}" "$(readlink "$f")"; done 2>/dev/null)
echo "$fds" >"$OUT/console-job-fds.txt"
! echo "$fds" | grep -q culeak || fail "the job holds culeak's descriptors: $(echo "$fds" | grep culeak)"
con=$(ps -o ppid= -p "$job" | tr -d ' ')
[ -n "$con" ] || fail "no console process for job $job"
kill -STOP "$con"
ended=""
for _ in $(seq 1 600); do
    st=$(ps -o stat= -p "$job" 2>/dev/null | cut -c1)
    [ -z "$st" ] || [ "$st" = Z ] && { ended=1; break; }
    sleep 0.1
done
kill -CONT "$con"
[ -n "$ended" ] || fail "the job did not run to its end while the console was stopped"
wait_for "EXITED (status 0)"
screen >"$OUT/console-stopped.txt"
type_line "quit"
tmux kill-session -t "$S"
echo "console: ok   the job ran to its end while its console was stopped (SIGSTOP); it held no descriptor of culeak's ($(echo "$fds" | wc -l) descriptors, listed in console-job-fds.txt)"
[ -n "${LOOP_ONLY:-}" ] && exit 0

# A PyTorch training loop: the Python line that leaks shows as a site; a breakpoint on
# that line pauses the job inside the allocation; snapshots at the NVTX iterations diff.
LEAK_LINE=$(grep -n "# LEAK" "$ROOT/demo/train_leak.py" | cut -d: -f1)
tmux new-session -d -s "$S" -x 120 -y 40 \
    "cd $ROOT && env TERM=xterm-256color $CULEAK --no-pool --snapshot-at-marks -- python3 demo/train_leak.py --iterations 40 --delay 0.3; sleep 600"
wait_for "RUNNING"
wait_for "train_leak.py:$LEAK_LINE"
wait_for "iteration 8"
type_expect 'diff "iteration 5"' "diff iteration 5 -> now"
screen >"$OUT/console-train-diff.txt"
# a recording saved mid-run: how long `save` takes, and its report does not judge what is
# live at the save as leaked
t0=$(date +%s.%N)
type_expect "save $TMUX_TMPDIR/mid.culeak" "saved the recording to $TMUX_TMPDIR/mid.culeak"
echo "console: save mid-run took $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s (as seen on the screen), $(stat -c %s "$TMUX_TMPDIR/mid.culeak") bytes"
"$CULEAK" report "$TMUX_TMPDIR/mid.culeak" >"$OUT/console-train-saved-report.txt" 2>&1
grep -q "live when the recording ends" "$OUT/console-train-saved-report.txt" &&
    ! grep -q "^LEAKED" "$OUT/console-train-saved-report.txt" ||
    fail "the report of the recording saved mid-run judges its live memory (console-train-saved-report.txt)"
# the job allocates there at once: the PAUSED banner may replace the answer before a look
type_line "break train_leak.py:$LEAK_LINE"
wait_for "- breakpoint 1 (hit 1)"
screen >"$OUT/console-train-paused.txt"
held_stack | grep -qF "train_leak.py:$LEAK_LINE" || fail "the job is not paused at train_leak.py:$LEAK_LINE"
type_expect "delete" "Delete all breakpoints? (y or n)"
type_expect "y" "deleted every breakpoint"
type_expect "continue" "EXITED (status 0)"
type_line "quit"
echo "console: ok   train_leak.py:$LEAK_LINE grows in the table; a breakpoint on it paused the job there"
grep -E "PAUSED|train_leak.py" "$OUT/console-train-paused.txt" | head -n 4
