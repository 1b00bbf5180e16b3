#!/usr/bin/env bash
# The HTML page's first screen, rendered by headless Chromium: a program that leaks 58.6 MiB
# of device memory and 58.6 KiB of its own pool's blocks (culeak_alloc), 600 marked
# iterations within a few ticks of the coarse clock. The page opens on what leaked most
# (device memory) and says what the other layer holds; the pool's site leaked what the
# text report says; the forecast starts from what is live at the end; the flame graph ends
# at the caller of culeak.h's inline wrapper; the marks are drawn apart, in their order
# within a tick, and the note says the clock's resolution; a --diff's headline counts
# device memory in its own units.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || fail "no headless browser (chromium) installed"
src=tests/e2e/c/pool_and_leak.c
dev_line=$(grep -n 'DEVICE-LEAK' "$src" | cut -d: -f1)
pool_line=$(grep -n 'POOL-LEAK' "$src" | cut -d: -f1)
cc -g -O2 -Iinclude -o "$T/pool" "$src" -ldl || fail "cannot build $src"
LD_LIBRARY_PATH=$B/fakecuda "$B/culeak" record -o "$T/p.culeak" -- "$T/pool" >"$T/out" 2>&1 || fail "record: $(cat "$T/out")"
"$B/culeak" report "$T/p.culeak" >"$T/text" 2>&1
pool_leak=$(sed -n "s/^LEAKED \([0-9.]* [KMG]iB\) (.*(user) from main at .*pool_and_leak.c:$pool_line\$/\1/p" "$T/text")
[ -n "$pool_leak" ] || fail "the text report has no pool leak at line $pool_line: $(cat "$T/text")"
leak_bytes=$(sed -n "s/^LEAK SUMMARY: \([0-9]*\) bytes leaked.*/\1/p" "$T/text")
[ -n "$leak_bytes" ] || fail "the text report has no LEAK SUMMARY: $(cat "$T/text")"

# probe PAGE OUT: the page's state after its scripts ran, then after a click on the note's
# link to the other layer, as JSON
cat >"$T/probe.js" <<'JS'
<script>
(function () {
  const $ = id => document.getElementById(id);
  const look = () => ({
    layer: $("layer").value, summary: $("summary").innerText, sitesNote: $("sites-note").innerText,
    tlNote: $("tl-note").innerText, diff: $("diff-note").innerText,
    head: [...document.querySelectorAll("#sites thead th")].map(t => t.innerText),
    rows: [...document.querySelectorAll("#sites tbody tr")].map(tr => [...tr.cells].map(c => c.innerText.split("\n")[0])),
    forecast: [...document.querySelectorAll("#timeline .forecast-label")].map(t => t.textContent),
    marks: [...document.querySelectorAll("#timeline line.mark")].map(l => l.getAttribute("x1")),
    frames: [...document.querySelectorAll("#flame g")].map(g => [+g.querySelector("rect").getAttribute("y"), g.textContent]),
    shared: D.marks.length - new Set(D.marks.map(m => m.t)).size});
  const out = {first: look()};
  const other = $("other-layer");
  if (other) { other.dispatchEvent(new MouseEvent("click", {bubbles: true, cancelable: true})); out.other = look(); }
  document.body.setAttribute("data-probe", JSON.stringify(out));
})();
</script>
JS
probe() {
    python3 - "$1" "$T/probe.js" "$T/played.html" <<'PY'
import sys
page, play = open(sys.argv[1]).read(), open(sys.argv[2]).read()
open(sys.argv[3], "w").write(page.replace("</body>", play + "</body>"))
PY
    HOME=$T timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
        --host-resolver-rules='MAP * ~NOTFOUND' --virtual-time-budget=5000 --enable-logging=stderr --v=0 \
        --dump-dom "file://$T/played.html" >"$T/played.dom" 2>"$T/browser.err" || fail "the browser could not render $1"
    grep -E 'Uncaught|CONSOLE.*(Error|error)' "$T/browser.err" && fail "$1: the page's script failed"
    python3 - "$T/played.dom" "$2" <<'PY'
import html, re, sys
m = re.search(r'data-probe="([^"]*)"', open(sys.argv[1]).read())
open(sys.argv[2], "w").write(html.unescape(m.group(1)) if m else "{}")
PY
}

