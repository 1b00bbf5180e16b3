#!/usr/bin/env bash
# culeak open, at 80x24 and 120x40: goto takes the rest of the line; the table, snapshot
# and diff follow the position; goto past the end is an error; mark snapshots are named
# as live --snapshot-at-marks names them; no snapshot vanishes across gotos.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static

# 30 iterations: grow_step adds 16 KiB at each (16 KiB * (N + 1) live at 'iteration N')
env LD_LIBRARY_PATH="$FAKE" XDG_RUNTIME_DIR="$T/run" ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 \
    ${CULEAK_E2E_SHIM:+CULEAK_LIB=$CULEAK_E2E_SHIM} \
    "$B/culeak" record -o "$T/g.culeak" -- "$FAKE/client_static" growth 30 20000 >"$T/rec.out" 2>&1 ||
    { cat "$T/rec.out"; fail "record failed"; }

# grow_step's allocation line, found rather than written down: the file changes
grow_line=$(grep -n 'SZ_GROW)); /\* kept: the leak \*/' "$ROOT/tests/fakecuda/client_scenarios.c" | cut -d: -f1)
[ -n "$grow_line" ] || fail "grow_step's allocation is not in client_scenarios.c"

for size in "80 24" "120 40"; do
    start_sized $size open "$T/g.culeak"
    wait_for "RECORDING"
    type_expect "goto iteration 10" "at mark iteration 10"
    screen | grep -E "^ +[0-9]+\*? +176 KiB .*client_scenarios.c:$grow_line" >/dev/null || fail "the table is not at iteration 10 ($size)"
    # peak and allocs are the whole recording's: not shown for an earlier position
    screen | grep -E "^ +[0-9]+\*? +176 KiB +11 +[^ ]+ [^ ]+ +- +- .*client_scenarios.c:$grow_line" >/dev/null ||
        fail "peak and allocs at iteration 10 are not left out ($size)"
    type_expect "snapshot" "snapshot s1: "
    screen | grep -q "snapshot s1: .*, at mark iteration 10" || fail "the snapshot is not at iteration 10 ($size)"
    type_expect "goto iteration 20" "at mark iteration 20"
    type_expect "diff s1" "diff s1 -> iteration 20"
    screen | grep -E "^ +[0-9]+\*? +\+160 KiB .*client_scenarios.c:$grow_line" >/dev/null || fail "diff s1 is not to iteration 20 ($size)"
    type_expect "diff off" "live table, sorted by live"
    type_expect "goto 99" "1m39s is past the end: the recordings last"
    type_expect "goto 0.3s" "at 0.3s: event"
    type_expect "snapshot t1" "snapshot t1: "
    type_expect "autosnapshot marks" "a snapshot at every mark"
    type_expect "goto iteration 3" "at mark iteration 3"
    type_expect "info snapshots" "snapshots listed in the output pane"
    for name in s1 t1; do
        screen | grep -qE "^  $name +[0-9.]+ [KMG]?i?B live" || fail "snapshot '$name' vanished ($size)"
    done
    type_expect "search @iteration" "'@iteration' is not in the output"
    type_expect "diff iteration 5 iteration 7" "diff iteration 5 -> iteration 7: -32.0 KiB in 2 sites"
done
# 600 marks, more than the loading arms as snapshots: goto and diff reach every one, its
# state rebuilt from the recording (16 KiB * 401 = 6.26 MiB at 'iteration 400')
env LD_LIBRARY_PATH="$FAKE" XDG_RUNTIME_DIR="$T/run" ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 \
    ${CULEAK_E2E_SHIM:+CULEAK_LIB=$CULEAK_E2E_SHIM} \
    "$B/culeak" record -o "$T/long.culeak" -- "$FAKE/client_static" growth 600 0 >"$T/rec.out" 2>&1 ||
    { cat "$T/rec.out"; fail "record of 600 marks failed"; }
start_sized 120 40 open "$T/long.culeak"
wait_for "RECORDING"
type_expect "goto iteration 400" "at mark iteration 400"
screen | grep -E "^ +[0-9]+\*? +6.26 MiB .*client_scenarios.c:$grow_line" >/dev/null || fail "the table is not at iteration 400"
type_expect "goto iteration 599" "at mark iteration 599"
type_expect "diff iteration 100 iteration 259" "diff iteration 100 -> iteration 259"
screen | grep -E "^ +[0-9]+\*? +\+2.48 MiB .*client_scenarios.c:$grow_line" >/dev/null || fail "diff iteration 100 iteration 259 is wrong"
type_expect "goto iteration 600" "no mark named 'iteration 600'; the nearest: 'iteration 599', 'iteration 598', 'iteration 597'"
# completion: sort's column then asc|desc; a site's id once (with one site in the table,
# Tab after `break 2 ` added another 2)
start_sized 120 40 open "$T/g.culeak"
wait_for "RECORDING"
tmux send-keys -t "$S" -l -- "sort site "
tmux send-keys -t "$S" Tab Tab
wait_for " 2 matches: asc desc"
tmux send-keys -t "$S" C-u
type_expect "filter grow_step" "filter 'grow_step': 1 site"
tmux send-keys -t "$S" -l -- "break 2 "
tmux send-keys -t "$S" Tab Tab Enter
wait_for "breakpoint 1 at grow_step"
# the same recording twice is one process, read once, and the output pane says so
start_sized 120 40 open "$T/g.culeak" "$T/g.culeak"
wait_for "RECORDING"
wait_for "is in an earlier recording too: read once"
screen | grep -q " 1 proc " || fail "the same recording twice is not one process"
# -ex and -x run once the recordings are read, in the order given; a failing one is said
# in the output pane and the next runs
printf '# after the -ex ones\ngoto iteration 20\ndiff s1\n' >"$T/cmds"
# (the quotes inside reach the shell that tmux runs the command line with)
start_sized 120 40 open -ex "'goto iteration 10'" -ex "'snapshot s1'" -ex frobnicate -x "$T/cmds" "$T/g.culeak"
wait_for "diff s1 -> iteration 20"
screen | grep -E "^ +[0-9]+\*? +\+160 KiB .*client_scenarios.c:$grow_line" >/dev/null || fail "-ex/-x: diff s1 is not to iteration 20"
screen | grep -q "\[culeak\] -ex: .*frobnicate" || fail "-ex: the failing command is not said in the output pane"
echo "console recordings e2e ok"
