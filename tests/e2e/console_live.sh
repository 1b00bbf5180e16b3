#!/usr/bin/env bash
# The console driven in tmux on the fake driver: a breakpoint pauses the job inside the
# allocation, snapshot/diff while paused, continue to EXITED with a leak report, resize,
# unknown commands, save, a job flooding its output, quit.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static

# 1. breakpoint -> PAUSED in the allocation; views work while paused; continue -> EXITED
start -- "$FAKE/client_static" long 40 100000
wait_for "RUNNING"
type_line "break client_run"
wait_for "PAUSED in cuMemAlloc_v2(512 B) - breakpoint 1"
wait_for "cuda-gdb -p"
screen | grep -q " PAUSED " || fail "header does not say PAUSED"
type_line "snapshot a"
wait_for "snapshot a: 512 B live"
type_line "info breakpoints"
wait_for "any allocation"
type_line "continue"
wait_for "PAUSED in cuMemAlloc_v2(512 B) - breakpoint 1"   # the next allocation pauses again
type_line "delete"
wait_for "deleted every breakpoint"
type_line "continue"
wait_for "EXITED (status 0)"
wait_for "leak report"
type_line "diff a"
wait_for "diff a -> now"
# diff's second half in the output pane: every allocation after a was freed again
wait_for "no allocation made after a and still live now"
type_line "frobnicate"
wait_for "unknown command 'frobnicate'"
tmux resize-window -t "$S" -x 80 -y 24
wait_for "EXITED (status 0)"
[ "$(screen | wc -l)" -le 24 ] || fail "not redrawn at 80x24"
screen | tail -n 1 | grep -q "(culeak)" || fail "no prompt at the bottom after resize"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"

# 2. a leaking job: sites and sizes, the leak report, save a recording
start -- "$FAKE/client_static" leak 3 1048576
wait_for "EXITED (status 0)"
wait_for "3.00 MiB in 3 allocations"
type_line "save $T/saved.culeak"
wait_for "saved the recording to $T/saved.culeak"
type_line "export $T/table.csv"
wait_for "exported"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
"$B/culeak" dump "$T/saved.culeak" | grep -c '"type":"alloc"' | grep -qx 3 || fail "saved recording lacks the 3 allocations"
grep -q ",3145728,3," "$T/table.csv" || fail "export lacks the leaking site's bytes"

# 3. culeak open on the saved recording: goto peak / start
start open "$T/saved.culeak"
wait_for "RECORDING"
type_line "goto start"
wait_for "event 0/"
type_line "goto peak"
wait_for "3.00 MiB live"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"

# 4. a job flooding its output does not disturb the screen; Ctrl-C does not kill it
printf '#!/bin/sh\nseq 1 20000\nexec "%s" long 20 100000\n' "$FAKE/client_static" >"$T/flood.sh"
chmod +x "$T/flood.sh"
start -- "$T/flood.sh"
wait_for "RUNNING"
tmux send-keys -t "$S" C-c
wait_for "Ctrl-C does not stop the job"
wait_for "EXITED (status 0)"
screen | head -n 1 | grep -q "^ culeak " || fail "header overwritten by the job's output"
screen | grep -q "^20000$" || fail "the job's last output line is not in the output pane"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
echo "console e2e ok"
