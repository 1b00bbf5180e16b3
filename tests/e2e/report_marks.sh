#!/usr/bin/env bash
# culeak report --at and --diff name marks: past the 256th mark too; a --diff whose A comes
# after B says so (not "no mark A"); an unknown mark names the nearest ones there are;
# two of --leaks, --peak, --at and --diff are refused.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

# 600 iterations: grow_step keeps 16 KiB at each, then the mark "iteration N"
LD_LIBRARY_PATH=$B/fakecuda "$B/culeak" record -o "$T/g.culeak" -- "$B/fakecuda/client_static" growth 600 0 \
    >"$T/out" 2>&1 || { cat "$T/out"; fail "record failed"; }
"$B/culeak" report "$T/g.culeak" --at 'iteration 400' >"$T/at" 2>&1 || fail "--at 'iteration 400': $(cat "$T/at")"
grep -q "^LIVE 6.2 MiB (6569984 bytes) in 401 allocations" "$T/at" || fail "--at 'iteration 400': $(cat "$T/at")"

# expect STATUS TEXT ARGS...: culeak report exits STATUS and says TEXT (a line of its own)
expect() {
    local status=$1 text=$2 rc=0
    shift 2
    "$B/culeak" report "$T/g.culeak" "$@" >"$T/out" 2>"$T/err" || rc=$?
    [ "$rc" -eq "$status" ] || fail "$*: exit $rc, want $status: $(cat "$T/err")"
    grep -qxF "$text" "$T/err" || fail "$*: want '$text', got: $(cat "$T/err")"
}
expect 1 "culeak report: mark 'iteration 40' comes after mark 'iteration 5': --diff takes the earlier mark first (--diff 'iteration 5' 'iteration 40')" \
    --diff 'iteration 40' 'iteration 5'
expect 1 "culeak report: no mark 'iteration 700' (and no event with that seq) in the recordings; the nearest: 'iteration 599', 'iteration 598', 'iteration 597'" \
    --at 'iteration 700'
expect 1 "culeak report: no mark 'iteraton 7' (and no event with that seq) in the recordings; the nearest: 'iteration 7', 'iteration 0', 'iteration 1'" \
    --diff 'iteration 5' 'iteraton 7'
# one moment at a time: --leaks with --peak is refused
expect 2 "culeak report: --leaks and --peak report different moments: give one of --leaks, --peak, --at, --diff" \
    --leaks --peak
echo "report_marks: ok"
