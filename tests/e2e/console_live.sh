#!/usr/bin/env bash
# The console driven in tmux on the fake driver: a breakpoint pauses the job inside the
# allocation, snapshot/diff while paused, continue to EXITED with a leak report, resize,
# unknown commands, save, a job flooding its output, quit; a program that cannot run.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static

# 1. breakpoint -> PAUSED in the allocation; views work while paused; continue -> EXITED
#    (the job allocates every 100 ms until $T/stop1 exists)
start -- "$FAKE/client_static" until "$T/stop1" 100000
wait_for "RUNNING"
type_expect "break run_until" "PAUSED in cuMemAlloc_v2(512 B) - breakpoint 1 (hit 1)"
wait_for "cuda-gdb -p"
screen | grep -q " PAUSED " || fail "header does not say PAUSED"
type_expect "snapshot a" "snapshot a: 512 B live"
type_expect "info breakpoints" "any allocation"
screen | grep -qE "^1 +y +1  any allocation +run_until" || fail "info breakpoints: not 1 hit"
type_expect "continue" "PAUSED in cuMemAlloc_v2(512 B) - breakpoint 1 (hit 2)" # the next allocation
type_expect "delete" "Delete all breakpoints? (y or n)"
type_expect "y" "deleted every breakpoint"
touch "$T/stop1"
type_expect "continue" "EXITED (status 0)"
wait_for "leak report"
type_expect "diff a" "diff a -> now"
# diff's second half in the output pane: every allocation after a was freed again
wait_for "no allocation made after a and still live now"
type_expect "frobnicate" "unknown command 'frobnicate'"
# at 80x24 the console redraws to fit: the header on the first line, the answer to a new
# command on the status line above the prompt, the prompt above the key bar (a console that
# ignored the resize would still answer on line 39, out of sight)
tmux resize-window -t "$S" -x 80 -y 24
type_expect "frobnicate80" "unknown command 'frobnicate80'"
screen | head -n 1 | grep -q "^ culeak .*EXITED (status 0)" || fail "no header on the first line at 80x24"
screen | sed -n 22p | grep -q "unknown command 'frobnicate80'" || fail "status line not above the prompt at 80x24"
screen | sed -n 23p | grep -q "^(culeak)" || fail "no prompt above the key bar at 80x24"
screen | sed -n 24p | grep -q "^F1Help" || fail "no key bar on the last line at 80x24"
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
type_expect "goto start" "event 0/"
type_expect "goto peak" "3.00 MiB live"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"

# 4. a job flooding its output does not disturb the screen; Ctrl-C does not kill it (it
#    runs until $T/stop4 exists, so it is running when Ctrl-C is pressed, and ends with 0)
printf '#!/bin/sh\nseq 1 20000\nexec "%s" until "%s" 100000\n' "$FAKE/client_static" "$T/stop4" >"$T/flood.sh"
chmod +x "$T/flood.sh"
start -- "$T/flood.sh"
wait_for "RUNNING"
tmux send-keys -t "$S" C-c
wait_for "Ctrl-C does not stop the job"
touch "$T/stop4"
wait_for "EXITED (status 0)"
screen | head -n 1 | grep -q "^ culeak " || fail "header overwritten by the job's output"
screen | grep -q "^20000$" || fail "the job's last output line is not in the output pane"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
# 5. a program that cannot run: no console on an empty job, the error and 127
start -- "$T/no-such-program"
wait_for "CONSOLE-DONE rc="
screen | grep -q "^culeak: cannot run $T/no-such-program: No such file or directory" ||
    fail "no error for a program that cannot run"
screen | grep -q "CONSOLE-DONE rc=127" || fail "a program that cannot run: not exit status 127"
echo "console e2e ok"
