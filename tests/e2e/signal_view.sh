#!/usr/bin/env bash
# A traced program's view of its own signal dispositions is what it set: before and after
# its first allocation, sigaction, signal, sigset, sysv_signal and ssignal read back for
# every signal what they read untraced (not culeak's fatal-signal handler), as do a strict
# ISO C program's signal() (glibc's __sysv_signal) and siginterrupt's change, /proc/self/status shows the same
# ignored signals (none of glibc's own 32 and 33), and a SIGTERM handler installed only
# where the current one is SIG_DFL is installed and runs.
set -u
. "$(dirname "$0")/lib.sh"
cc -g -O0 -Wno-deprecated-declarations -I"$ROOT/src" -o "$T/job" "$ROOT/tests/e2e/c/signal_view.c" \
    -L"$B/fakecuda" -lcudart || fail "cannot build the job"
cc -o "$T/sigdfl" "$ROOT/tests/e2e/c/sigdfl_exec.c" || fail "cannot build sigdfl"
export LD_LIBRARY_PATH=$B/fakecuda
# both runs start with glibc's signals at their default (the test's own parent may ignore
# them): culeak's job must not start with them ignored then
D=$T/sigdfl
"$D" "$T/job" >"$T/untraced" || fail "the job fails untraced: status $?"
grep -q "^SIGTERM handled" "$T/untraced" || fail "untraced, the job's SIGTERM handler did not run"
for how in check record; do
    if [ $how = check ]; then
        "$D" "$B/culeak" check -- "$T/job" >"$T/$how" 2>"$T/err"
    else
        "$D" "$B/culeak" record -o "$T/r.culeak" -- "$T/job" >"$T/$how" 2>"$T/err"
    fi
    rc=$?
    [ "$rc" -eq 0 ] || fail "$how: status $rc: $(cat "$T/err")"
    diff "$T/untraced" "$T/$how" >"$T/diff" || fail "$how: the job's view differs from untraced: $(head -20 "$T/diff")"
done
# signal() of a program built for strict ISO C is glibc's __sysv_signal
cc -std=c11 -I"$ROOT/src" -o "$T/strict" "$ROOT/tests/e2e/c/signal_strict.c" -L"$B/fakecuda" -lcudart ||
    fail "cannot build the strict C job"
"$B/culeak" check -- "$T/strict" >"$T/out" 2>"$T/err" || fail "strict C: status $?: $(cat "$T/err")"
grep -q "^signal(SIGTERM) was SIG_DFL" "$T/out" || fail "strict C: $(cat "$T/out")"
# the program sets SIGTERM's default itself, then dies of SIGTERM: the recording is whole
# (its EXIT record written by culeak's handler, which stayed in the default's place)
"$B/culeak" check -- "$T/job" dfl-kill >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" -eq 143 ] || fail "dfl-kill: status $rc, want 143 (SIGTERM): $(cat "$T/err")"
grep -q "ends before the process did" "$T/err" && fail "dfl-kill: the recording has no EXIT: $(cat "$T/err")"
grep -q "^LEAK SUMMARY: 4096 bytes leaked in 1 allocations" "$T/err" || fail "dfl-kill: the leak is missing: $(cat "$T/err")"
echo "signal_view: ok"
