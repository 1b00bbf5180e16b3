#!/usr/bin/env bash
# culeak record on a job of several exec'd CUDA processes, with a FILE that has no %p:
# every process writes its own recording (FILE, FILE.PID), nothing is overwritten, a
# second run replaces the first run's files, and culeak report merges them per process; a
# job without CUDA calls writes nothing, and record says so.
set -u
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/$BUILD
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
job="$B/fakecuda/client_static leak 1 64; $B/fakecuda/client_driver leak 2 4096"
for run in 1 2; do
    LD_LIBRARY_PATH=$B/fakecuda "$B/culeak" record -o "$T/job.culeak" -- bash -c "$job" >"$T/out" 2>&1 ||
        fail "run $run: record exited $?: $(cat "$T/out")"
    files=$(ls "$T"/job.culeak* | wc -l)
    [ "$files" -eq 2 ] || fail "run $run: $files recordings, want 2: $(ls "$T")"
    [ -e "$T/job.culeak" ] || fail "run $run: the first process did not take job.culeak"
done
allocs=$(for f in "$T"/job.culeak*; do "$B/culeak" dump "$f" | grep -c '"type":"alloc"'; done | sort | tr '\n' ' ')
[ "$allocs" = "1 2 " ] || fail "allocations per recording: '$allocs', want '1 2 '"
"$B/culeak" report "$T"/job.culeak* >"$T/report" 2>&1 || fail "report exited $?"
grep -q "LEAK SUMMARY: 8256 bytes leaked in 3 allocations" "$T/report" || fail "merged report: $(cat "$T/report")"
[ "$(grep -c '^==== process' "$T/report")" -eq 2 ] || fail "report does not keep the two processes apart"
# a job that makes no CUDA call writes no recording, and record says so; its status is the job's
rc=0
"$B/culeak" record -o "$T/none.culeak" -- sh -c 'exit 3' >"$T/out" 2>&1 || rc=$?
[ "$rc" -eq 3 ] || fail "record of a job without CUDA calls exited $rc, want the job's 3"
[ ! -e "$T/none.culeak" ] || fail "a recording of a job without CUDA calls"
grep -qx "culeak record: no recording was written to $T/none.culeak: sh made no CUDA calls culeak saw" "$T/out" ||
    fail "record does not say that nothing was recorded: $(cat "$T/out")"
echo "record_job: ok"
