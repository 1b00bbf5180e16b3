#!/usr/bin/env bash
# `make run` ended the way its demo says, before the demo's last iteration: quit, then y,
# kills the job and leaves make with status 0 (the console's own status is the killed
# job's, 143, which make would report as an error).
set -u
. "$(dirname "$0")/tmux_harness.sh"
mkdir -p "$T/state"
tmux new-session -d -s "$S" -x 120 -y 40 \
    "cd '$ROOT' && env XDG_RUNTIME_DIR=$T/run XDG_STATE_HOME=$T/state TERM=xterm-256color DEMO_DELAY_MS=3000 \
     make run BUILD='$BUILD'; echo MAKE-RUN-DONE rc=\$?; sleep 600"
wait_for "RUNNING"
wait_for "loop_leak_sim.c:39"
type_expect "quit" "Quit anyway? (y or n)"
type_line "y"
wait_for "MAKE-RUN-DONE rc="
screen | grep -q "MAKE-RUN-DONE rc=0" || fail "make run, its demo ended by quit and y, exits non-zero"
echo "make_run_quit: ok"
