#!/usr/bin/env bash
# The aggregated recording against the full one of the same run: the demo, programs on
# the fake driver (marks, threads, two devices, a context reset, a failed allocation,
# VMM) and the stand-in torch jobs are recorded in full, made aggregated by `culeak
# aggregate` (at 1 ms, where nearly every interval ends in a flush, and at the default
# 10 s), and every report - leaks, peak, suspects, JSON, folded, pprof, a diff between
# marks - must read the same but for the line that says the recording is aggregated.
# Then `record --aggregate` itself: its report says so and finds the leak and the
# suspect a full recording finds; a recording cut mid-interval reads up to the cut; bad
# options and inputs are refused with a message.
set -euo pipefail
. "$(dirname "$0")/python/job_env.sh"
standin_torch

strip() { sed -E 's/ \[aggregated every [^]]*\]//; s/,"aggregated":\{[^}]*\}//; s/,"aggregated_s":[0-9.e+-]*//'; }

# the reports of full ($1) and aggregated ($2) recordings of one run: the same
# (REPORTS: which reports; JSON carries the suspects too)
REPORTS=("" "--peak" "--format json")
same_reports() {
    local f=$1 a=$2 what=$3 args
    for args in "${REPORTS[@]}"; do
        # shellcheck disable=SC2086
        "$CULEAK" report $args "$f" 2>&1 | strip >"$tmp/r1"
        # shellcheck disable=SC2086
        "$CULEAK" report $args "$a" 2>&1 | strip >"$tmp/r2"
        cmp -s "$tmp/r1" "$tmp/r2" || { diff "$tmp/r1" "$tmp/r2" | head -20; fail "$what: report $args differs"; }
    done
    local marks
    marks=$("$CULEAK" dump "$f" | "$PY" -c '
import json, sys
l = list(dict.fromkeys(json.loads(x)["label"] for x in sys.stdin if "\"type\":\"mark\"" in x))
if len(l) >= 2: print(l[0]); print(l[len(l) // 2]); print(l[-1])')
    [ -n "$marks" ] || return 0
    local M
    mapfile -t M <<<"$marks"
    for pair in "1 2" "0 2"; do
        set -- $pair
        "$CULEAK" report --diff "${M[$1]}" "${M[$2]}" "$f" 2>&1 | strip >"$tmp/r1"
        "$CULEAK" report --diff "${M[$1]}" "${M[$2]}" "$a" 2>&1 | strip >"$tmp/r2"
        cmp -s "$tmp/r1" "$tmp/r2" || { diff "$tmp/r1" "$tmp/r2" | head; fail "$what: diff ${M[$1]} ${M[$2]} differs"; }
    done
}

n=0 folded_any=0
both_ways() { # NAME "INTERVALS" PROGRAM [ARGS]
    local name=$1 intervals=$2
    shift 2
    n=$((n + 1))
    "$CULEAK" record -o "$tmp/$n.full" -- "$@" >"$tmp/out" 2>&1 || true
    [ -s "$tmp/$n.full" ] || { cat "$tmp/out"; fail "$name: no recording"; }
    for iv in $intervals; do
        "$CULEAK" aggregate --interval $iv -o "$tmp/$n.$iv" "$tmp/$n.full" || fail "$name: aggregate exited $?"
        same_reports "$tmp/$n.full" "$tmp/$n.$iv" "$name (--interval $iv)"
        if "$CULEAK" dump "$tmp/$n.$iv" | grep '"type":"churn".*"count":[1-9]' >/dev/null; then
            folded_any=$((folded_any + 1))
        fi
    done
}

REPORTS=("" "--peak" "--suspects" "--format json" "--format folded" "--group function" "--format pprof")
both_ways growth "1ms 10s" "$FAKE/client_driver" growth 20 2000
REPORTS=("" "--peak" "--format json")
DEMO_DELAY_MS=0 both_ways "the demo" "1ms 10s" "$B/demo/loop_leak_sim"
both_ways threads 1ms "$FAKE/client_driver" threads 4 50
both_ways repeats 1ms "$FAKE/client_driver" repeats 7 300
both_ways ctxdestroy 1ms "$FAKE/client_driver" ctxdestroy
both_ways oom 1ms "$FAKE/client_driver" oom
both_ways families 1ms "$FAKE/client_driver" families
both_ways "torch blocks" 1ms "$PY" tests/e2e/python/blocks_train.py 8
both_ways "torch backward" 1ms "$PY" tests/e2e/python/backward_train.py
# the comparisons above compared something folded, not only streams that folded nothing
[ "$folded_any" -ge 5 ] || fail "only $folded_any aggregated recordings folded any allocation"

# record --aggregate: the live filter, between the rings and the file
"$CULEAK" record --aggregate --interval 1ms -o "$tmp/live.agg" -- "$FAKE/client_driver" growth 20 2000 \
    >"$tmp/out" 2>&1 || fail "record --aggregate exited $?: $(cat "$tmp/out")"
"$CULEAK" record -o "$tmp/live.full" -- "$FAKE/client_driver" growth 20 2000 >"$tmp/out" 2>&1 ||
    fail "record exited $?: $(cat "$tmp/out")"
"$CULEAK" report "$tmp/live.agg" >"$tmp/rep" 2>&1 || fail "report exited $?: $(cat "$tmp/rep")"
grep -q '^culeak: process [0-9]* on .* \[aggregated every 0.001 s: [1-9][0-9]* allocations freed within their interval are counted, not recorded; no per-event timeline inside an interval\]$' "$tmp/rep" ||
    fail "the report does not say the recording is aggregated: $(head -1 "$tmp/rep")"
for args in "" "--suspects"; do
    # shellcheck disable=SC2086
    "$CULEAK" report $args "$tmp/live.full" | grep -E '^(LEAK|GROWS|SUSPECT|LEAKED)' | sed 's/ \[process [0-9]*\]//' >"$tmp/r1"
    # shellcheck disable=SC2086
    "$CULEAK" report $args "$tmp/live.agg" | grep -E '^(LEAK|GROWS|SUSPECT|LEAKED)' | sed 's/ \[process [0-9]*\]//' >"$tmp/r2"
    [ -s "$tmp/r1" ] && cmp -s "$tmp/r1" "$tmp/r2" || { diff "$tmp/r1" "$tmp/r2"; fail "record --aggregate: report $args differs"; }
done
"$CULEAK" report --format json "$tmp/live.agg" | grep -q '"aggregated":{"interval_s":0.001,"folded_allocs":[1-9]' ||
    fail "the JSON report does not say the recording is aggregated"
"$CULEAK" report --format html -o "$tmp/p.html" "$tmp/live.agg" && grep -q '"aggregated_s":0.001' "$tmp/p.html" ||
    fail "the HTML page does not carry the interval"

# cut mid-interval (between two CHURN records, within a record): read up to the cut
size=$(stat -c %s "$tmp/live.agg")
head -c $((size * 2 / 3)) "$tmp/live.agg" >"$tmp/cut.agg"
"$CULEAK" report "$tmp/cut.agg" >"$tmp/rep" 2>&1 || fail "report of a cut aggregated recording exited $?: $(cat "$tmp/rep")"
grep -q 'recording cut off: read up to the cut' "$tmp/rep" || fail "the cut is not said: $(head -3 "$tmp/rep")"

# refusals
"$CULEAK" record --interval 5s -o "$tmp/x" -- true >"$tmp/out" 2>&1 && fail "--interval without --aggregate accepted"
grep -q -- '--interval is the interval of an aggregated recording: add --aggregate' "$tmp/out" || fail "$(cat "$tmp/out")"
"$CULEAK" record --aggregate --interval 0.1ms -o "$tmp/x" -- true >"$tmp/out" 2>&1 && fail "--interval 0.1ms accepted"
grep -q -- '--interval 0.1ms: a time from 1ms to 24h' "$tmp/out" || fail "$(cat "$tmp/out")"
echo "not a recording" >"$tmp/junk"
"$CULEAK" aggregate -o "$tmp/j.agg" "$tmp/junk" >"$tmp/out" 2>&1 && fail "aggregate of a text file succeeded"
grep -q "not a culeak recording" "$tmp/out" || fail "$(cat "$tmp/out")"
[ ! -e "$tmp/j.agg" ] || fail "aggregate left an output of nothing"
"$CULEAK" aggregate -o "$tmp/1.full" "$tmp/2.full" >"$tmp/out" 2>&1 && fail "aggregate wrote over an existing file"
grep -q "cannot write $tmp/1.full: File exists" "$tmp/out" || fail "$(cat "$tmp/out")"
echo "aggregate_same: ok"
