#!/usr/bin/env bash
# culeak check end to end on the fake driver: a leaking client is reported at its call
# site with file:line, the exit status is --error-exitcode, the JSON report has the
# documented fields; a clean client keeps its own status; culeak report reads a recording,
# one cut short, and the recordings of two ranks leaking different amounts.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
export LD_LIBRARY_PATH=$B/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
show_failure() { cat "$T"/* 2>/dev/null | head -80; }

set +e
"$B/culeak" check --error-exitcode 7 -- "$B/fakecuda/client_static" leak 3 4096 >"$T/out" 2>"$T/err"
rc=$?
set -e
[ "$rc" -eq 7 ] || fail "leaking program: exit $rc, want 7"
grep -q "client_static leak ok" "$T/out" || fail "program stdout changed"
grep -q "LEAK SUMMARY: 12288 bytes leaked in 3 allocations from 1 call sites" "$T/err" || fail "summary"
grep -q "LEAKED 12.0 KiB (12288 bytes) in 3 allocations (device) from leak at .*client_scenarios.c:[0-9]" \
    "$T/err" || fail "site line"

set +e
"$B/culeak" check --format json -o "$T/report.json" -- "$B/fakecuda/client_static" leak 2 100 >/dev/null 2>&1
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "leaking program under check --format json: exit $rc, want 1"
python3 - "$T/report.json" <<'PY' || fail "json fields"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["summary"] == {**r["summary"], "bytes": 200, "allocations": 2, "sites": 1}, r["summary"]
leak = r["leaks"][0]
assert leak["bytes"] == 200 and leak["count"] == 2 and leak["kind"] == "device"
assert leak["site"]["function"] == "leak" and leak["site"]["file"].endswith("client_scenarios.c")
assert isinstance(leak["site"]["line"], int) and leak["site"]["module"].endswith("client_static")
assert any(f["function"] == "main" for f in leak["stack"])
PY

set +e
"$B/culeak" check -- "$B/fakecuda/client_static" leak 0 4096 >/dev/null 2>"$T/clean"
rc=$?
set -e
[ "$rc" -eq 0 ] || fail "clean program: exit $rc, want 0"
grep -q "LEAK SUMMARY: 0 bytes leaked in 0 allocations" "$T/clean" || fail "clean summary"

"$B/culeak" record -o "$T/rec.culeak" -- "$B/fakecuda/client_static" leak 1 64 >/dev/null
"$B/culeak" report "$T/rec.culeak" --format folded >"$T/folded"
grep -q ";leak 64$" "$T/folded" || fail "folded stacks"
# --group: by source file, and an unknown grouping is a usage error
"$B/culeak" report "$T/rec.culeak" --group file >"$T/byfile"
grep -q "^LEAKED 64 bytes in 1 allocation (device) from .*client_scenarios.c$" "$T/byfile" || fail "--group file"
set +e
"$B/culeak" report "$T/rec.culeak" --group nothing >/dev/null 2>"$T/grouperr"
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "--group nothing: exit $rc, want 2"
grep -q "^culeak report: --group takes site, function, file, module or stack, not 'nothing'$" "$T/grouperr" \
    || fail "--group nothing: message"
# a recording cut short still reports what it holds, with a warning naming the offset
head -c 200 "$T/rec.culeak" >"$T/cut.culeak"
# (a cut is not an unreadable file: exit status 0)
set +e
"$B/culeak" report "$T/cut.culeak" >"$T/cutout" 2>"$T/cuterr"
rc=$?
set -e
[ "$rc" -eq 0 ] || fail "report of a cut recording: exit $rc, want 0"
grep -q "cut off at offset" "$T/cuterr" || fail "truncated recording message"
grep -q "\[recording cut off: read up to the cut\]" "$T/cutout" || fail "the report does not say the recording is cut"
grep -q "^LEAK SUMMARY: " "$T/cutout" || fail "no summary for a cut recording"
# two ranks of one job, one recording each, leaking different amounts: merged, processes kept apart
RANK=0 "$B/culeak" record -o "$T/r0.culeak" -- "$B/fakecuda/client_static" leak 3 100 >/dev/null
RANK=1 "$B/culeak" record -o "$T/r1.culeak" -- "$B/fakecuda/client_static" leak 2 64 >/dev/null
"$B/culeak" report "$T/r0.culeak" "$T/r1.culeak" >"$T/ranks" || fail "report of two ranks"
grep -q "^==== process [0-9]* (rank 0): 300 bytes leaked in 3 allocations$" "$T/ranks" || fail "rank 0 section"
grep -q "^==== process [0-9]* (rank 1): 128 bytes leaked in 2 allocations$" "$T/ranks" || fail "rank 1 section"
grep -q "^LEAK SUMMARY: 428 bytes leaked in 5 allocations from 1 call sites$" "$T/ranks" || fail "summary of two ranks"
grep -q "^  process [0-9]* (rank 0): 300 bytes leaked in 3 allocations from 1 call sites$" "$T/ranks" ||
    fail "rank 0 summary line"
grep -q "^  process [0-9]* (rank 1): 128 bytes leaked in 2 allocations from 1 call sites$" "$T/ranks" ||
    fail "rank 1 summary line"
"$B/culeak" report "$T/r0.culeak" "$T/r1.culeak" --format json -o "$T/ranks.json"
python3 - "$T/ranks.json" <<'PY' || fail "json of two ranks"
import json, sys
r = json.load(open(sys.argv[1]))
assert [(l["rank"], l["bytes"], l["count"]) for l in r["leaks"]] == [(0, 300, 3), (1, 128, 2)], r["leaks"]
per = {p["rank"]: (p["bytes"], p["allocations"]) for p in r["summary"]["per_process"]}
assert per == {0: (300, 3), 1: (128, 2)}, per
assert (r["summary"]["bytes"], r["summary"]["allocations"]) == (428, 5), r["summary"]
PY
"$B/culeak" report "$T/r0.culeak" "$T/r1.culeak" --merge-processes >"$T/merged"
grep -q "^====" "$T/merged" && fail "--merge-processes has per-process sections"
grep -q "^LEAK SUMMARY: 428 bytes leaked in 5 allocations from 1 call sites$" "$T/merged" || fail "merged summary"
grep -q "^LEAKED 428 bytes in 5 allocations (device) from leak at " "$T/merged" || fail "merged site row"
echo "check_leaks: ok"
