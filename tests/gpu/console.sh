#!/usr/bin/env bash
# The console on a real GPU: the loop-leak demo under `culeak --` in tmux, a breakpoint
# that pauses the job inside cudaMalloc, continue to EXITED. Screens go to $OUT.
#   tests/gpu/console.sh WORKDIR OUT     (WORKDIR holds the built demos; BUILD as run.sh)
set -u
W=$1 OUT=$2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CULEAK=$ROOT/${BUILD:-build}/culeak
[ -x "$W/loop_leak" ] || { echo "console: loop_leak demo not built"; exit 1; }
export TMUX_TMPDIR=$(mktemp -d)
S=gpu-console
screen() { tmux capture-pane -p -t "$S"; }
wait_for() {
    for _ in $(seq 1 600); do screen | grep -qF -- "$1" && return 0; sleep 0.1; done
    echo "console: never saw '$1'"; screen >"$OUT/console-failed.txt"; tmux kill-server; exit 1
}
type_line() { tmux send-keys -t "$S" -l -- "$1"; tmux send-keys -t "$S" Enter; }
tmux new-session -d -s "$S" -x 120 -y 40 "env TERM=xterm-256color $CULEAK -- $W/loop_leak --delay-ms 200; sleep 600"
wait_for "RUNNING"
wait_for "loop_leak.cu:"
type_line "break loop_leak.cu:23 live > 32MiB"
wait_for "PAUSED"
screen >"$OUT/console-paused.txt"
type_line "delete"
type_line "continue"
wait_for "EXITED (status 0)"
wait_for "leak report"
screen >"$OUT/console-exited.txt"
type_line "quit"
tmux kill-session -t "$S"

# A PyTorch training loop: the Python line that leaks shows as a site; a breakpoint on
# that line pauses the job inside the allocation; snapshots at the NVTX iterations diff.
LEAK_LINE=$(grep -n "# LEAK" "$ROOT/demo/train_leak.py" | cut -d: -f1)
tmux new-session -d -s "$S" -x 120 -y 40 \
    "cd $ROOT && env TERM=xterm-256color $CULEAK --no-pool --snapshot-at-marks -- python3 demo/train_leak.py --iterations 40 --delay 0.3; sleep 600"
wait_for "RUNNING"
wait_for "train_leak.py:$LEAK_LINE"
wait_for "iteration 8"
type_line 'diff "iteration 5"'
wait_for "diff iteration 5 -> now"
screen >"$OUT/console-train-diff.txt"
type_line "break train_leak.py:$LEAK_LINE"
wait_for "PAUSED"
screen >"$OUT/console-train-paused.txt"
type_line "delete"
type_line "continue"
wait_for "EXITED (status 0)"
type_line "quit"
tmux kill-server
echo "console: train_leak.py:$LEAK_LINE grows in the table; a breakpoint on it paused the job"
grep -E "PAUSED|train_leak.py" "$OUT/console-train-paused.txt" | head -n 4
echo "console: live sites, a breakpoint paused the job at loop_leak.cu:23 past 32 MiB, EXITED with the leak report"
grep -E "PAUSED|loop_leak.cu" "$OUT/console-paused.txt" | head -n 4
