#!/usr/bin/env bash
# The demos: plain `make` builds the simulated one, every file:line in demo/EXPECTED.md
# points at an allocation call, and the simulated loop-leak scenario, run the way `make
# run` runs it on a machine without a GPU (demo/run.sh --sim, here under `culeak record`),
# leaks what EXPECTED.md says.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

# plain `make` builds what `make run` opens without a GPU (a dry run into an empty build
# directory lists every command of `all`)
make -n -s BUILD="$T/fresh" all 2>/dev/null | grep -q 'demo/sim/loop_leak_sim\.c' ||
    fail "plain make does not build the simulated demo that make run needs"

refs=$(grep -o '[a-z_]*\.c[u]*:[0-9]*' demo/EXPECTED.md | sort -u)
[ -n "$refs" ] || fail "no file:line in demo/EXPECTED.md"
for ref in $refs; do
    file=${ref%%:*} line=${ref##*:}
    src=demo/$file
    [ -f "$src" ] || src=demo/sim/$file
    [ -f "$src" ] || fail "EXPECTED.md names $file, which is not in demo/"
    sed -n "${line}p" "$src" | grep -Eq 'cudaMalloc\(|cuMemAlloc\(' ||
        fail "EXPECTED.md: $ref is not an allocation: $(sed -n "${line}p" "$src")"
done

export FAKECUDA_LOG=$T/fake.log
DEMO_DELAY_MS=0 demo/run.sh --sim record -o "$T/sim.culeak" >"$T/out" 2>&1 || { cat "$T/out"; fail "run.sh --sim failed"; }
grep -q '^loop_leak_sim: 20 iterations of 4 MiB; 19 blocks never freed (76 MiB)$' "$T/out" ||
    { cat "$T/out"; fail "unexpected summary"; }

# The simulated driver's own account: 20 allocations of 4 MiB, one free.
[ "$(grep -c ' alloc cuMemAlloc_v2 .* 4194304$' "$FAKECUDA_LOG")" = 20 ] || fail "fake driver saw: $(cat "$FAKECUDA_LOG")"
[ "$(grep -c ' free ' "$FAKECUDA_LOG")" = 1 ] || fail "fake driver saw: $(cat "$FAKECUDA_LOG")"

# culeak's account: the same events and one mark per iteration.
"$BUILD/culeak" dump "$T/sim.culeak" >"$T/dump"
[ "$(grep -c '"type":"alloc".*"api":"cuMemAlloc_v2".*"size":4194304,' "$T/dump")" = 20 ] || fail "recorded allocations differ"
[ "$(grep -c '"type":"free"' "$T/dump")" = 1 ] || fail "recorded frees differ"
for i in 1 10 20; do
    grep -q "\"type\":\"mark\".*\"label\":\"iteration $i\"" "$T/dump" || fail "no mark 'iteration $i'"
done
[ "$(grep -c '"type":"mark"' "$T/dump")" = 20 ] || fail "recorded marks differ"
# culeak check names the site EXPECTED.md gives.
LD_LIBRARY_PATH=$BUILD/fakecuda "$BUILD/culeak" check --error-exitcode 3 -- "$BUILD/demo/loop_leak_sim" \
    >/dev/null 2>"$T/check" && rc=0 || rc=$?
[ "$rc" = 3 ] || { cat "$T/check"; fail "culeak check exited $rc, expected 3 (leaks found)"; }
grep -q '^LEAKED 76.0 MiB .* in 19 allocations .*loop_leak_sim\.c:39$' "$T/check" || { cat "$T/check"; fail "check: no leak at loop_leak_sim.c:39"; }
grep -q '^LEAK SUMMARY: 79691776 bytes leaked in 19 allocations from 1 call sites$' "$T/check" ||
    { cat "$T/check"; fail "check: unexpected summary"; }
echo "demo: ok"
