#!/usr/bin/env bash
# The console on a job that never makes a CUDA call (tmux): no process connects, and the
# console says so at the job's end rather than "no leaks: every allocation was freed".
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static
start -- /bin/sh -c 'echo job-ran'
wait_for "EXITED (status 0)"
wait_for "no process of the job connected"
screen | grep -q "no leaks" && fail "the console says 'no leaks' of a job it never saw"
echo "console_no_connection: ok"
