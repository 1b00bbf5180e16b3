#!/usr/bin/env bash
# help at 80x24 and 120x40: a view over the panes that scrolls to its end, opened by
# `help`, `?` on an empty prompt and F1, closed by q, Esc and F1; help with a prefix.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static

for size in "80 24" "120 40"; do
    start_sized $size -- "$FAKE/client_static" until "$T/stop" 100000
    wait_for "RUNNING"
    type_line "help"
    wait_for " help  lines 1-"
    screen | grep -q "help \[COMMAND\]" || fail "the first command is not shown ($size)"
    for i in 1 2 3 4 5 6 7 8 9 10 11 12; do tmux send-keys -t "$S" NPage; done
    wait_for "? or F1"                       # the keys, at the very end
    tmux send-keys -t "$S" q
    wait_for "sort:live"
    screen | grep -q " help  lines" && fail "q did not close help ($size)"
    tmux send-keys -t "$S" '?'
    wait_for " help  lines 1-"
    tmux send-keys -t "$S" Escape
    wait_for "sort:live"
    tmux send-keys -t "$S" F1
    wait_for " help  lines 1-"
    tmux send-keys -t "$S" F1
    wait_for "sort:live"
    type_line "help snap"
    wait_for " help snap  lines 1-"
    screen | grep -q "^ snapshots" || fail "help snap lacks snapshots ($size)"
    screen | grep -q "^ snapshot \[NAME\]" || fail "help snap lacks snapshot ($size)"
    type_line "info breakpoints"              # typing closes help and runs the command
    wait_for "no breakpoints (break SITE"
    screen | grep -q " help snap  lines" && fail "typing did not close help ($size)"
done
echo "console help e2e ok"
