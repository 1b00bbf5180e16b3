#!/usr/bin/env bash
# culeak check's exit status: a program that failed (non-zero status, or killed by a
# signal: 128+N as shells say) keeps its status whether it leaked or not; otherwise leaks
# give --error-exitcode (default 1; 0 turns it off: the program's status), else the
# program's status.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
export LD_LIBRARY_PATH=$B/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ulimit -c 0 # the SIGSEGV below leaves no core file
# in a sanitizer build (make SAN=1) the program dies of its SIGSEGV, as without it
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0
show_failure() { cat "$T"/* 2>/dev/null | head -40; }

# want STATUS WHAT CHECK-ARGS... -- PROGRAM...
want() {
    local status=$1 what=$2 rc
    shift 2
    set +e
    "$B/culeak" check "$@" >"$T/out" 2>"$T/err"
    rc=$?
    set -e
    [ "$rc" -eq "$status" ] || fail "$what: exit $rc, want $status"
}
H=$B/fakecuda/client_hostile
S=$B/fakecuda/client_static

# the program failed: its status wins over the leaks, whatever --error-exitcode says
want 3 "leak, then _exit(3)" -- "$H" exit
grep -q "LEAK SUMMARY: [1-9][0-9]* bytes leaked in 1 allocations" "$T/err" || fail "leak not reported"
want 3 "leak, then _exit(3), --error-exitcode 7" --error-exitcode 7 -- "$H" exit
want 3 "leak, then _exit(3), --error-exitcode 0" --error-exitcode 0 -- "$H" exit
want 3 "leak under sh, then exit 3, --error-exitcode 0" --error-exitcode 0 -- sh -c "'$S' leak 2 64; exit 3"
want 139 "leak, then SIGSEGV" -- "$H" segv
grep -q "LEAK SUMMARY: [1-9][0-9]* bytes leaked in 1 allocations" "$T/err" || fail "leak not reported at SIGSEGV"
want 139 "leak, then SIGSEGV, --error-exitcode 0" --error-exitcode 0 -- "$H" segv
# no leak: the program's status, a failure as well
want 5 "no leak, exit 5" -- sh -c "'$S' leak 0 64; exit 5"
want 0 "no leak, exit 0" -- "$S" leak 0 64
# the program succeeded: leaks give --error-exitcode; 0 turns it off
want 1 "leak, exit 0" -- "$S" leak 2 64
want 9 "leak, exit 0, --error-exitcode 9" --error-exitcode 9 -- "$S" leak 2 64
want 0 "leak, exit 0, --error-exitcode 0" --error-exitcode 0 -- "$S" leak 2 64
grep -q "LEAK SUMMARY: 128 bytes leaked in 2 allocations" "$T/err" || fail "leak not reported with exit code 0"
# a program that failed is said to have failed, after the report, with why: its status or
# signal, and its failed allocations
want 4 "a failed allocation, exit 4" -- sh -c "FAKECUDA_MEM_BYTES=1048576 '$S' oom; exit 4"
tail -n1 "$T/err" | grep -qxF "culeak check: sh failed (exit status 4); 1 CUDA allocation failed, the first cuMemAlloc_v2 returning 2; the report above covers what it did until then" ||
    fail "check does not say that the program failed and why"
want 139 "leak, then SIGSEGV" -- "$H" segv
tail -n1 "$T/err" | grep -qF "culeak check: $H was killed by signal 11 (" || fail "check does not say the program was killed"
want 0 "no leak, exit 0" -- "$S" leak 0 64
! grep -q "culeak check: .* failed" "$T/err" || fail "check says a program that succeeded failed"
echo "check_exit_status: ok"
