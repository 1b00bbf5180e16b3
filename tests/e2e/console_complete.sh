#!/usr/bin/env bash
# Tab completion as gdb's: `diff ` offers "off" as its first word only (never "diff off
# off"); `break` and `show` complete the table's function names as well as its ids; `set`
# completes its settings and their values; `save` completes "breakpoints" as well as file
# names.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static

start -- "$FAKE/client_static" growth 5 0
wait_for "EXITED (status 0)"
wait_for "LEAK SUMMARY: "
# complete TYPED EXPECTED: TYPED, Tab (Tab twice: tabs="Tab Tab"), then a marker typed
# after it: the prompt then reads EXPECTED followed by the marker
complete() {
    tmux send-keys -t "$S" C-u
    tmux send-keys -t "$S" -l -- "$1"
    tmux send-keys -t "$S" ${tabs:-Tab}
    tmux send-keys -t "$S" -l -- "@@"
    wait_for "(culeak) $2@@"
}
tabs="Tab Tab" complete "diff " "diff off "
screen | grep -q "diff off off" && fail "diff offered off twice"
tmux send-keys -t "$S" C-u
type_expect "snapshot s1" "snapshot s1: "
complete "diff s1 " "diff s1 s1 "
complete "set au" "set auto-load "
complete "set auto-load s" "set auto-load safe-path "
complete "set mo" "set mouse "
complete "set mouse of" "set mouse off "
complete "save br" "save breakpoints "
complete "break grow_s" "break grow_step "
complete "show grow_s" "show grow_step "
tmux send-keys -t "$S" C-u
type_line "quit"
echo "console_complete: ok"
