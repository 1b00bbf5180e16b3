#!/usr/bin/env bash
# Runs the whole suite: every cmocka binary in $BUILD/tests, then every end-to-end script
# in tests/e2e. Prints one closing line "N passed, N failed".
set -u
BUILD=${BUILD:-build}
export BUILD
cd "$(dirname "$0")/.."
passed=0 failed=0 failures=()
run_one() {
    local name=$1; shift
    local log
    log=$(mktemp)
    if timeout 300 "$@" >"$log" 2>&1; then
        passed=$((passed + 1)); echo "ok   $name"
    else
        failed=$((failed + 1)); failures+=("$name"); echo "FAIL $name"; sed 's/^/    /' "$log" | tail -n 60
    fi
    rm -f "$log"
}
for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    run_one "$(basename "$t")" "$t"
done
for t in tests/e2e/*.sh; do
    [ -x "$t" ] || continue
    run_one "e2e/$(basename "$t" .sh)" "$t"
done
[ ${#failures[@]} -eq 0 ] || echo "failed: ${failures[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
