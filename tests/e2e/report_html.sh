#!/usr/bin/env bash
# The HTML report, rendered by a real browser: `culeak report --format html` of the
# simulated loop-leak demo, and the console's `export FILE.html`, opened by headless
# Chromium (--dump-dom: the DOM after the page's scripts ran). The rendered page names the
# leaking site, draws the timeline and the flame graph, opens on a --diff's comparison,
# and refers to nothing outside itself.
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
grep -q '<option value="1" selected="">' "$T/blocks.dom" ||
    grep -qE 'id="layer"[^>]*>' "$T/blocks.dom" || fail "blocks: the layer menu is missing"
grep -qE "<td class=\"site\">[^<]*blocks_train.py:$keep" "$T/blocks.dom" ||
    fail "blocks: the kept tensor's line (blocks_train.py:$keep) is not a row of the page"
# the header in PyTorch's words: allocated (blocks) and reserved (the pool's segment)
grep -qE "at the end allocated <b>[0-9.]+ [KMG]?i?B</b>, reserved <b>2.00 MiB</b>" "$T/blocks.dom" ||
    fail "blocks: the header does not say allocated and reserved apart"

# the console's export writes the same page of what it holds
start -- "$B/demo/loop_leak_sim" --delay-ms 0
wait_for "EXITED"
type_line "export $T/console.html"
wait_for "wrote $T/console.html"
check_page "$T/console.html" "console export"
echo "ok"