"$B/culeak" report --format html -o "$T/p.html" "$T/p.culeak" || fail "report --format html failed"
probe "$T/p.html" "$T/p.json"
python3 - "$T/p.json" "$dev_line" "$pool_line" "$pool_leak" "$leak_bytes" <<'PY' || fail "the page: $(cat "$T/p.json" | head -c 3000)"
import json, re, sys
d = json.load(open(sys.argv[1]))
dev, pool, pool_leak = sys.argv[2], sys.argv[3], sys.argv[4]
f = d["first"]
print("first screen: layer", f["layer"], "| table:", f["rows"][:2], "| note:", f["sitesNote"][:80])
# 3: opens on what leaked most (the device memory), and says what the other layer holds
assert f["layer"] == "0", "opens on the pools' blocks"
assert f["rows"] and f["rows"][0][0].endswith("pool_and_leak.c:" + dev), "the device leak is not first in the table"
assert re.search(r"the pools' blocks: leaked " + re.escape(pool_leak), f["sitesNote"]), "the other layer's leak is not said"
# 4: the page's leaked figures are the text report's, the pool's blocks included
# the text report's LEAK SUMMARY bytes, in the page's units (one decimal, rounded down)
leaked = "leaked %.1f MiB" % (int(sys.argv[5]) * 10 // 1048576 / 10)
assert leaked in f["summary"], (leaked, f["summary"])
o = d["other"]
row = [r for r in o["rows"] if r[0].endswith("pool_and_leak.c:" + pool)]
col = o["head"].index("leaked") if "leaked" in o["head"] else -1
print("pool layer: head", o["head"], "row", row)
assert row and col >= 0 and row[0][col] == pool_leak, "the pool site's leaked bytes differ from the text report's"
# 5: the forecast starts from the live bytes at the end
live = re.search(r"live at the end ([0-9.]+ [KMG]iB)", f["summary"]).group(1)
print("forecast:", f["forecast"], "live at the end:", live)
assert live + " in use" in f["forecast"], "the forecast does not start from the live bytes at the end"
# 6: the flame graph's innermost frame is the caller, never culeak.h's wrapper
leaf = max(o["frames"])[1]
print("innermost frame of the pool layer:", leaf)
assert leaf.endswith("pool_and_leak.c:" + pool) and not any("culeak.h" in t for _, t in o["frames"]), leaf
# 7: 600 marks in a few ticks, each drawn apart, and the resolution said
print("marks:", len(f["marks"]), "at", len(set(f["marks"])), "places,", f["shared"], "sharing a tick; note:", f["tlNote"][:120])
assert len(f["marks"]) == 600 and len(set(f["marks"])) == 600, "marks drawn on top of each other"
assert not f["shared"] or re.search(r"times to the clock's [0-9.]+ ms", f["tlNote"]), "the clock's resolution is not said"
PY
[ $? -eq 0 ] || exit 1

# 3: a --diff page's headline: device memory in its units, the blocks besides
"$B/culeak" report --format html --diff "iteration 100" "iteration 500" -o "$T/d.html" "$T/p.culeak" ||
    fail "report --format html --diff failed"
probe "$T/d.html" "$T/d.json"
python3 - "$T/d.json" <<'PY' || fail "the diff page: $(cat "$T/d.json" | head -c 2000)"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("first", "other"): # either layer drawn: device memory first
    print("diff headline (%s layer):" % k, d[k]["diff"])
    assert "+39.0 MiB device memory" in d[k]["diff"] and "+39.0 KiB in the pools' blocks" in d[k]["diff"], d[k]["diff"]
PY
[ $? -eq 0 ] || exit 1
echo "report_html_first: ok"
