#!/usr/bin/env bash
# The console's manners, at 80x24 and 120x40: delete (all) asks (y or n) as gdb does,
# and takes its answers as gdb does (n, y; N, Y and words after blanks at the second size);
# info processes says paused while the job is; Up/Down recall history once the prompt
# holds text; Ctrl-Z says why it does nothing; export says why it cannot write; counts
# of one are singular.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static

# wait_prompt TEXT: the prompt line (above the key bar) is TEXT
wait_prompt() {
    local end=$((SECONDS + WAIT_S))
    until [ "$(screen | tail -n 2 | head -n 1 | sed 's/ *$//')" = "$1" ]; do
        [ "$SECONDS" -lt "$end" ] || fail "the prompt never read: $1"
        sleep 0.1
    done
}
for size in "80 24" "120 40"; do
    if [ "$size" = "80 24" ]; then no=n yes=y; else no=N yes="  Yes"; fi
    start_sized $size -- "$FAKE/client_static" until "$T/stop" 100000   # runs while the test does
    wait_for "RUNNING"
    type_line "break run_until"
    wait_for "PAUSED in cuMemAlloc_v2"
    type_line "info processes"
    wait_for "1 process listed in the output pane"
    screen | grep -qE "^  pid [0-9]+ +ppid [0-9]+ +paused " || fail "info processes does not say paused ($size)"
    type_line "delete"
    wait_for "Delete all breakpoints? (y or n)"
    type_line "$no"
    wait_for "Not confirmed."
    type_line "info breakpoints"
    wait_for "1 breakpoint listed in the output pane"
    type_line "delete"
    wait_for "Delete all breakpoints? (y or n)"
    type_line "$yes"
    wait_for "deleted every breakpoint"
    type_line "continue"
    wait_for "continuing"
    type_line "filter client_scenarios"
    wait_for "filter 'client_scenarios': 1 site"
    screen | grep -q "1 sites" && fail "1 sites ($size)"
    type_line "export /nonexistent-dir/table.csv"
    wait_for "cannot write /nonexistent-dir/table.csv: No such file or directory"
    tmux send-keys -t "$S" C-z
    wait_for "Ctrl-Z suspends neither culeak nor the job"
    # Up with text on the prompt recalls the history; without, it moves in the table
    tmux send-keys -t "$S" -l "x"
    tmux send-keys -t "$S" BSpace
    tmux send-keys -t "$S" -l "f"
    wait_prompt "(culeak) f"
    tmux send-keys -t "$S" Up
    wait_prompt "(culeak) export /nonexistent-dir/table.csv"
    tmux send-keys -t "$S" Up
    wait_prompt "(culeak) filter client_scenarios"
    tmux send-keys -t "$S" C-u
    wait_prompt "(culeak)"
    tmux send-keys -t "$S" Up                       # an empty prompt: the table's
    wait_prompt "(culeak)"
    screen | tail -n 2 | head -n 1 | grep -q "export" && fail "Up on an empty prompt recalled history ($size)"
done
echo "console manners e2e ok"
