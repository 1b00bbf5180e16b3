#!/usr/bin/env bash
# Runs the whole suite: the cmocka binary of every unit test (tests/unit/test_*.c) and
# shim process test (tests/shim/test_*.c), then every end-to-end script (tests/e2e, named
# e2e/NAME) and check of the build and the package (tests/checks, named checks/NAME).
# Prints one closing line "N passed, N failed". CULEAK_TEST_FAIL_FAST=1 stops at the first
# failure (make mutants: a mutant is killed by any one test).
#
# A script with the line "# run.sh: alongside" (a long test that keeps one core busy and
# waits for nothing, such as the fuzz run) starts first and runs alongside the others, one
# at a time, which mostly wait on their jobs and terminals; its result comes last.
set -u
BUILD=${BUILD:-build}
export BUILD
cd "$(dirname "$0")/.." || exit 1
passed=0 failed=0 failures=()
# A test that hangs is stopped after TEST_TIMEOUT seconds (SIGTERM: the tmux harness then
# shows what it waited for and the screen); a failure always says how the test ended.
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
# run_logged LOG CMD...: runs CMD under the timeout, its output in LOG; LOG.end gets its
# exit status and seconds
run_logged() {
    local log=$1 start=$SECONDS rc
    shift
    timeout -k 10 "$TEST_TIMEOUT" "$@" >"$log" 2>&1
    rc=$?
    echo "$rc $((SECONDS - start))" >"$log.end"
}
# report NAME LOG: counts and prints the result run_logged left
report() {
    local name=$1 log=$2 rc secs
    read -r rc secs <"$log.end" || { rc=1 secs=?; }
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1)); echo "ok   $name ($secs s)"
    else
        failed=$((failed + 1)); failures+=("$name")
        case $rc in
        124 | 137) echo "FAIL $name (stopped after ${TEST_TIMEOUT} s: it hung)" ;;
        *) echo "FAIL $name (exit status $rc after $secs s)" ;;
        esac
        sed 's/^/    /' "$log" | tail -n 60
        [ -s "$log" ] || echo "    (it printed nothing)"
    fi
    rm -f "$log" "$log.end"
}
run_one() {
    local name=$1 log
    shift
    log=$(mktemp)
    run_logged "$log" "$@"
    report "$name" "$log"
}
# a test that cannot run is a failure, never a silent skip
refuse() {
    failed=$((failed + 1)); failures+=("$1"); echo "FAIL $1"; echo "    $2"
}
stop() { [ -n "${CULEAK_TEST_FAIL_FAST:-}" ] && [ "$failed" -gt 0 ]; }
alongside() { grep -qx '# run.sh: alongside' "$1"; }

# a script with a #! line is a test; one without is a library the tests source (tmux_harness.sh)
e2e=()
for t in tests/e2e/*.sh tests/checks/*.sh; do
    [ "$(head -c 2 "$t")" = "#!" ] && e2e+=("$t")
done
# a script's name in the results: its folder (e2e, checks) and its name
name_of() { local d=${1%/*}; echo "${d##*/}/$(basename "$1" .sh)"; }
bg_names=() bg_logs=() bg_pids=()
for t in "${e2e[@]}"; do
    [ -x "$t" ] && alongside "$t" || continue
    bg_names+=("$(name_of "$t")")
    bg_logs+=("$(mktemp)")
    run_logged "${bg_logs[-1]}" "$t" &
    bg_pids+=($!)
done
for src in tests/unit/test_*.c tests/shim/test_*.c; do
    stop && break
    t=$BUILD/tests/$(basename "$src" .c)
    if [ -x "$t" ]; then
        run_one "$(basename "$t")" "$t"
    else
        refuse "$(basename "$t")" "$t is not built (make $t)"
    fi
done
for t in "${e2e[@]}"; do
    stop && break
    if [ ! -x "$t" ]; then
        refuse "$(name_of "$t")" "$t is not executable (chmod +x $t)"
    elif ! alongside "$t"; then
        run_one "$(name_of "$t")" "$t"
    fi
done
for i in "${!bg_pids[@]}"; do
    wait "${bg_pids[$i]}"
    report "${bg_names[$i]}" "${bg_logs[$i]}"
done
[ ${#failures[@]} -eq 0 ] || echo "failed: ${failures[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
