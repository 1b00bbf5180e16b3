#!/usr/bin/env bash
# The HTML report, rendered by a real browser: `culeak report --format html` of the
# simulated loop-leak demo, and the console's `export FILE.html`, opened by headless
# Chromium (--dump-dom: the DOM after the page's scripts ran). The rendered page names the
# leaking site, draws the timeline and the flame graph, opens on a --diff's comparison,
# and refers to nothing outside itself; the timeline's labels never overlap and it draws
# the fastest suspect's forecast; a page exported while the job runs says "live now".
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
. tests/e2e/tmux_harness.sh
# a sanitizer build preloads its runtime into the traced programs (bash, python3), whose
# own leaks at exit are not culeak's
export ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || fail "no headless browser (chromium) installed"

# render FILE: the DOM of the page after its scripts ran
render() {
    HOME=$T timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
        --host-resolver-rules='MAP * ~NOTFOUND' --virtual-time-budget=5000 --enable-logging=stderr --v=0 \
        --dump-dom "file://$1" 2>"$T/browser.err"
}
check_page() { # FILE WHAT
    local dom=$T/$(basename "$1").dom
    render "$1" >"$dom" || { cat "$T/browser.err"; fail "$2: the browser could not render the page"; }
    grep -E 'Uncaught|CONSOLE.*(Error|error)' "$T/browser.err" && fail "$2: the page's script failed"
    grep -qE '<td class="site">main at [^<]*loop_leak_sim.c:39(</td>|<div)' "$dom" ||
        fail "$2: the rendered page does not name the leaking site"
    grep -q '<polyline[^>]*class="series"' "$dom" || fail "$2: no timeline drawn"
    [ "$(grep -o '<rect' "$dom" | wc -l)" -ge 4 ] || fail "$2: no flame graph drawn"
    grep -qE '(src|href)=|url\(|@import' "$1" && fail "$2: the page refers to something outside itself"
    grep -q '76.0 MiB' "$dom" || fail "$2: the leaked bytes are not shown"
}

DEMO_DELAY_MS=0 demo/run.sh --sim record -o "$T/sim.culeak" >"$T/out" 2>&1 || { cat "$T/out"; fail "record failed"; }
"$B/culeak" report --format html -o "$T/report.html" "$T/sim.culeak" || fail "report --format html failed"
check_page "$T/report.html" "report"
# the site that grows at every iteration is a growth suspect: first, with its growth and forecast
grep -qE '<tr class="suspect"[^>]*><td class="site">main at [^<]*loop_leak_sim.c:39<div class="why">\+4.00 MiB per mark' \
    "$T/report.html.dom" || fail "report: the growing site is not shown as a suspect"
# the data is aggregated: one moment per mark, not one per event
grep -q '"label":"iteration 19"' "$T/report.html" || fail "the marks are not in the page"

# what a person does on the page, played by a script added to a copy of it: hover the
# timeline, click the marks of iterations 5 and 15, search a site, zoom into it
cat >"$T/play.js" <<'JS'
<script>
(function () {
  const say = (k, v) => document.body.setAttribute("data-" + k, v);
  const svg = document.getElementById("timeline"), r = svg.getBoundingClientRect();
  svg.dispatchEvent(new MouseEvent("mousemove", {clientX: r.left + r.width * 0.6, clientY: r.top + 50, bubbles: true}));
  say("tip", document.getElementById("tip").innerText);
  const tick = label => [...document.querySelectorAll("#timeline line.mark")].find(l => l.dataset.label === label);
  tick("iteration 5").dispatchEvent(new MouseEvent("click", {bubbles: true}));
  tick("iteration 15").dispatchEvent(new MouseEvent("click", {bubbles: true}));
  say("diff", document.getElementById("diff-note").innerText);
  const search = document.getElementById("search");
  search.value = "loop_leak_sim.c:39";
  search.dispatchEvent(new Event("input"));
  const hits = document.querySelectorAll("#flame rect.hit");
  say("hits", hits.length);
  hits[0].dispatchEvent(new MouseEvent("click", {bubbles: true}));
  say("zoom", document.getElementById("flame-note").innerText);
})();
</script>
JS
python3 - "$T/report.html" "$T/play.js" "$T/played.html" <<'PY'
import sys
page, play = open(sys.argv[1]).read(), open(sys.argv[2]).read()
open(sys.argv[3], "w").write(page.replace("</body>", play + "</body>"))
PY
render "$T/played.html" >"$T/played.dom" || fail "played: the browser could not render the page"
grep -E 'Uncaught|CONSOLE.*(Error|error)' "$T/browser.err" && fail "played: the page's script failed"
python3 - "$T/played.dom" <<'PY' || fail "the page does not answer hover, clicks on marks, search and zoom"
import html, re, sys
body = re.search(r"<body([^>]*)>", open(sys.argv[1]).read(), re.S).group(1)
got = {k: html.unescape(v) for k, v in re.findall(r'data-(\w+)="([^"]*)"', body)}
print(got)
assert re.search(r"all devices: [0-9.]+ MiB", got["tip"]), "hover: bytes"
assert re.search(r"top sites mark iteration \d+ .*\n[0-9.]+ MiB main at .*loop_leak_sim.c:39", got["tip"]), "hover: sites"
assert re.search(r"comparing mark iteration 5 .* mark iteration 15 .*: \+40.0 MiB", got["diff"]), "two marks"
assert int(got["hits"]) >= 1, "search"
assert "matching: 56.0 MiB" in got["zoom"] and "zoom out" in got["zoom"], "zoom"
PY

