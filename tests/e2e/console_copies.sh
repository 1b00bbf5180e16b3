#!/usr/bin/env bash
# The console's copy of the stream (what `save` writes): on disk under $XDG_CACHE_HOME,
# not in the runtime directory; bounded by CULEAK_COPY_LIMIT, and `save` says when what it
# saved is incomplete or could not be written; a console killed with SIGKILL leaves its
# session behind, and the next console removes it.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static
ENVS="$ENVS XDG_CACHE_HOME=$T/cache"
console_pid() { pgrep -P "$(tmux display-message -p -t "$S" '#{pane_pid}')" -x culeak; }

# 1. a limit of 4 KiB: the copy stops, the output pane says so, save says what is missing
ENVS="$ENVS CULEAK_COPY_LIMIT=4K" start -- "$FAKE/client_static" long 2000 0
wait_for "EXITED (status 0)"
wait_for "its copy stopped after"
ls "$T"/cache/culeak/session-*/conn-*.culeak >/dev/null 2>&1 || fail "no stream copy under \$XDG_CACHE_HOME"
ls "$T"/run/culeak/session-*/conn-* >/dev/null 2>&1 && fail "stream copies in the runtime directory"
type_line "save $T/partial.culeak"
wait_for "1 incomplete (pid"
[ -s "$T/partial.culeak" ] || fail "save wrote nothing of the incomplete copy"
type_line "save /nonexistent/dir/x.culeak"
wait_for "cannot write /nonexistent/dir/x.culeak: No such file or directory"

# 2. killed with SIGKILL: its session stays; the next console removes it
old=$(console_pid)
kill -9 "$old"
wait_for "CONSOLE-DONE rc=137"
[ -d "$T/cache/culeak/session-$old" ] || fail "no session left behind to clean up (test set-up)"
start -- "$FAKE/client_static" long 3 1000
wait_for "EXITED (status 0)"
[ -d "$T/cache/culeak/session-$old" ] && fail "the dead console's stream copies are still there"
[ -d "$T/run/culeak/session-$old" ] && fail "the dead console's session directory is still there"
[ -e "$T/run/culeak/console-$old.sock" ] && fail "the dead console's socket is still there"
type_line "save $T/whole.culeak"
wait_for "saved the recording to $T/whole.culeak"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
echo "console_copies: ok"
