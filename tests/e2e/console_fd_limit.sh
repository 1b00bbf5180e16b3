#!/usr/bin/env bash
# The console under a low descriptor limit (tmux, fake driver; prlimit --nofile=14:14, a
# limit the job inherits too): six processes of a job at once. Every one is either in
# the table (the console keeps descriptors in reserve to take a ring at its limit) or
# named in the output pane with why it could not be taken; none is lost without a word.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static
command -v prlimit >/dev/null || { echo "prlimit missing"; exit 1; }
mkdir "$T/wrap"
printf '#!/bin/sh\nexec prlimit --nofile=14:14 "%s/culeak" "$@"\n' "$B" >"$T/wrap/culeak"
chmod +x "$T/wrap/culeak"
printf '#!/bin/sh\ncd "%s" || exit 1\nfor i in 1 2 3 4 5 6; do ./client_static leak 1 $((i * 4096)) >/dev/null & done\nwait\n' \
    "$FAKE" >"$T/six.sh"
chmod +x "$T/six.sh"
B=$T/wrap start -- "$T/six.sh"
wait_for "EXITED (status 0)"
wait_for "leak report"
type_line "info processes"
wait_for "processes listed in the output pane"
listed=$(screen | grep -cE '^ +pid [0-9]+ .*client_static leak 1')
refused=$(screen | grep -c 'not traced: ')
echo "console_fd_limit: $listed processes in the table, $refused refused by name"
[ $((listed + refused)) -eq 6 ] || fail "$listed listed and $refused named of 6 processes"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
echo "console_fd_limit: ok"
