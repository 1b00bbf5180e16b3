#!/usr/bin/env bash
# culeak follows the job into programs it execs or spawns without culeak's preload and
# variables: LD_PRELOAD replaced, env -i, execle with an environment of its own, execv
# after removing them, posix_spawn with an empty environment: each child's leak is
# reported. A set-user-ID child cannot be followed (the loader ignores LD_PRELOAD): it is
# named as untraced, and check exits 2 (incomplete).
set -u
. "$(dirname "$0")/lib.sh"
# the child finds the fake driver by its run path: it runs in an empty environment too
cc -g -O0 -I"$ROOT/src" -o "$T/child" "$C/exec_env_child.c" -L"$B/fakecuda" -Wl,--no-as-needed -lcuda -lcudart \
    -Wl,-rpath,"$B/fakecuda" || fail "cannot build the child"
cc -g -O0 -o "$T/job" "$C/exec_env_job.c" || fail "cannot build the job"
export LD_LIBRARY_PATH=$B/fakecuda

# leaks BYTES JOB...: check reports the child's leak of BYTES, status 1
leaks() {
    local bytes=$1
    shift
    "$B/culeak" check -- "$@" >"$T/out" 2>"$T/err"
    local rc=$?
    grep -q "^LEAK SUMMARY: $bytes bytes leaked in 1 allocations" "$T/err" ||
        fail "$*: the child's leak of $bytes bytes is not reported: $(cat "$T/err")"
    grep -q "^LEAKED .* from main at .*exec_env_child.c:" "$T/err" || fail "$*: the leak's site is not the child's: $(cat "$T/err")"
    [ "$rc" -eq 1 ] || fail "$*: status $rc, want 1: $(cat "$T/err")"
}
leaks 1000 bash -c "LD_PRELOAD=libm.so.6 exec $T/child 1000"
leaks 2000 env -i "$T/child" 2000
leaks 3000 "$T/job" execle "$T/child" 3000
leaks 4000 "$T/job" unset "$T/child" 4000
leaks 5000 python3 -c "import os, sys; os.waitpid(os.posix_spawn(sys.argv[1], sys.argv[1:], {}), 0)" "$T/child" 5000

# the program's own preload comes first, the shim after it
"$B/culeak" check -- bash -c "LD_PRELOAD=libm.so.6 exec env" >"$T/out" 2>"$T/err"
grep -q "^LD_PRELOAD=libm.so.6:.*libculeak.so$" "$T/out" || fail "LD_PRELOAD of the program: $(grep LD_PRELOAD "$T/out")"

# a set-user-ID program owned by another user: named as untraced, check exits 2
cp /bin/true "$T/suid" && chmod 755 "$T"
if [ "$(id -u)" -eq 0 ] && chown nobody "$T/suid" && chmod u+s "$T/suid"; then
    "$B/culeak" check -- bash -c "$T/suid; true" >"$T/out" 2>"$T/err"
    rc=$?
    grep -q "^culeak check: process [0-9]*: $T/suid runs untraced (a set-user-ID program" "$T/err" ||
        fail "the set-user-ID child is not named as untraced: $(cat "$T/err")"
    [ "$rc" -eq 2 ] || fail "a set-user-ID child: status $rc, want 2 (incomplete): $(cat "$T/err")"
    # the program check starts is itself set-user-ID
    "$B/culeak" check -- "$T/suid" >"$T/out" 2>"$T/err"
    rc=$?
    grep -q "no recording was written: $T/suid is a set-user-ID program" "$T/err" ||
        fail "a set-user-ID program is not named as untraced: $(cat "$T/err")"
    [ "$rc" -eq 2 ] || fail "a set-user-ID program: status $rc, want 2 (incomplete): $(cat "$T/err")"
else
    echo "exec_follow: the set-user-ID case needs root (skipped)"
fi
echo "exec_follow: ok"
