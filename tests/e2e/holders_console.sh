#!/usr/bin/env bash
# The console's `holders SITE` while the job runs: the question goes to the job's shim
# through the ring (HOLDERS), the job's interpreter walks at its next safe point, and the
# answer shows when it comes, under the site in the stack pane (HELD BY) and in the output
# pane. A job without Python says so; a job that ended is said to have; a recording is
# not asked.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null || { echo "no $PY in PATH"; exit 1; }
src=$ROOT/tests/e2e/python/holders_console.py
L_KEPT=$(grep -n '# SITE-KEPT$' "$src" | cut -d: -f1)
HELD='HELD BY global `kept` of holders_console.py (list), an item: 3 blocks, 12.0 KiB'

start_sized 200 40 -- env FAKE_C10="$FAKE/torch/lib/libc10_cuda.so" "$PY" "$src" "$T/stop"
wait_for "holders_console: ready"
wait_for "holders_console.py:$L_KEPT"
! screen | grep -qF 'HELD BY' || fail "holders before any was asked"
# the tensors' row (the pool's segment, made at the same line, is a row of its own)
ID=$(screen | grep -E "^ +[0-9]+ .* block +python +.*holders_console.py:$L_KEPT\$" | awk '{print $1}')
[ -n "$ID" ] || fail "no row of the kept tensors"
type_line "holders $ID"
wait_for "answered (stack pane, output pane)"
wait_for "  $HELD"
# the stack pane shows the site and, under it, who holds its blocks
screen | grep -q "stack of #.*holders_console.py:$L_KEPT" || fail "the site asked about is not selected"
[ "$(screen | grep -cF "$HELD")" -ge 2 ] || fail "the answer is not in both the stack pane and the output pane"
touch "$T/stop"
wait_for "EXITED (status 0)"
type_line "holders $ID"
wait_for "have ended"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"

# a job without Python: the shim answers at once that it cannot
mkdir "$T/c"
start_sized 200 40 -- "$FAKE/client_static" attach 2 "$T/c"
wait_for "attach ready"
wait_for "attach_scenario"
type_line "holders attach_scenario"
wait_for "not a Python process"
touch "$T/c/go" "$T/c/end"
wait_for "EXITED (status 7)"
type_line "quit"
wait_for "CONSOLE-DONE rc=7" # the job's own status
echo "holders console e2e ok"
