#!/usr/bin/env bash
# The console on PyTorch's caching allocator (left on): keep_tensor.py keeps one tensor
# per step; its line shows as a site of blocks and a breakpoint on it pauses the job
# inside torch.alloc. Screens go to $OUT.
#   tests/gpu/console_blocks.sh OUT     (CULEAK: the culeak to run)
set -u
OUT=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CULEAK=${CULEAK:-$ROOT/${BUILD:-build}/culeak} # run.sh: the wheel's
export TMUX_TMPDIR=$(mktemp -d)
S=gpu-blocks
LINE=$(grep -n '# KEEP$' "$ROOT/tests/gpu/keep_tensor.py" | cut -d: -f1)
screen() { tmux capture-pane -p -t "$S"; }
wait_for() {
    for _ in $(seq 1 600); do screen | grep -qF -- "$1" && return 0; sleep 0.1; done
    echo "console_blocks: never saw '$1'"; screen >"$OUT/console-blocks-failed.txt"; tmux kill-server; exit 1
}
type_line() { tmux send-keys -t "$S" -l -- "$1"; tmux send-keys -t "$S" Enter; }
tmux new-session -d -s "$S" -x 140 -y 40 \
    "cd $ROOT && env TERM=xterm-256color $CULEAK -- python3 tests/gpu/keep_tensor.py 400 0.05; sleep 600"
wait_for "RUNNING"
wait_for "keep_tensor.py:$LINE"
type_line "break keep_tensor.py:$LINE"
wait_for "PAUSED in torch.alloc("
screen >"$OUT/console-blocks-paused.txt"
type_line "delete 1"
wait_for "deleted breakpoint 1"
type_line "continue"
wait_for "EXITED (status 0)"
screen >"$OUT/console-blocks-exited.txt"
type_line "quit"
tmux kill-server
echo "console_blocks: keep_tensor.py:$LINE is a site of blocks; a breakpoint on it paused the job in torch.alloc"
grep -E "PAUSED|keep_tensor.py" "$OUT/console-blocks-paused.txt" | head -n 4
