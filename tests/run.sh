#!/usr/bin/env bash
# Runs the whole suite: the cmocka binary of every tests/unit/test_*.c, then every end-to-end
# script in tests/e2e. Prints one closing line "N passed, N failed".
set -u
BUILD=${BUILD:-build}
export BUILD
cd "$(dirname "$0")/.." || exit 1
passed=0 failed=0 failures=()
# A test that hangs is stopped after TEST_TIMEOUT seconds (SIGTERM: the tmux harness then
# shows what it waited for and the screen); a failure always says how the test ended.
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
run_one() {
    local name=$1; shift
    local log rc start=$SECONDS
    log=$(mktemp)
    timeout -k 10 "$TEST_TIMEOUT" "$@" >"$log" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1)); echo "ok   $name ($((SECONDS - start)) s)"
    else
        failed=$((failed + 1)); failures+=("$name")
        case $rc in
        124 | 137) echo "FAIL $name (stopped after ${TEST_TIMEOUT} s: it hung)" ;;
        *) echo "FAIL $name (exit status $rc after $((SECONDS - start)) s)" ;;
        esac
        sed 's/^/    /' "$log" | tail -n 60
        [ -s "$log" ] || echo "    (it printed nothing)"
    fi
    rm -f "$log"
}
# a test that cannot run is a failure, never a silent skip
refuse() {
    failed=$((failed + 1)); failures+=("$1"); echo "FAIL $1"; echo "    $2"
}
for src in tests/unit/test_*.c; do
    t=$BUILD/tests/$(basename "$src" .c)
    if [ -x "$t" ]; then
        run_one "$(basename "$t")" "$t"
    else
        refuse "$(basename "$t")" "$t is not built (make $t)"
    fi
done
# a script with a #! line is a test; one without is a library the tests source (tmux_harness.sh)
for t in tests/e2e/*.sh; do
    [ "$(head -c 2 "$t")" = "#!" ] || continue
    if [ -x "$t" ]; then
        run_one "e2e/$(basename "$t" .sh)" "$t"
    else
        refuse "e2e/$(basename "$t" .sh)" "$t is not executable (chmod +x $t)"
    fi
done
[ ${#failures[@]} -eq 0 ] || echo "failed: ${failures[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