"$B/culeak" report --format html --diff 'iteration 5' 'iteration 15' -o "$T/diff.html" "$T/sim.culeak" ||
    fail "report --format html --diff failed"
check_page "$T/diff.html" "diff"
dom=$T/diff.html.dom
grep -q 'comparing mark iteration 5 (.*) → mark iteration 15' "$dom" || fail "diff: the page does not open on A -> B"
grep -q '+40.0 MiB' "$dom" || fail "diff: the growth from A to B (+40 MiB) is not shown"

# a pool's blocks (the fake PyTorch allocator under a Python loop) are drawn apart from
# the memory they lie in, and the page opens on them: the user's line keeps the bytes
src=$ROOT/tests/e2e/python/blocks_train.py
keep=$(grep -n '# SITE-KEEP$' "$src" | cut -d: -f1)
env LD_LIBRARY_PATH="$FAKE" FAKE_LIBCUDA="$FAKE/libcuda.so.1" FAKE_C10="$FAKE/torch/lib/libc10_cuda.so" \
    "$B/culeak" record -o "$T/blocks.culeak" -- python3 "$src" 8 >"$T/blocks.out" 2>&1 ||
    { cat "$T/blocks.out"; fail "blocks: record failed"; }
"$B/culeak" report --format html -o "$T/blocks.html" "$T/blocks.culeak" || fail "blocks: report --format html failed"
render "$T/blocks.html" >"$T/blocks.dom" || fail "blocks: the browser could not render the page"
grep -q '<label id="layer-pick">' "$T/blocks.dom" || fail "blocks: no choice between blocks and memory"
# it opens on the pools' blocks: the menu's value as the page's script left it, and the
# flame graph's note says which layer it draws
cat >"$T/layer.js" <<'JS'
<script>
document.body.setAttribute("data-layer", document.getElementById("layer").value);
document.body.setAttribute("data-pick", document.getElementById("layer-pick").hidden ? "hidden" : "shown");
</script>
JS
python3 - "$T/blocks.html" "$T/layer.js" "$T/blocks.layer.html" <<'PY'
import sys
page, play = open(sys.argv[1]).read(), open(sys.argv[2]).read()
open(sys.argv[3], "w").write(page.replace("</body>", play + "</body>"))
PY
render "$T/blocks.layer.html" >"$T/blocks.layer.dom" || fail "blocks: the browser could not render the page"
grep -q '<body[^>]*data-layer="1"' "$T/blocks.layer.dom" && grep -q '<body[^>]*data-pick="shown"' "$T/blocks.layer.dom" ||
    fail "blocks: the page does not open on the pools' blocks: $(grep -o '<body[^>]*>' "$T/blocks.layer.dom")"
grep -qE "<td class=\"site\">[^<]*blocks_train.py:$keep" "$T/blocks.dom" ||
    fail "blocks: the kept tensor's line (blocks_train.py:$keep) is not a row of the page"
# the header in PyTorch's words: allocated (blocks) and reserved (the pool's segment)
grep -qE "at the end allocated <b>[0-9.]+ [KMG]?i?B</b>, reserved <b>2.00 MiB</b>" "$T/blocks.dom" ||
    fail "blocks: the header does not say allocated and reserved apart"

