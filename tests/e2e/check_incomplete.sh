#!/usr/bin/env bash
# culeak check never passes on an incomplete recording: one that could not be written (a
# file size limit stands for a full disk), one cut off, one whose process was killed with
# SIGKILL before writing its end. The job itself is never harmed by the limit: the shim's
# write fails, no SIGXFSZ kills the program.
set -u
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/$BUILD
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export LD_LIBRARY_PATH=$B/fakecuda
F=$B/fakecuda

# check_rc WANT GREP JOB: culeak check -- bash -c JOB exits WANT (a list: "1 2") and says
# GREP on stderr
check_rc() {
    "$B/culeak" check -- bash -c "$3" >"$T/out" 2>"$T/err"
    local rc=$?
    [[ " $1 " == *" $rc "* ]] || fail "check -- $3: status $rc, want $1: $(cat "$T/err")"
    grep -q -- "$2" "$T/err" || fail "check -- $3: no '$2' in: $(cat "$T/err")"
}
# nothing could be written: the leaking program's recording is empty
check_rc 2 "no recording could be read" "ulimit -f 0; exec $F/client_static leak 3 4096"
# cut off after 8 KiB (no leak in the program): the cut is said, and check fails
# (2: incomplete, or 1 when the cut falls between an allocation and its free)
check_rc "1 2" "cut off" "ulimit -f 8; exec $F/client_static long 50000 0"
# a child killed with SIGKILL (its allocation written within 100 ms, or under load not
# yet: an empty recording), the job's status 0
check_rc "1 2" "ends before the process did\|no recording could be read" "$F/client_hostile kill9; true"

# the limit never kills the program: its writes past the limit fail, no SIGXFSZ
"$B/culeak" record -o "$T/r.culeak" -- bash -c "ulimit -f 8; exec $F/client_static long 50000 0" \
    >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" -eq 0 ] || fail "record: the program ended with status $rc under a file size limit: $(cat "$T/err")"
grep -q "cannot write the recording" "$T/err" || fail "the shim did not say it stopped: $(cat "$T/err")"
# dump reads up to the cut and says so with status 3, as culeak(1) documents
"$B/culeak" dump "$T/r.culeak" >/dev/null 2>"$T/err"
rc=$?
[ "$rc" -eq 3 ] || fail "dump of a cut recording: status $rc, want 3"
grep -q "cut off" "$T/err" || fail "dump does not say where the recording was cut"
echo "check_incomplete: ok"
