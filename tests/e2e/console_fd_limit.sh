#!/usr/bin/env bash
# The console under a low descriptor limit (tmux, fake driver; prlimit --nofile=14:14, a
# limit the job inherits too): six processes one after another. Each one is in the
# report, or named with why it could not be taken (the descriptor limit), and at least
# four are taken: the symbolizer keeps no module's file open between lookups there.
# Before, the first was shown and the other five only named (the job's ELF files, held
# open by the symbolizer, took the descriptors); before that, lost without a word.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static
command -v prlimit >/dev/null || { echo "prlimit missing"; exit 1; }
mkdir "$T/wrap"
printf '#!/bin/sh\nexec prlimit --nofile=14:14 "%s/culeak" "$@"\n' "$B" >"$T/wrap/culeak"
chmod +x "$T/wrap/culeak"
printf '#!/bin/sh\ncd "%s" || exit 1\nfor i in 1 2 3 4 5 6; do ./client_static leak 1 $((i * 4096)) >/dev/null; done\n' \
    "$FAKE" >"$T/six.sh"
chmod +x "$T/six.sh"
B=$T/wrap start_sized 160 100 -- "$T/six.sh"
wait_for "EXITED (status 0)"
wait_for "LEAK SUMMARY: "
counted=$(screen | sed -n 's/.*LEAK SUMMARY: [0-9]* bytes leaked in \([0-9]*\) allocations.*/\1/p' | head -n 1)
# the output pane's line, or the message line once the reports scrolled it away
named=$(screen | grep -o 'pid [0-9]*: not traced: .*descriptor limit (RLIMIT_NOFILE 14)' |
    sed 's/: not traced.*//' | sort -u | wc -l)
echo "console_fd_limit: $counted processes in the report, $named named as not traced"
[ "$((counted + named))" -eq 6 ] || fail "$counted in the report and $named named, of 6 processes"
[ "$counted" -ge 4 ] || fail "only $counted of 6 processes taken under the limit"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
echo "console_fd_limit: ok"