# a job whose peak and failed allocation fall together mid-run, and that keeps growing: no
# two labels of the timeline overlap, and the growing site's forecast is drawn as a dashed
# line from the device's memory in use to its capacity (the job has ended: "would have")
cat >"$T/labels.js" <<'JS'
<script>
(function () {
  const say = (k, v) => document.body.setAttribute("data-" + k, v);
  const texts = [...document.querySelectorAll("#timeline text")], boxes = texts.map(t => t.getBBox());
  const over = [];
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      if (a.width && b.width && a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height)
        over.push(texts[i].textContent + " / " + texts[j].textContent);
    }
  say("overlaps", over.join(" | ") || "none");
  say("texts", texts.map(t => t.textContent).join(" | "));
  const f = document.querySelector("#timeline line.forecast");
  say("forecast", f ? [f.getAttribute("x1"), f.getAttribute("y1"), f.getAttribute("x2"), f.getAttribute("y2")].join(",") : "none");
  const cap = document.querySelector("#timeline line.capacity");
  say("capacity", cap ? cap.getAttribute("y1") : "none");
  say("note", document.getElementById("tl-note").textContent);
})();
</script>
JS
# play PAGE OUT: the page with a script added, rendered; its body's data-* attributes in OUT
play() {
    python3 - "$1" "$T/labels.js" "$1.played.html" <<'PY'
import sys
page, play = open(sys.argv[1]).read(), open(sys.argv[2]).read()
open(sys.argv[3], "w").write(page.replace("</body>", play + "</body>"))
PY
    render "$1.played.html" >"$1.played.dom" || fail "$1: the browser could not render the page"
    grep -E 'Uncaught|CONSOLE.*(Error|error)' "$T/browser.err" && fail "$1: the page's script failed"
    python3 - "$1.played.dom" >"$2" <<'PY'
import html, json, re, sys
body = re.search(r"<body([^>]*)>", open(sys.argv[1]).read(), re.S).group(1)
print(json.dumps({k: html.unescape(v) for k, v in re.findall(r'data-(\w+)="([^"]*)"', body)}))
PY
}
env FAKE_LIBCUDA="$FAKE/libcuda.so.1" CULEAK_PYTHON_DIR="$ROOT/python" LD_LIBRARY_PATH="$FAKE" \
    FAKECUDA_MEM_BYTES=1073741824 "$B/culeak" record -o "$T/oom.culeak" -- \
    python3 "$ROOT/tests/e2e/python/grow_loop.py" 12 0.01 oom >"$T/oom.out" 2>&1 || { cat "$T/oom.out"; fail "oom: record failed"; }
"$B/culeak" report --format html -o "$T/oom.html" "$T/oom.culeak" || fail "oom: report --format html failed"
grep -q '"running":false' "$T/oom.html" || fail "oom: the page does not say the process has ended"
play "$T/oom.html" "$T/oom.got"
python3 - "$T/oom.got" <<'PY' || fail "oom: labels or forecast wrong: $(cat "$T/oom.got")"
import json, re, sys
got = json.load(open(sys.argv[1]))
print(got)
assert "peak " in got["texts"] and "failed " in got["texts"], "the peak and the failure are labelled"
assert got["overlaps"] == "none", "overlapping labels: " + got["overlaps"]
x1, y1, x2, y2 = map(float, got["forecast"].split(","))
assert x2 > x1 and y2 < y1, "the forecast rises to the right"
assert abs(y2 - float(got["capacity"])) < 0.01, "it ends at the device's capacity"
assert "device 0 full: 1.00 GiB" in got["texts"], "the capacity is labelled"
assert re.search(r"grow_loop.py:\d+ would have filled device 0 in ~1,000 more iterations \(~\d+ s\)", got["note"]), "the note"
PY

# the console's export while the job runs (held at a breakpoint after 8 iterations):
# nothing has leaked yet, what it shows is live now; its forecast speaks of what comes
start -ex "'break main live > 30MiB'" -- "$B/demo/loop_leak_sim" --delay-ms 0
wait_for "PAUSED"
type_line "export $T/running.html"
wait_for "wrote $T/running.html"
grep -q '"running":true' "$T/running.html" || fail "running export: the page does not say the process runs"
render "$T/running.html" >"$T/running.dom" || fail "running export: the browser could not render the page"
grep -E 'Uncaught|CONSOLE.*(Error|error)' "$T/browser.err" && fail "running export: the page's script failed"
python3 - "$T/running.dom" <<'PY' || fail "running export: the page speaks of leaks while the job runs"
import html, re, sys
dom = html.unescape(re.sub(r"<script.*?</script>", "", open(sys.argv[1]).read(), flags=re.S))
summary = re.search(r'<div class="summary" id="summary">(.*?)</div>', dom, re.S).group(1)
print(re.sub("<[^>]+>", "", summary))
assert "live now" in summary and "leaked" not in summary and "at the end" not in summary, summary
assert "live now, outside pools and caches" in dom and "leaks (live at the end" not in dom, "the moments' names"
assert re.search(r"dashed: at its pace, main at [^<]*loop_leak_sim.c:39 fills device 0 in ~", dom), "the forecast"
PY
type_line "quit"
wait_for "Quit anyway"
type_line "y"
wait_for "CONSOLE-DONE"

# the console's export writes the same page of what it holds
start -- "$B/demo/loop_leak_sim" --delay-ms 0
wait_for "EXITED"
type_line "export $T/console.html"
wait_for "wrote $T/console.html"
check_page "$T/console.html" "console export"
echo "ok"
