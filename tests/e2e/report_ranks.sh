#!/usr/bin/env bash
# The cross-rank view: ten ranks of a job (fake driver, python3 by ctypes) on two "hosts",
# each its own hostname (unshare --uts, as root; otherwise both here, said SKIP), recorded
# with -o 'run/%h/%r.culeak'; rank 7 keeps 1 MiB an iteration in load_batch and 64 KiB in
# keep_stats (its growth is the faster one's).
#   - `culeak report run/` (a directory) opens with the table of the ten ranks, marks rank 7
#     and names it with its line, the other nine flat, and the site on 1 of 10 ranks; of
#     ten recordings the view comes alone (no per-process sections), with the totals;
#   - of four recordings, each process's report follows the view;
#   - the JSON's cross_rank member: the ranks with their hosts, the one that differs, the
#     site across ranks, the heat map's marks and cells;
#   - the HTML page, rendered by headless Chromium: a heat map row per rank, the timeline of
#     rank 7 open, and #rank=2 opens rank 2's.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
export FAKE_LIBCUDA=$B/fakecuda/libcuda.so.1
JOB="$ROOT/tests/e2e/python/ranks_job.py"
LINE=$(grep -n "the leak: kept every iteration" "$JOB" | cut -d: -f1)
cd "$T" || fail "no scratch directory"

# host A B: runs "$@" under hostname B when namespaces can be made
hosts=1
unshare --uts true 2>/dev/null || { hosts=0; echo "SKIP: two hosts (unshare --uts needs root): all ranks run here"; }
on_host() {
    local name=$1
    shift
    if [ "$hosts" = 1 ]; then
        unshare --uts sh -c 'hostname "$0" && exec "$@"' "$name" "$@"
    else
        "$@"
    fi
}
for r in 0 1 2 3 4 5 6 7 8 9; do
    h=culeak-a
    [ "$r" -ge 5 ] && h=culeak-b
    on_host "$h" env RANK=$r LEAK_RANK=7 "$B/culeak" record -o 'run/%h/%r.culeak' -- python3 "$JOB" 12 \
        >"rec$r.out" 2>&1 || fail "rank $r: $(cat "rec$r.out")"
done
A=culeak-a BH=culeak-b
[ "$hosts" = 1 ] || A=$(hostname) BH=$(hostname)
[ -f "run/$BH/7.culeak" ] && [ -f "run/$A/0.culeak" ] || fail "the recordings are not per host: $(find run)"

"$B/culeak" report run/ >rep 2>rep.err || fail "report run/: $(cat rep rep.err)"
grep -q "^RANKS: 10 recordings of $([ "$hosts" = 1 ] && echo 2 hosts || echo 1 host)$" rep || fail "no ranks table: $(head -3 rep)"
[ "$(grep -cE "^[ *] ($A|$BH) +[0-9] " rep)" = 10 ] || fail "the table has not the ten ranks: $(cat rep)"
grep -qE "^\* $BH +7 +0 .* \+1\.00 MiB .*load_batch at ranks_job\.py:$LINE$" rep || fail "rank 7's row is not marked: $(cat rep)"
[ "$(grep -c '^\*' rep)" = 1 ] || fail "more than rank 7 marked: $(cat rep)"
grep -qxF "rank 7 on $BH grows +1.00 MiB per iteration in load_batch at ranks_job.py:$LINE; the other 9 ranks are flat" rep ||
    fail "rank 7 is not named with its line: $(cat rep)"
grep -qF "  load_batch at ranks_job.py:$LINE on 1 of 10 ranks (7): 12.0 MiB leaked in 12 allocations; grows +1.00 MiB per iteration on rank 7 on $BH" rep ||
    fail "the site across ranks: $(cat rep)"
grep -q "^====" rep && fail "ten recordings: the view should come alone"
grep -qxF "LEAK SUMMARY: 13369344 bytes leaked in 24 allocations across 10 recordings" rep || fail "no totals: $(tail -3 rep)"

# four recordings: each process's report follows
"$B/culeak" report run/"$A"/0.culeak run/"$A"/1.culeak run/"$BH"/6.culeak run/"$BH"/7.culeak >rep4 2>&1 ||
    fail "report of four: $(cat rep4)"
grep -qxF "rank 7 on $BH grows +1.00 MiB per iteration in load_batch at ranks_job.py:$LINE; the other 3 ranks are flat" rep4 ||
    fail "four ranks: rank 7 not named: $(cat rep4)"
