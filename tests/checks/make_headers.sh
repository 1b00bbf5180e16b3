#!/usr/bin/env bash
# A plain `make` on a machine without a library's headers stops before any compile with one
# line naming what is missing and the command that installs it (a missing header is
# simulated by naming one that no system has); with the headers there it goes on.
set -uo pipefail
. "$(dirname "$0")/../e2e/lib.sh"
cd "$ROOT"
show_failure() { cat "$T/err"; }

# a make of its own: not a job of the make that runs the suite (its jobserver's words)
unset MAKEFLAGS MFLAGS MAKELEVEL
make -n BUILD="$BUILD" CULEAK_BUILD_HEADERS="libunwind.h culeak-no-such-header.h" >/dev/null 2>"$T/err"
rc=$?
[ "$rc" -ne 0 ] || fail "make went on without culeak-no-such-header.h"
[ "$(grep -c . "$T/err")" -eq 1 ] || fail "not one line"
grep -q "no culeak-no-such-header.h here: \`make deps\` installs the packages that the build needs" "$T/err" ||
    fail "the line does not name the header and make deps"
grep -q "libunwind.h" "$T/err" && fail "a header that is there is named"
make -n BUILD="$BUILD" all >/dev/null 2>"$T/err" || fail "make all stopped with every header there"
echo "make_headers: ok"
