#!/usr/bin/env bash
# Who holds the tensors a job kept, in the recording and the reports: at the job's exit
# culeak's Python side (sitecustomize.py, culeak_holders.py) finds the chain of references
# to each tensor still alive and sends it (HOLDER records); the report at a mark says it
# under each site (HELD BY in text, "holders" in JSON), the leak report under the pool
# whose segments hold those blocks. CULEAK_HOLDERS=0 turns the walk off.
set -euo pipefail
NAME=holders_report
. "$(dirname "$0")/python/job_env.sh"
standin_torch
src=tests/e2e/python/holders_job.py
L_GRADS=$(grep -n '# SITE-GRADS$' "$src" | cut -d: -f1)
L_CACHED=$(grep -n '# SITE-CACHED$' "$src" | cut -d: -f1)
GRADS='HELD BY global `grads` of holders_job.py (list), an item: 3 blocks, 12.0 KiB (12288 bytes)'
CACHED='HELD BY lru_cache of `table`, a cached result: 1 block, 8.0 KiB (8192 bytes)'

"$CULEAK" record -o "$tmp/run.culeak" -- "$PY" "$src" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "recording failed"; }
grep -qx 'holders_job: 3 kept' "$tmp/out" || { cat "$tmp/out" "$tmp/err"; fail "the job's output changed"; }
[ ! -s "$tmp/err" ] || { cat "$tmp/err"; fail "the job said something on stderr"; }

# at the mark: each site, then its own holder
"$CULEAK" report --at end "$tmp/run.culeak" >"$tmp/at"
"$PY" - "$tmp/at" "$L_GRADS" "$L_CACHED" "$GRADS" "$CACHED" <<'PYEOF' || { cat "$tmp/at"; fail "HELD BY is not under its site"; }
import sys
text, l_grads, l_cached, grads, cached = sys.argv[1:]
rows = open(text).read().split("\n\n")
def row(line):
    got = [r for r in rows if r.startswith("LIVE") and r.split("\n")[0].endswith("holders_job.py:" + line)]
    assert len(got) == 1, (line, got)
    return got[0]
assert "    " + grads in row(l_grads).split("\n") and cached not in row(l_grads), row(l_grads)
assert "    " + cached in row(l_cached).split("\n") and grads not in row(l_cached), row(l_cached)
PYEOF

# the leak report: the blocks are the pool's, no leaks; who kept them to the end is said
"$CULEAK" report "$tmp/run.culeak" >"$tmp/leaks"
grep -qxF "    $GRADS" "$tmp/leaks" && grep -qxF "    $CACHED" "$tmp/leaks" ||
    { cat "$tmp/leaks"; fail "the leak report does not say who held the blocks"; }

"$CULEAK" report --at end --format json "$tmp/run.culeak" >"$tmp/at.json"
"$PY" - "$tmp/at.json" "$L_GRADS" "$L_CACHED" <<'PYEOF' || { cat "$tmp/at.json"; fail "no holders in JSON"; }
import json, sys
d = json.load(open(sys.argv[1]))
by = {s["site"]["line"]: s.get("holders") for s in d["sites"]}
assert by[int(sys.argv[2])] == [{"by": "global `grads` of holders_job.py (list), an item", "blocks": 3,
                                 "bytes": 12288}], by
assert [h["by"] for h in by[int(sys.argv[3])]] == ["lru_cache of `table`, a cached result"], by
PYEOF

"$CULEAK" dump "$tmp/run.culeak" >"$tmp/dump"
[ "$(grep -c '"type":"holder",.*"words":"global `grads` of holders_job.py (list), an item"' "$tmp/dump")" = 3 ] ||
    { grep holder "$tmp/dump"; fail "culeak dump does not show the HOLDER records"; }

CULEAK_HOLDERS=0 "$CULEAK" record -o "$tmp/off.culeak" -- "$PY" "$src" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "recording failed"; }
"$CULEAK" report --at end "$tmp/off.culeak" >"$tmp/off"
! grep -q 'HELD BY' "$tmp/off" || { cat "$tmp/off"; fail "CULEAK_HOLDERS=0 still walks"; }
echo "$NAME: ok"