grep -q "^==== process [0-9]* (rank 7) on $BH: 12.7 MiB (13369344 bytes) leaked in 24 allocations$" rep4 ||
    grep -q "^==== process [0-9]* (rank 7): 12.7 MiB (13369344 bytes) leaked in 24 allocations$" rep4 ||
    fail "four ranks: rank 7's own section does not follow: $(cat rep4)"

"$B/culeak" report --format json run/ >rep.json 2>/dev/null || fail "json report"
python3 - rep.json "$A" "$BH" "$LINE" <<'PY' || fail "the JSON's cross_rank"
import json, sys
d = json.load(open(sys.argv[1]))
a, b, line = sys.argv[2], sys.argv[3], int(sys.argv[4])
c = d["cross_rank"]
assert c["recordings"] == 10 and c["read"] == 10, c
assert [(r["rank"], r["host"]) for r in c["ranks"]] == [(i, a if i < 5 else b) for i in range(10)], c["ranks"]
assert [(r["rank"], r["host"], r["growth_per_iteration"]) for r in c["differ"]] == [(7, b, 1 << 20)], c["differ"]
assert c["differ"][0]["site"].endswith("ranks_job.py:%d" % line), c["differ"]
r7 = c["ranks"][7]
assert r7["differs"] and r7["live_bytes"] == 12 * (1 << 20) + 12 * (1 << 16) == r7["leaked_bytes"], r7
assert r7["fastest_suspect"].endswith("ranks_job.py:%d" % line) and r7["series"] == "iteration #", r7
assert all(r["growth_per_iteration"] == 0 and not r["differs"] for r in c["ranks"] if r["rank"] != 7)
assert c["rule"]["median_growth"] == 0 and c["rule"]["mad"] == 0, c["rule"]
s = c["sites"][0]
assert s["site"].endswith("ranks_job.py:%d" % line) and (s["ranks"], s["of"]) == (1, 10), s
assert (s["bytes"], s["allocations"], s["growing"]["rank"]) == (12 << 20, 12, 7), s
h = c["heatmap"]
assert h["marks"][0] == "iteration 0" and h["marks"][-1] == "done" and len(h["marks"]) == 13, h["marks"]
assert len(h["live_bytes"]) == 10 and all(len(row) == 13 for row in h["live_bytes"])
assert h["live_bytes"][7][:3] == [4 << 20, (5 << 20) + (1 << 16), (6 << 20) + (2 << 16)], h["live_bytes"][7]
assert h["live_bytes"][0][:3] == [4 << 20] * 3, h["live_bytes"][0]
assert sorted(p["rank"] for p in d["processes"]) == list(range(10))
assert d["summary"]["bytes"] == 12 * (1 << 20) + 12 * (1 << 16)
slow = [x for x in c["sites"] if "keep_stats" in x["site"]][0]
assert c["sites"][0] is s and slow["growth_per_iteration"] == 1 << 16 and slow["ranks"] == 1, c["sites"]
PY

"$B/culeak" report --format html -o page.html run/ || fail "report --format html"
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || fail "no headless browser (chromium) installed"
render() {
    HOME=$T timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
        --host-resolver-rules='MAP * ~NOTFOUND' --virtual-time-budget=5000 --enable-logging=stderr --v=0 \
        --dump-dom "file://$T/page.html$1" >"$2" 2>browser.err || fail "the browser could not render the page"
    grep -E 'Uncaught|CONSOLE.*(Error|error)' browser.err && fail "the page's script failed"
}
render "" page.dom
[ "$(grep -o '<tr id="rank-[0-9]*"' page.dom | wc -l)" = 10 ] || fail "the heat map has not a row per rank"
grep -q '<tr id="rank-7" class="differs"><th>rank 7 on '"$BH"'</th>' page.dom || fail "rank 7's row is not marked"
python3 - page.dom <<'PY' || fail "rank 7's row lacks its marks"
import re, sys
row = re.search(r'<tr id="rank-7"[^>]*>(.*?)</tr>', open(sys.argv[1]).read()).group(1)
cells = re.findall(r'<td title="([^"]*)"', row)
assert len(cells) == 13 and cells[0].endswith("iteration 0: 4.0 MiB") and cells[-1].endswith("done: 16.8 MiB"), cells
PY
grep -q "Timeline of rank 7 on $BH" page.dom || fail "the page does not open rank 7's timeline"
grep -q '<polyline' page.dom || fail "no timeline drawn"
render "#rank=2" page2.dom
grep -q "Timeline of rank 2 on $A" page2.dom || fail "#rank=2 does not open rank 2's timeline"
echo "PASS report_ranks"
