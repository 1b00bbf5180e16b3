#!/usr/bin/env bash
# `make run` on a machine without a GPU (demo/run.sh --sim, in tmux): the console opens on
# the simulated loop-leak demo with its site, and ending it the way it says (quit, y)
# ends `make run` without an error; a demo left to run to its end exits 0 too.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static

# run_demo DELAY_MS: demo/run.sh --sim in the session; RUN-DONE rc=N follows its exit
run_demo() {
    tmux kill-session -t "$S" 2>/dev/null
    tmux new-session -d -s "$S" -x 120 -y 40 \
        "cd '$ROOT' && env $ENVS BUILD=$BUILD DEMO_DELAY_MS=$1 demo/run.sh --sim; echo RUN-DONE rc=\$?; sleep 600"
}

# 1. quit while the demo runs (3 s per iteration: a minute), y: the job is killed, rc 0
run_demo 3000
wait_for "RUNNING"
wait_for "loop_leak_sim.c:39"
type_expect "quit" "Quit anyway? (y or n)"
type_line "y"
wait_for "RUN-DONE rc="
screen | grep -q "RUN-DONE rc=0" || fail "make run's demo, ended by quit and y, exits non-zero"

# 2. the demo runs to its end (no delay): quit leaves with its status, 0
run_demo 0
wait_for "EXITED (status 0)"
type_line "quit"
wait_for "RUN-DONE rc="
screen | grep -q "RUN-DONE rc=0" || fail "make run's demo, run to its end, exits non-zero"
echo "demo_console: ok"
