#!/usr/bin/env bash
# Threads queued behind a paused one (tmux, fake driver): eight threads reach a breakpoint
# at once, one pauses the job and the others wait their turn; after `delete` removes the
# breakpoint, `continue` lets them all go: nothing pauses for a breakpoint that is gone.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_hostile

cat >"$T/job.sh" <<JOB
#!/bin/sh
mkfifo "$T/gate"
exec 3<>"$T/gate"
exec "$FAKE/client_hostile" threadgate 8 <&3
JOB
chmod +x "$T/job.sh"
start -- "$T/job.sh"
wait_for "connected:"
type_line "break alloc_n"
wait_for "breakpoint 1 at alloc_n"
echo >"$T/gate"
wait_for "PAUSED in cuMemAlloc_v2"
type_line "delete"
wait_for "Delete all breakpoints? (y or n)"
type_line "y"
wait_for "deleted every breakpoint"
type_line "continue"
wait_for "EXITED (status 0)"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
echo "console_queued_holds: ok"
