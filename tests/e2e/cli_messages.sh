#!/usr/bin/env bash
# First messages of the command line: a recording that cannot be read is one line, named
# after the command that could not read it; an option that does nothing without another
# is refused, as the usage error it is.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; for f in "$tmp"/*.err; do [ -f "$f" ] && { echo "== $f"; cat "$f"; }; done; exit 1; }
C=$B/culeak

# a missing recording: one line, and the exit status of a failure
for cmd in report dump; do
    "$C" $cmd "$tmp/none.culeak" >/dev/null 2>"$tmp/$cmd.err"
    rc=$?
    [ "$rc" -eq 1 ] || fail "culeak $cmd of a missing file: exit $rc"
    [ "$(wc -l <"$tmp/$cmd.err")" -eq 1 ] || fail "culeak $cmd of a missing file: not one line"
    grep -qxF "culeak $cmd: cannot read $tmp/none.culeak: No such file or directory" "$tmp/$cmd.err" ||
        fail "culeak $cmd of a missing file: not named after the command"
done

# --max-increase is a threshold of --error-exitcode: alone it would be ignored
"$C" report --baseline "$tmp/a.culeak" --max-increase 4096 "$tmp/b.culeak" >/dev/null 2>"$tmp/max.err"
rc=$?
[ "$rc" -eq 2 ] && grep -qxF "culeak report: --max-increase goes with --error-exitcode" "$tmp/max.err" ||
    fail "--max-increase without --error-exitcode: exit $rc"
echo "cli_messages: ok"
