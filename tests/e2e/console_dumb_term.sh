#!/usr/bin/env bash
# A terminal that cannot draw the console (TERM=dumb, a TERM without terminfo, no TERM):
# culeak says so, naming the terminal and what to run instead, exits non-zero, and the
# job never starts.
set -u
. "$(dirname "$0")/tmux_harness.sh"

printf '#!/bin/sh\ntouch "%s/started"\n' "$T" >"$T/job.sh"
chmod +x "$T/job.sh"
base=$ENVS
for term in dumb no-such-terminal-xyz ""; do
    ENVS="${base/TERM=xterm-256color/TERM=$term}"
    start_sized 80 24 -- "$T/job.sh"
    wait_for "CONSOLE-DONE rc=2"
    if [ -n "$term" ]; then
        screen | tr -d '\n' | grep -q "culeak: the terminal '$term' .*cannot" || fail "the terminal is not named ($term)"
    else
        screen | grep -q "culeak: TERM is not set" || fail "no word on the missing TERM"
    fi
    screen | tr -d '\n' | grep -q "culeak record -o FILE -- PROGRAM or culeak check -- PROGRAM" ||
        fail "no advice to record or check ($term)"
    [ -e "$T/started" ] && fail "the job started on a terminal that cannot draw ($term)"
done
echo "console dumb terminal e2e ok"
