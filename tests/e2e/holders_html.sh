#!/usr/bin/env bash
# Who holds the blocks on the HTML page, rendered by headless Chromium: the sites table
# has a "held by" column (the root of each site's biggest chain), and a click on a site
# opens a row under it with each chain in full and how the holders changed at the marks
# (a recording made with --holders); a second click closes it.
set -euo pipefail
NAME=holders_html
. "$(dirname "$0")/python/job_env.sh"
standin_torch
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || fail "no headless browser (chromium) installed"
src=tests/e2e/python/holders_marks.py
L_KEPT=$(grep -n '# SITE-KEPT$' "$src" | cut -d: -f1)
"$CULEAK" record --holders -o "$tmp/run.culeak" -- "$PY" "$src" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "recording failed"; }
"$CULEAK" report --format html -o "$tmp/page.html" "$tmp/run.culeak" || fail "report --format html failed"

# the page's sites table on the pools' blocks' layer, before and after clicks on the kept
# tensors' row
cat >"$tmp/probe.js" <<'JS'
<script>
(function () {
  const $ = id => document.getElementById(id);
  const look = () => ({head: [...document.querySelectorAll("#sites thead th")].map(t => t.innerText),
    rows: [...document.querySelectorAll("#sites tbody tr")].map(tr => [tr.className, ...[...tr.cells].map((c, i) => i || tr.className === "chain" ? c.innerText : c.innerText.split("\n")[0])])});
  if ($("layer").value !== "1") { $("layer").value = "1"; $("layer").dispatchEvent(new Event("change")); }
  const out = {first: look()};
  const row = () => [...document.querySelectorAll("#sites tbody tr[data-site]")].find(tr => /holders_marks.py:KEPT$/.test(tr.cells[0].innerText.split("\n")[0]));
  if (row()) { row().click(); out.open = look(); row().click(); out.closed = look(); }
  document.body.setAttribute("data-probe", JSON.stringify(out));
})();
</script>
JS
sed -i "s/KEPT/$L_KEPT/" "$tmp/probe.js"
"$PY" - "$tmp/page.html" "$tmp/probe.js" "$tmp/played.html" <<'PYEOF'
import sys
page, play = open(sys.argv[1]).read(), open(sys.argv[2]).read()
open(sys.argv[3], "w").write(page.replace("</body>", play + "</body>"))
PYEOF
HOME=$tmp timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --host-resolver-rules='MAP * ~NOTFOUND' --virtual-time-budget=5000 --enable-logging=stderr --v=0 \
    --dump-dom "file://$tmp/played.html" >"$tmp/played.dom" 2>"$tmp/browser.err" || fail "the browser could not render the page"
! grep -E 'Uncaught|CONSOLE.*(Error|error)' "$tmp/browser.err" || fail "the page's script failed"
"$PY" - "$tmp/played.dom" "$L_KEPT" <<'PYEOF' || fail "the page does not say who holds the blocks"
import html, json, re, sys
m = re.search(r'data-probe="([^"]*)"', open(sys.argv[1]).read())
d = json.loads(html.unescape(m.group(1)))
line = sys.argv[2]
f = d["first"]
print("head:", f["head"])
assert "held by" in f["head"], f["head"]
col = f["head"].index("held by") + 1
kept = [r for r in f["rows"] if r[1].endswith("holders_marks.py:" + line)]
assert kept and kept[0][col] == "global `kept` of holders_marks.py (list)", f["rows"]
o = d["open"]
i = o["rows"].index([r for r in o["rows"] if r[1].endswith("holders_marks.py:" + line)][0])
chain = o["rows"][i + 1]
print("open:", chain)
assert chain[0] == "chain", chain
text = chain[1].split("\n")
assert text[0] == "HELD BY global `kept` of holders_marks.py (list), an item: 5 blocks, 5.00 KiB", text
assert text[1:] == ["at mark iteration %d: HELD BY global `kept` of holders_marks.py (list), an item: %d block%s, %d.00 KiB"
                    % (k, k + 1, "s" if k else "", k + 1) for k in range(5)], text
assert not [r for r in d["closed"]["rows"] if r[0] == "chain"], "a second click does not close the chains"
PYEOF
echo "$NAME: ok"
