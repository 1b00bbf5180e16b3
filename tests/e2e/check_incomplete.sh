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

# drop_exit.py IN OUT: the recording IN without its EXIT record (its last) in OUT
cat >"$T/drop_exit.py" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
pos, last = 8, None  # magic, then type:u8 length:uvarint payload (culeak-stream(5))
while pos < len(data):
    start, pos = pos, pos + 1
    n = shift = 0
    while True:
        b = data[pos]; pos += 1
        n |= (b & 0x7f) << shift; shift += 7
        if not b & 0x80:
            break
    pos += n
    last = (data[start], start)
assert pos == len(data) and last[0] == 6, last  # the last record is the EXIT (type 6)
open(sys.argv[2], "wb").write(data[:last[1]])
PY

# check_rc WANT GREP JOB [OPTION...]: culeak check [OPTION...] -- bash -c JOB exits WANT (a
# list: "1 2") and says GREP on stderr
check_rc() {
    "$B/culeak" check "${@:4}" -- bash -c "$3" >"$T/out" 2>"$T/err"
    local rc=$?
    [[ " $1 " == *" $rc "* ]] || fail "check -- $3: status $rc, want $1: $(cat "$T/err")"
    grep -q -- "$2" "$T/err" || fail "check -- $3: no '$2' in: $(cat "$T/err")"
    # where either may come, the status is the report's: 1 with leaks, 2 without
    if [ "$1" = "1 2" ]; then
        grep -qE "^LEAK SUMMARY: [1-9]" "$T/err" && want=1 || want=2
        [ "$rc" -eq "$want" ] || fail "check -- $3: status $rc, but the report says $want: $(cat "$T/err")"
    fi
}
# nothing could be written: the leaking program's recording is empty
check_rc 2 "no recording could be read" "ulimit -f 0; exec $F/client_static leak 3 4096"
# cut off after 8 KiB (no leak in the program): the cut is said, and check fails
# (2: incomplete, or 1 when the cut falls between an allocation and its free)
# (the limit may fall between two records: then the recording ends before its process did)
check_rc "1 2" "cut off\|ends before the process did" "ulimit -f 8; exec $F/client_static long 50000 0"
# leaks and an incomplete recording together: the leaks' status (1) comes first, as
# culeak(1) orders them; with --error-exitcode 0 the leaks say nothing, and the incomplete
# recording still fails (2). The job's child leaks 2 allocations and is killed by SIGKILL
# (its recording holds them, and no EXIT record); the job itself ends with status 0.
cut="$F/client_hostile killnow 2 9; true"
check_rc 1 "ends before the process did" "$cut"
grep -q "8.00 KiB in 2 allocations\|2 allocations" "$T/err" || fail "leaks and a cut recording: the leaks are not reported: $(cat "$T/err")"
check_rc 2 "incomplete: the report above may miss leaks" "$cut" --error-exitcode 0
check_rc 0 "" "$F/client_static leak 2 4096" --error-exitcode 0
# a child killed with SIGKILL (its allocation written within 100 ms, or under load not
# yet: an empty recording), the job's status 0
check_rc "1 2" "ends before the process did\|no recording could be read" "$F/client_hostile kill9; true"

# the limit never kills the program: its writes past the limit fail, no SIGXFSZ
"$B/culeak" record -o "$T/r.culeak" -- bash -c "ulimit -f 8; exec $F/client_static long 50000 0" \
    >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" -eq 0 ] || fail "record: the program ended with status $rc under a file size limit: $(cat "$T/err")"
grep -q "cannot write the recording" "$T/err" || fail "the shim did not say it stopped: $(cat "$T/err")"
# dump reads up to the cut and says so with status 3, as culeak(1) documents (a cut between
# two records shows as a recording that ends before its process did)
"$B/culeak" dump "$T/r.culeak" >/dev/null 2>"$T/err"
rc=$?
[ "$rc" -eq 3 ] || fail "dump of a cut recording: status $rc, want 3"
grep -q "cut off\|ends before its process did" "$T/err" || fail "dump does not say the recording was cut"
# a recording that stops between two records (its EXIT never written): dump says so, 3
"$B/culeak" record -o "$T/whole.culeak" -- "$F/client_static" leak 2 4096 >/dev/null 2>&1
python3 "$T/drop_exit.py" "$T/whole.culeak" "$T/noexit.culeak" || fail "could not drop the EXIT record"
"$B/culeak" dump "$T/whole.culeak" >/dev/null 2>"$T/err" || fail "dump of a whole recording: status $?: $(cat "$T/err")"
"$B/culeak" dump "$T/noexit.culeak" >/dev/null 2>"$T/err"
rc=$?
[ "$rc" -eq 3 ] || fail "dump of a recording without its EXIT: status $rc, want 3"
grep -q "ends before its process did" "$T/err" || fail "dump does not say the recording ends early: $(cat "$T/err")"
echo "check_incomplete: ok"
