#!/usr/bin/env bash
# Typing into the job at 80x24 and 120x40: keys go to the prompt until `input` (or
# Ctrl-]) hands the keyboard to the job, the status line says so, Ctrl-] takes it back.
set -u
. "$(dirname "$0")/tmux_harness.sh"

cat >"$T/ask.sh" <<'JOB'
#!/bin/sh
printf 'number? '
read x
echo "twice $x is $((x * 2))"
printf 'again? '
read y
echo "and $y"
while [ -d "$1" ]; do sleep 0.1; done # until the test is over (its console detaches it)
JOB
chmod +x "$T/ask.sh"

for size in "80 24" "120 40"; do
    start_sized $size -- "$T/ask.sh" "$T"
    wait_for "number?"
    type_line "5"                                    # the console has the keyboard
    wait_for "unknown command '5'"
    type_line "input"
    wait_for "KEYBOARD: THE JOB"
    type_line "21"
    wait_for "twice 21 is 42"
    tmux send-keys -t "$S" C-]
    wait_for "the keyboard is culeak's again"
    screen | grep -q "KEYBOARD: THE JOB" && fail "the status line still gives the keyboard to the job ($size)"
    type_line "info breakpoints"
    wait_for "no breakpoints (break SITE"
    tmux send-keys -t "$S" C-]                       # the key hands it over too
    wait_for "KEYBOARD: THE JOB"
    type_line "x y"
    wait_for "and x y"
    tmux send-keys -t "$S" C-]
    wait_for "the keyboard is culeak's again"
done
echo "console input e2e ok"
