#!/usr/bin/env bash
# README's first command as a new user types it: `make run` in a terminal (tmux) builds what
# is missing and opens the console on the loop-leak demo (the simulated one without a GPU),
# the job runs to its end with its leak on screen, and `quit` leaves with status 0.
set -u
. "$(dirname "$0")/tmux_harness.sh"
mkdir -p "$T/state"
tmux new-session -d -s "$S" -x 120 -y 40 \
    "cd '$ROOT' && env XDG_RUNTIME_DIR=$T/run XDG_STATE_HOME=$T/state TERM=xterm-256color DEMO_DELAY_MS=20 \
     make run BUILD='$BUILD'; echo MAKE-RUN-DONE rc=\$?; sleep 600"
wait_for " culeak "
wait_for "loop_leak"
wait_for "EXITED (status 0)"
wait_for "76.0 MiB"
screen | grep -q "loop_leak.*\.c[u]*:[0-9]" || fail "no leak site on screen"
type_line "quit"
wait_for "MAKE-RUN-DONE rc=0"
echo "make_run: ok"
