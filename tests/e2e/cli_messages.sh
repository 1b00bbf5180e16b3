#!/usr/bin/env bash
# First messages of the command line: a recording that cannot be read is one line, named
# after the command that could not read it; an option that does nothing without another
# is refused, as the usage error it is.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
show_failure() { for f in "$T"/*.err; do [ -f "$f" ] && { echo "== $f"; cat "$f"; }; done; }
C=$B/culeak

# a missing recording: one line, and the exit status of a failure
for cmd in report dump; do
    "$C" $cmd "$T/none.culeak" >/dev/null 2>"$T/$cmd.err"
    rc=$?
    [ "$rc" -eq 1 ] || fail "culeak $cmd of a missing file: exit $rc"
    [ "$(wc -l <"$T/$cmd.err")" -eq 1 ] || fail "culeak $cmd of a missing file: not one line"
    grep -qxF "culeak $cmd: cannot read $T/none.culeak: No such file or directory" "$T/$cmd.err" ||
        fail "culeak $cmd of a missing file: not named after the command"
done

# --max-increase is a threshold of --error-exitcode: alone it would be ignored
"$C" report --baseline "$T/a.culeak" --max-increase 4096 "$T/b.culeak" >/dev/null 2>"$T/max.err"
rc=$?
[ "$rc" -eq 2 ] && grep -qxF "culeak report: --max-increase goes with --error-exitcode" "$T/max.err" ||
    fail "--max-increase without --error-exitcode: exit $rc"
echo "cli_messages: ok"
