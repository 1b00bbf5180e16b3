#!/usr/bin/env bash
# check on a job of more traced processes than the 4,096 rings a job once had over its
# life (fake driver): 4,200 forked children one after another, each leaking one page.
# check counts every one's leak and exits 1 (before: 4,095 leaks, the rest dropped
# without a word). record_many.sh does the same through record.
set -u
. "$(dirname "$0")/seq_forks.sh"
N=${CHECK_MANY_N:-4200}

start=$SECONDS
"$B/culeak" check -- "$T/seq_forks" "$N" 4096 >"$T/out" 2>"$T/err"
rc=$?
echo "check_many: check of $N processes in $((SECONDS - start)) s"
[ "$rc" -eq 1 ] || fail "check exited $rc, not 1: $(grep -v '^  process' "$T/err" | tail -n 5)"
grep -q "LEAK SUMMARY: $((N * 4096)) bytes leaked in $N allocations" "$T/err" ||
    fail "not every process's leak is counted: $(grep 'LEAK SUMMARY' "$T/err")"
echo "check_many: ok"
