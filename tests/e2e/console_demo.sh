#!/usr/bin/env bash
# make run's console demo (demo/run.sh --sim) paces its 20 iterations to last a minute,
# time enough to set a breakpoint that fires; a breakpoint set after the job exited says
# it can never fire.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static

tmux kill-session -t "$S" 2>/dev/null
tmux new-session -d -s "$S" -x 120 -y 40 \
    "env $ENVS BUILD=$BUILD $ROOT/demo/run.sh --sim; echo CONSOLE-DONE rc=\$?; sleep 600"
wait_for "RUNNING"
# the job's own command line (the header cuts it where the checkout's path is long)
pid=$(screen | sed -n 's/.*\[culeak\] started pid \([0-9]*\);.*/\1/p' | head -n 1)
[ -n "$pid" ] || fail "no job pid on the screen"
delay=$(tr '\0' '\n' <"/proc/$pid/cmdline" | sed -n '/^--delay-ms$/{n;p;}')
[ -n "$delay" ] && [ "$delay" -ge 3000 ] || fail "20 iterations $delay ms apart end before a newcomer has typed help"
type_line "break main live > 4MiB"
wait_for "PAUSED in cuMemAlloc"
screen | grep -q "EXITED" && fail "the demo ended before its breakpoint fired"

start -- "$FAKE/client_static" leak 2 4096
wait_for "EXITED (status 0)"
type_line "break 1"
wait_for "the job has exited: a breakpoint set now can never fire"
echo "console demo e2e ok"
