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
    grep -q '<td class="site">main at [^<]*loop_leak_sim.c:39</td>' "$dom" || fail "$2: the rendered page does not name the leaking site"
    grep -q '<polyline[^>]*class="series"' "$dom" || fail "$2: no timeline drawn"
    [ "$(grep -o '<rect' "$dom" | wc -l)" -ge 4 ] || fail "$2: no flame graph drawn"
    grep -qE '(src|href)=|url\(|@import' "$1" && fail "$2: the page refers to something outside itself"
    grep -q '76.0 MiB' "$dom" || fail "$2: the leaked bytes are not shown"
}

DEMO_DELAY_MS=0 demo/run.sh --sim record -o "$T/sim.culeak" >"$T/out" 2>&1 || { cat "$T/out"; fail "record failed"; }
"$B/culeak" report --format html -o "$T/report.html" "$T/sim.culeak" || fail "report --format html failed"
check_page "$T/report.html" "report"
# the data is aggregated: one moment per mark, not one per event
grep -q '"label":"iteration 19"' "$T/report.html" || fail "the marks are not in the page"

"$B/culeak" report --format html --diff 'iteration 5' 'iteration 15' -o "$T/diff.html" "$T/sim.culeak" ||
    fail "report --format html --diff failed"
check_page "$T/diff.html" "diff"
dom=$T/diff.html.dom
grep -q 'comparing mark iteration 5 (.*) → mark iteration 15' "$dom" || fail "diff: the page does not open on A -> B"
grep -q '+40.0 MiB' "$dom" || fail "diff: the growth from A to B (+40 MiB) is not shown"

# the console's export writes the same page of what it holds
start -- "$B/demo/loop_leak_sim" --delay-ms 0
wait_for "EXITED"
type_line "export $T/console.html"
wait_for "wrote $T/console.html"
check_page "$T/console.html" "console export"
echo "ok"
