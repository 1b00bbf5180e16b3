#!/usr/bin/env bash
# Two runs compared (culeak report --baseline) on the fake driver: a run that leaks 5 blocks
# where the baseline leaked 2 is "grown" at the same line, a run leaking at other sites has
# them "new" and the baseline's "gone"; the JSON says the same; --error-exitcode N exits N
# only when the run leaks more than the baseline by over --max-increase; the HTML page
# carries the baseline's series and draws both lines on one axis.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
export LD_LIBRARY_PATH=$B/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
show_failure() { for f in "$T"/out "$T"/err; do [ -f "$f" ] && head -60 "$f"; done; }

record() { # FILE ARGS...
    local out=$1
    shift
    "$B/culeak" record -o "$out" -- "$B/fakecuda/client_static" "$@" >"$T/rec.out" 2>&1 ||
        { cat "$T/rec.out"; fail "record $*"; }
}
record "$T/before.culeak" leak 2 4096
record "$T/more.culeak" leak 5 4096
record "$T/other.culeak" sites

"$B/culeak" report --baseline "$T/before.culeak" "$T/more.culeak" >"$T/out" 2>"$T/err" || fail "report --baseline: exit $?"
grep -qE '^GROWN \+12.0 KiB \(12288 bytes\) \(8192 bytes in 2 allocations -> 20480 bytes in 5\) from leak at .*client_scenarios.c:[0-9]+' \
    "$T/out" || fail "the grown site"
grep -q '^COMPARE SUMMARY: leaked 12.0 KiB (12288 bytes) more than the baseline (8192 -> 20480 bytes, 2 -> 5 allocations): 0 call sites new, 0 gone, 1 grown, 0 shrunk, 0 the same$' \
    "$T/out" || fail "the summary"
grep -q '^growth suspects of the baseline: none$' "$T/out" || fail "the baseline's suspects"

"$B/culeak" report --baseline "$T/before.culeak" "$T/other.culeak" --format json -o "$T/cmp.json" 2>"$T/err" ||
    fail "report --baseline --format json: exit $?"
python3 - "$T/cmp.json" <<'PY' || fail "json"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["baseline"]["bytes"] == 8192 and r["after"]["bytes"] == 4000, r
assert r["delta_bytes"] == 4000 - 8192
assert r["changes"] == {"same": 0, "new": 2, "gone": 1, "grown": 0, "shrunk": 0}, r["changes"]
new = sorted(s["function"] for s in r["sites"] if s["change"] == "new")
assert new == ["leak_site_a", "leak_site_b"], new
gone = [s for s in r["sites"] if s["change"] == "gone"][0]
assert gone["function"] == "leak" and gone["baseline"]["allocations"] == 2 and gone["after"]["bytes"] == 0
assert any(f["function"] == "main" for f in gone["stack"])
PY

# the exit status: more than the baseline by over the threshold
"$B/culeak" report --baseline "$T/before.culeak" "$T/more.culeak" --error-exitcode 9 >/dev/null 2>&1
[ $? -eq 9 ] || fail "12 KiB more than the baseline: not exit 9"
"$B/culeak" report --baseline "$T/before.culeak" "$T/more.culeak" --error-exitcode 9 --max-increase 16KiB >/dev/null 2>&1
[ $? -eq 0 ] || fail "12 KiB more, 16 KiB allowed: not exit 0"
"$B/culeak" report --baseline "$T/before.culeak" "$T/more.culeak" --error-exitcode 9 --max-increase 12287 >/dev/null 2>&1
[ $? -eq 9 ] || fail "12288 bytes more, 12287 allowed: not exit 9"
"$B/culeak" report --baseline "$T/more.culeak" "$T/before.culeak" --error-exitcode 9 >/dev/null 2>&1
[ $? -eq 0 ] || fail "less than the baseline: not exit 0"
"$B/culeak" report --max-increase 1MiB "$T/more.culeak" >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q -- "--max-increase goes with --baseline" "$T/err" || fail "--max-increase alone is refused"
"$B/culeak" report --baseline "$T/before.culeak" --diff a b "$T/more.culeak" >/dev/null 2>"$T/err"
[ $? -eq 2 ] || fail "--baseline with --diff is refused"

# the page: the baseline's series embedded, and drawn with the run's
"$B/culeak" report --baseline "$T/before.culeak" "$T/more.culeak" --format html -o "$T/cmp.html" ||
    fail "report --baseline --format html"
python3 - "$T/cmp.html" <<'PY' || fail "the page's data"
import json, re, sys
page = open(sys.argv[1]).read()
d = json.loads(re.search(r'id="culeak-data">(.*?)</script>', page, re.S).group(1))
b = d["baseline"]
assert b["leaked"] == 8192 and b["processes"] == 1, b
# events of one clock tick (culeak-stream(5): 1 to 4 ms) share a point: the series end at
# the leaks, rise only, and peak there
def check(series, leaked, first):
    s = [x for x in series if x["device"] == -1][0]
    assert s["bytes"][-1] == leaked and max(s["max"]) == leaked and min(s["min"]) == first, s
    assert s["bytes"] == sorted(s["bytes"]), s
check(b["series"], 8192, 4096)
check(d["series"], 20480, 4096)
PY
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || fail "no headless browser (chromium) installed"
HOME=$T timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --host-resolver-rules='MAP * ~NOTFOUND' --virtual-time-budget=5000 --enable-logging=stderr --v=0 \
    --dump-dom "file://$T/cmp.html" >"$T/cmp.dom" 2>"$T/browser.err" || fail "the browser could not render the page"
grep -E 'Uncaught|CONSOLE.*(Error|error)' "$T/browser.err" && fail "the page's script failed"
grep -q '<polyline[^>]*class="series baseline"' "$T/cmp.dom" || fail "no baseline line drawn"
grep -q '<polyline[^>]*class="series" ' "$T/cmp.dom" || fail "no run line drawn"
grep -q 'baseline (' "$T/cmp.dom" || fail "the baseline's line has no legend"
echo "PASS report_baseline"
