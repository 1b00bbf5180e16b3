#!/usr/bin/env bash
# Resizing the console's terminal to any size while a job runs: every height from 1 row up
# (and narrow widths) draws the screen or says the terminal is too small, the console never
# writes outside its screen (under make SAN=1 ASan would stop it), the prompt still takes
# commands, and back at 80x24 the panes return.
set -u
. "$(dirname "$0")/tmux_harness.sh"

cat >"$T/job.sh" <<JOB
#!/bin/sh
i=0
while [ -d "$T" ]; do i=\$((i + 1)); echo "job line \$i"; sleep 0.05; done
JOB
chmod +x "$T/job.sh"

start_sized 80 24 -- "$T/job.sh"
wait_for "job line 3"
for rows in $(seq 12 -1 1) $(seq 1 12); do
    tmux resize-window -t "$S" -x 80 -y "$rows"
    sleep 0.1
    on_screen "CONSOLE-DONE" && fail "the console ended at 80x$rows"
done
tmux resize-window -t "$S" -x 80 -y 5
wait_for "terminal too small"
for cols in $(seq 30 -1 1) $(seq 1 30); do
    tmux resize-window -t "$S" -x "$cols" -y 24
    sleep 0.05
    on_screen "CONSOLE-DONE" && fail "the console ended at ${cols}x24"
done
tmux resize-window -t "$S" -x 80 -y 24
type_expect "frobnicate" "unknown command 'frobnicate'"
screen | head -n 1 | grep -q "^ culeak .*RUNNING" || fail "no header after the terminal grew back to 80x24"
screen | sed -n 23p | grep -q "^(culeak)" || fail "no prompt above the key bar at 80x24"
screen | sed -n 24p | grep -q "^F1Help" || fail "no key bar on the last line at 80x24"
# the prompt takes commands on a screen too small for the panes
tmux resize-window -t "$S" -x 80 -y 4
wait_for "terminal too small"
type_line "quit"
wait_for "(y or n)"
type_line "y"
wait_for "CONSOLE-DONE rc="
exit 0
