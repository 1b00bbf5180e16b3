#!/usr/bin/env bash
# The HTML page of a job of two processes (one leaking 4 KiB, the other 3 MiB), rendered by
# headless Chromium: the header adds the processes up (what all of them leaked) and the
# page opens on the process that leaked most, its data saying so too.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
export LD_LIBRARY_PATH=$B/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}
show_failure() { for f in "$T"/rec.out "$T"/page.dom; do [ -f "$f" ] && head -c 3000 "$f"; done; }
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || fail "no headless browser (chromium) installed"

"$B/culeak" record -o "$T/job.culeak" -- bash -c "'$B/fakecuda/client_static' leak 1 4096; '$B/fakecuda/client_static' leak 3 1048576" \
    >"$T/rec.out" 2>&1 || fail "record failed"
"$B/culeak" report --format html -o "$T/page.html" "$T"/job.culeak* || fail "report --format html failed"
python3 - "$T/page.html" <<'PY' || fail "the page's data"
import json, re, sys
d = json.loads(re.search(r'id="culeak-data">(.*?)</script>', open(sys.argv[1]).read(), re.S).group(1))
assert d["all"]["processes"] == 2 and d["all"]["leaked"] == 3 * 1048576 + 4096, d["all"]
leaks = {m["proc"]: m["bytes"] for m in d["moments"] if m["kind"] == "leaks"}
assert leaks[d["open"]] == 3 * 1048576, (d["open"], leaks)
PY
pid=$(python3 -c 'import json,re,sys; d=json.loads(re.search(r"id=\"culeak-data\">(.*?)</script>", open(sys.argv[1]).read(), re.S).group(1)); print(d["processes"][d["open"]]["pid"])' "$T/page.html")
HOME=$T timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --host-resolver-rules='MAP * ~NOTFOUND' --virtual-time-budget=5000 --enable-logging=stderr --v=0 \
    --dump-dom "file://$T/page.html" >"$T/page.dom" 2>"$T/browser.err" || fail "the browser could not render the page"
grep -E 'Uncaught|CONSOLE.*(Error|error)' "$T/browser.err" && fail "the page's script failed"
grep -q 'all 2 processes: peak <b>[^<]*</b>, leaked <b>3.00 MiB</b>' "$T/page.dom" || fail "the header does not add the processes up"
grep -q "this process (pid $pid):</span><span>peak <b>3.00 MiB</b>" "$T/page.dom" ||
    fail "the page does not open on pid $pid, which leaked most"
echo "PASS report_html_processes"
