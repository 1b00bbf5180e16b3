#!/usr/bin/env bash
# A plain `make` on a machine without a library's headers stops before any compile with one
# line naming what is missing and the command that installs it (a missing header is
# simulated by naming one that no system has); with the headers there it goes on.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; cat "$tmp/err"; exit 1; }

# a make of its own: not a job of the make that runs the suite (its jobserver's words)
unset MAKEFLAGS MFLAGS MAKELEVEL
make -n BUILD="$B" CULEAK_BUILD_HEADERS="libunwind.h culeak-no-such-header.h" >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" -ne 0 ] || fail "make went on without culeak-no-such-header.h"
[ "$(grep -c . "$tmp/err")" -eq 1 ] || fail "not one line"
grep -q "no culeak-no-such-header.h here: \`make deps\` installs the packages that the build needs" "$tmp/err" ||
    fail "the line does not name the header and make deps"
grep -q "libunwind.h" "$tmp/err" && fail "a header that is there is named"
make -n BUILD="$B" all >/dev/null 2>"$tmp/err" || fail "make all stopped with every header there"
echo "make_headers: ok"
