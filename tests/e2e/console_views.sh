#!/usr/bin/env bash
# What the views show at 80x24 and 120x40: sites keep file:line in the table and the
# stack pane's title.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static

for size in "80 24" "120 40"; do
    start_sized $size -- "$FAKE/client_static" long 40 100000
    wait_for "RUNNING"
    wait_for "stack of #"
    screen | grep -E "^ +[0-9]+ .*client_scenarios\.c:[0-9]+ *$" >/dev/null ||
        fail "the table's site lacks file:line ($size)"
    screen | grep -E "^ stack of #[0-9]+ .*client_scenarios\.c:[0-9]+  \(1 stack" >/dev/null ||
        fail "the stack pane's title lacks file:line ($size)"
done
echo "console views e2e ok"
