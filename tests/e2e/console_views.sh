#!/usr/bin/env bash
# What the views show at 80x24 and 120x40: sites keep file:line in the table and the
# stack pane's title (at 60x15 too, where the table drops peak and allocs for the site);
# marks are counted in the header, listed by info marks, and neither print into the
# job's output nor replace the result of the last command.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static

for size in "60 15" "80 24" "120 40"; do
    start_sized $size -- "$FAKE/client_static" until "$T/stop" 100000
    wait_for "RUNNING"
    wait_for "stack of #"
    screen | grep -E "^ +[0-9]+ .*client_scenarios\.c:[0-9]+ *$" >/dev/null ||
        fail "the table's site lacks file:line ($size)"
    screen | grep -E "^ stack of #[0-9]+ .*client_scenarios\.c:[0-9]+  \(1 stack" >/dev/null ||
        fail "the stack pane's title lacks file:line ($size)"
done
cat >"$T/marks.py" <<'JOB'
import time, culeak
for i in range(200):
    culeak.mark("iteration %d" % i)
    time.sleep(0.1)
JOB
# marks_at_least N: polls until the header counts N marks or more (the count can pass N
# between two looks at the screen)
marks_at_least() {
    local end=$((SECONDS + WAIT_S)) n
    while :; do
        n=$(screen | head -n 1 | sed -n 's/.* \([0-9][0-9]*\) marks, .*/\1/p')
        [ -n "$n" ] && [ "$n" -ge "$1" ] && return 0
        [ "$SECONDS" -lt "$end" ] || fail "the header never counted $1 marks"
        sleep 0.1
    done
}
for size in "80 24" "120 40"; do
    start_sized $size --snapshot-at-marks -- python3 "$T/marks.py"
    marks_at_least 2
    screen | head -n 1 | grep -qE " ([0-9]+) marks, \1 snapshots " || fail "marks and snapshots not counted ($size)"
    type_line "info breakpoints"
    wait_for "no breakpoints (break SITE"
    n0=$(screen | head -n 1 | sed -n 's/.* \([0-9][0-9]*\) marks, .*/\1/p')
    marks_at_least $((n0 + 3))                  # marks went on after the command
    screen | grep -q "no breakpoints (break SITE" || fail "a mark replaced the command's result ($size)"
    screen | grep -q "\[culeak\] mark" && fail "a mark printed into the job's output ($size)"
    type_line "info marks"
    wait_for "marks listed in the output pane"
    screen | grep -qE "^  iteration [0-9]+ +[0-9]+ " || fail "info marks lists no mark ($size)"
done
echo "console views e2e ok"
