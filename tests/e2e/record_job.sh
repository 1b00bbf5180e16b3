#!/usr/bin/env bash
# culeak record on a job of several exec'd CUDA processes, with a FILE that has no %p:
# every process writes its own recording (FILE, FILE.PID), nothing is overwritten, a
# second run replaces the first run's files, and culeak report merges them per process; a
# job without CUDA calls writes nothing, and record says so.
set -u
. "$(dirname "$0")/lib.sh"
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
# the same recordings given twice: each process read once, and said so
"$B/culeak" report "$T"/job.culeak* "$T"/job.culeak* >"$T/twice" 2>"$T/err" || fail "report twice exited $?"
grep -q "LEAK SUMMARY: 8256 bytes leaked in 3 allocations" "$T/twice" || fail "report twice: $(cat "$T/twice")"
[ "$(grep -c 'is in an earlier recording too: read once' "$T/err")" -eq 2 ] || fail "report twice warns: $(cat "$T/err")"
# a job whose forked child makes CUDA calls: record names both files, and report of the
# first alone says that the child's is left out (and is quiet when given both)
LD_LIBRARY_PATH=$B/fakecuda "$B/culeak" record -o "$T/fork.culeak" -- "$B/fakecuda/client_static" fork \
    >"$T/out" 2>"$T/err" || fail "record of the forking job exited $?: $(cat "$T/out" "$T/err")"
child=$(sed -n 's/.*child_cuda=\([0-9]*\).*/\1/p' "$T/out")
if [ -z "$child" ] || [ ! -e "$T/fork.culeak.$child" ]; then fail "no recording of the child: $(ls "$T")"; fi
grep -qxF "culeak record: 2 processes wrote recordings: $T/fork.culeak $T/fork.culeak.$child (culeak report $T/fork.culeak $T/fork.culeak.* reads them together)" "$T/err" ||
    fail "record does not list the files it wrote: $(cat "$T/err")"
"$B/culeak" report "$T/fork.culeak" >/dev/null 2>"$T/err" || fail "report of the parent exited $?"
grep -qF "culeak: warning: 1 more recording of the job that wrote $T/fork.culeak is not read: $T/fork.culeak.$child" "$T/err" ||
    fail "report does not say the child's recording is left out: $(cat "$T/err")"
"$B/culeak" report "$T"/fork.culeak* >/dev/null 2>"$T/err" || fail "report of both exited $?"
[ ! -s "$T/err" ] || fail "report of both files warns: $(cat "$T/err")"
LD_LIBRARY_PATH=$B/fakecuda "$B/culeak" record -o "$T/pid.%p.culeak" -- "$B/fakecuda/client_static" fork \
    >"$T/out" 2>"$T/err" || fail "record -o %p of the forking job exited $?"
grep -qE "^culeak record: 2 processes wrote recordings: $T/pid\.[0-9]+\.culeak $T/pid\.[0-9]+\.culeak \(" "$T/err" ||
    fail "record -o %p does not list the files it wrote: $(cat "$T/err")"
# a job that makes no CUDA call writes no recording, and record says so; its status is the job's
rc=0
"$B/culeak" record -o "$T/none.culeak" -- sh -c 'exit 3' >"$T/out" 2>&1 || rc=$?
[ "$rc" -eq 3 ] || fail "record of a job without CUDA calls exited $rc, want the job's 3"
[ ! -e "$T/none.culeak" ] || fail "a recording of a job without CUDA calls"
grep -qx "culeak record: no recording was written to $T/none.culeak: sh made no CUDA calls culeak saw" "$T/out" ||
    fail "record does not say that nothing was recorded: $(cat "$T/out")"
echo "record_job: ok"
