#!/usr/bin/env bash
# Two processes of one job with the same pid (a long job's pids wrap): each keeps its own
# recording and both leaks are counted, by check and by record with a %p pattern (before:
# the second process's recording replaced the first's, whose leak was lost without a
# word). The job runs in a pid namespace of its own (unshare, as root; otherwise SKIP),
# where the next pid can be set.
set -u
. "$(dirname "$0")/lib.sh"
[ -x "$B/fakecuda/client_static" ] || fail "fake driver not built"
export LD_LIBRARY_PATH=$B/fakecuda
cc -O2 -I"$ROOT/tests/e2e/c" -o "$T/pid_again" "$ROOT/tests/e2e/c/pid_again.c" -ldl || fail "cannot build the job"
in_ns() { unshare --pid --fork --mount-proc "$@"; }
in_ns true 2>/dev/null || { echo "SKIP: unshare --pid needs root"; exit 0; }

in_ns "$B/culeak" check -- "$T/pid_again" 4096 8192 >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" -ne 3 ] || { echo "SKIP: the pid could not be set back here"; exit 0; }
grep -q '^pid_again: \([0-9]*\) and \1$' "$T/out" || fail "the job did not reuse its pid: $(cat "$T/out")"
[ "$rc" -eq 1 ] || fail "check exited $rc, not 1: $(tail -n 5 "$T/err")"
grep -q "LEAK SUMMARY: 12288 bytes leaked in 2 allocations" "$T/err" ||
    fail "one process's leak is lost: $(grep 'LEAK SUMMARY' "$T/err")"

mkdir "$T/rec"
in_ns "$B/culeak" record -o "$T/rec/trace.%p.culeak" -- "$T/pid_again" 4096 8192 >"$T/out" 2>"$T/err" ||
    fail "record failed: $(tail -n 5 "$T/err")"
[ "$(ls "$T/rec" | wc -l)" -eq 2 ] || fail "not two recordings: $(ls "$T/rec")"
"$B/culeak" report "$T"/rec/* >"$T/report" 2>&1
grep -q "LEAK SUMMARY: 12288 bytes leaked in 2 allocations" "$T/report" ||
    fail "the recordings do not hold both leaks: $(grep 'LEAK SUMMARY' "$T/report"); $(ls "$T/rec")"
echo "pid_again: ok ($(ls "$T/rec" | tr '\n' ' '))"
