#!/usr/bin/env bash
# Who holds the tensors at each mark (record --holders): after each culeak.mark the shim
# asks the job's interpreter to walk at its next safe point (a pending call, never a
# signal handler); each walk ends with an address-0 HOLDER record saying "mark". The
# report under a site says who held its blocks at each mark where that changed: the list
# that grows by one block an iteration, the tensor a local held, then a global list. A
# tensor the job drops after a walk is freed at once: the walk keeps no reference (the
# locals snapshot of the frame it read is emptied). Without --holders nothing walks at
# marks.
set -euo pipefail
NAME=holders_marks
. "$(dirname "$0")/python/job_env.sh"
standin_torch
src=tests/e2e/python/holders_marks.py
L_KEPT=$(grep -n '# SITE-KEPT$' "$src" | cut -d: -f1)
L_SCRATCH=$(grep -n '# SITE-SCRATCH$' "$src" | cut -d: -f1)
L_FIXED=$(grep -n '# SITE-FIXED$' "$src" | cut -d: -f1)
L_MARK=$(grep -n 'culeak.mark(' "$src" | cut -d: -f1)

"$CULEAK" record --holders -o "$tmp/run.culeak" -- "$PY" "$src" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "recording failed"; }
grep -qx 'holders_marks: 5 kept' "$tmp/out" || { cat "$tmp/out" "$tmp/err"; fail "the job's output changed"; }
[ ! -s "$tmp/err" ] || { cat "$tmp/err"; fail "the job said something on stderr"; }

# one walk per mark, each ended, then the one at exit
"$CULEAK" dump "$tmp/run.culeak" >"$tmp/dump"
[ "$(grep -c '"type":"holder","addr":"0x0","words":"mark"' "$tmp/dump")" = 5 ] &&
    [ "$(grep -c '"type":"holder","addr":"0x0","words":"exit"' "$tmp/dump")" = 1 ] ||
    { grep holder "$tmp/dump"; fail "not one walk per mark"; }

"$CULEAK" report --at "iteration 4" "$tmp/run.culeak" >"$tmp/at"
KEPT='HELD BY global `kept` of holders_marks.py (list), an item'
"$PY" - "$tmp/at" "$L_KEPT" "$L_SCRATCH" "$L_MARK" "$KEPT" "$L_FIXED" <<'PYEOF' || { cat "$tmp/at"; fail "the holders per mark are not under their sites"; }
import sys
text, l_kept, l_scratch, l_mark, kept, l_fixed = sys.argv[1:]
rows = open(text).read().split("\n\n")
def row(line):
    got = [r for r in rows if r.startswith("LIVE") and r.split("\n")[0].endswith("holders_marks.py:" + line)]
    assert len(got) == 1, (line, got)
    return [l for l in got[0].split("\n") if "at mark" in l]
assert row(l_kept) == ['    at mark "iteration %d": %s: %d block%s, %d.0 KiB (%d bytes)'
                       % (i, kept, i + 1, "s" if i else "", i + 1, 1024 * (i + 1)) for i in range(5)], row(l_kept)
fixed = [r for r in rows if r.startswith("LIVE") and r.split("\n")[0].endswith("holders_marks.py:" + l_fixed)]
assert len(fixed) == 1 and "    HELD BY global `fixed` of holders_marks.py: 1 block, 512 bytes" in fixed[0].split("\n"), fixed
assert row(l_fixed) == [], "holders that never changed are listed at each mark"
assert not [r for r in rows if r.startswith("LIVE") and r.split("\n")[0].endswith("holders_marks.py:" + l_scratch)], \
    "the tensor the job dropped at iteration 3 still lives"
PYEOF
"$CULEAK" report --at "iteration 2" "$tmp/run.culeak" >"$tmp/at2"
"$PY" - "$tmp/at2" "$L_SCRATCH" "$L_MARK" <<'PYEOF' || { cat "$tmp/at2"; fail "the scratch tensor's holders per mark"; }
import sys
text, l_scratch, l_mark = sys.argv[1:]
rows = [r for r in open(text).read().split("\n\n") if r.startswith("LIVE") and r.split("\n")[0].endswith("holders_marks.py:" + l_scratch)]
assert len(rows) == 1, rows
got = [l for l in rows[0].split("\n") if "at mark" in l]
assert got == ['    at mark "iteration 0": HELD BY local `scratch` of train at holders_marks.py:%s: 1 block, 2.0 KiB (2048 bytes)' % l_mark,
               '    at mark "iteration 2": HELD BY global `stash` of holders_marks.py (list), an item: 1 block, 2.0 KiB (2048 bytes)'], got
PYEOF

"$CULEAK" report --at "iteration 4" --format json "$tmp/run.culeak" >"$tmp/at.json"
"$PY" - "$tmp/at.json" "$L_KEPT" <<'PYEOF' || { cat "$tmp/at.json"; fail "no holders_at_marks in JSON"; }
import json, sys
d = json.load(open(sys.argv[1]))
site = [s for s in d["sites"] if s["site"]["line"] == int(sys.argv[2])][0]
assert site["holders_changes"] == 5, site
assert [(m["mark"], m["holders"][0]["blocks"]) for m in site["holders_at_marks"]] == \
    [("iteration %d" % i, i + 1) for i in range(5)], site["holders_at_marks"]
PYEOF

# a process culeak attaches to was not started with the walks: --holders says so
! "$CULEAK" record --holders -o "$tmp/pid.culeak" --pid 2147483646 2>"$tmp/err" &&
    grep -qF -- "--holders is for a job culeak starts" "$tmp/err" || { cat "$tmp/err"; fail "record --holders --pid"; }

# without --holders: the walk at exit only
"$CULEAK" record -o "$tmp/off.culeak" -- "$PY" "$src" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "recording failed"; }
"$CULEAK" dump "$tmp/off.culeak" >"$tmp/dump"
! grep -q '"words":"mark"' "$tmp/dump" || fail "walks at marks without --holders"
"$CULEAK" report --at "iteration 4" "$tmp/off.culeak" >"$tmp/off"
! grep -q 'at mark' "$tmp/off" || { cat "$tmp/off"; fail "holders at marks without --holders"; }
echo "$NAME: ok"
