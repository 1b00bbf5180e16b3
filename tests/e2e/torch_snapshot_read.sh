#!/usr/bin/env bash
# A PyTorch memory snapshot read as a recording: the one PyTorch 2.11 took of a leaking
# loop on an H100 (data/torch211_leak.pickle). report --suspects names the leaking line,
# --diff between two of its annotations' marks names it with its growth, --format html and
# dump read it; written again as a torch-snapshot it has the same segments and blocks; a
# pickle that would run code (a __reduce__: GLOBAL, STACK_GLOBAL, REDUCE) is refused with
# the opcode and its offset, and runs nothing; a pickle that is no snapshot is said so.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
PY=${PYTHON:-python3}
snap=tests/e2e/data/torch211_leak.pickle

"$B/culeak" report --suspects "$snap" >"$T/suspects" 2>&1 || fail "report --suspects: $(cat "$T/suspects")"
grep -Eq '^GROWS \+4.00 MiB per iteration \(block\) at <module> at .*leak_snap.py:13 ' "$T/suspects" ||
    fail "the suspects do not name leak_snap.py:13: $(cat "$T/suspects")"
"$B/culeak" report --diff 'Optimizer.step#SGD.step 2' 'Optimizer.step#SGD.step 10' "$snap" >"$T/diff" 2>&1 ||
    fail "report --diff: $(cat "$T/diff")"
grep -Eq '^  \+33554432 bytes \(4194304 -> 37748736 bytes, 1 -> 9 blocks\) <module> at .*leak_snap.py:13$' "$T/diff" ||
    fail "the diff does not name leak_snap.py:13 with 8 blocks more: $(cat "$T/diff")"
"$B/culeak" report --diff 'trace +1000 ms' 'trace +6000 ms' "$snap" >"$T/tdiff" 2>&1 && fail "a mark that is no point of the trace was taken"
grep -q "no mark 'trace +1000 ms'.*the nearest: 'trace +" "$T/tdiff" || fail "the time marks are not offered: $(cat "$T/tdiff")"
"$B/culeak" report --peak "$snap" >"$T/peak" 2>&1 || fail "report --peak: $(cat "$T/peak")"
grep -q "^MEMORY SUMMARY: allocated .* reserved 134217728 bytes in 7 segments by the pools" "$T/peak" ||
    fail "the peak is not the snapshot's 7 segments: $(cat "$T/peak")"
"$B/culeak" report --format html -o "$T/page.html" "$snap" 2>"$T/err" || fail "--format html: $(cat "$T/err")"
grep -q "leak_snap.py:13" "$T/page.html" || fail "the page does not name leak_snap.py:13"
"$B/culeak" dump "$snap" >"$T/dump" 2>"$T/err" # a snapshot has no exit record: dump says so
grep -q '^{"type":"hello",.*"host":"torch snapshot"' "$T/dump" || fail "dump: $(cat "$T/err")"
allocs=$(grep -c '"api":"torch.alloc"' "$T/dump")
echo "dump: $(wc -l <"$T/dump") records, $allocs block allocations"

# both ways: read, written again, the same segments and blocks (the sizes asked for: culeak
# knows a block by its alloc entry's size, not the rounded size it takes in its segment)
"$B/culeak" report --format torch-snapshot -o "$T/again.pickle" "$snap" 2>"$T/said" || fail "written again: $(cat "$T/said")"
cat "$T/said"
"$PY" tests/e2e/python/torch_snapshot_check.py "$T/again.pickle" --site leak_snap.py:13 || fail "the snapshot written again does not read"
"$PY" - "$snap" "$T/again.pickle" <<'PYEOF' || fail "the snapshot written again has other blocks"
import pickle, sys
a, b = (pickle.load(open(f, "rb")) for f in sys.argv[1:3])
def blocks(d):
    return sorted((x["address"], x["requested_size"]) for s in d["segments"] for x in s["blocks"]
                  if x["state"] != "inactive")
def segs(d):
    return sorted((s["address"], s["total_size"]) for s in d["segments"])
assert blocks(a) == blocks(b), (blocks(a), blocks(b))
assert segs(a) == segs(b), (segs(a), segs(b))
print("round trip: %d segments, %d blocks the same" % (len(segs(a)), len(blocks(a))))
PYEOF

# a block is PyTorch's until free_completed, which a stream's work may hold back after
# free_requested: live at a mark between them; the blocks live before the trace (one
# whose first entry is a free, one of the final state that no entry names) are there
# from the start, the latter with the size it asked for
"$PY" - "$T/held.pickle" <<'PYEOF'
import pickle, sys
fr = [{"name": "<module>", "filename": "/job/held.py", "line": 7}]
seg = {"device": 0, "address": 1 << 20, "total_size": 2 << 20, "allocated_size": 0, "active_size": 0,
       "requested_size": 0, "stream": 0, "segment_type": "small", "segment_pool_id": (0, 0),
       "is_expandable": False, "frames": fr,
       "blocks": [{"address": 1 << 20, "size": 16384, "requested_size": 0, "state": "inactive", "frames": []},
                  {"address": (1 << 20) + 16384, "size": 512, "requested_size": 100, "state": "active_allocated",
                   "frames": [{"name": "<module>", "filename": "/job/held.py", "line": 9}]},
                  {"address": (1 << 20) + 16896, "size": (2 << 20) - 16896, "requested_size": 0,
                   "state": "inactive", "frames": []}]}
def e(action, addr, t, size=4096):
    return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": t, "frames": fr}
trace = [e("free_requested", (1 << 20) + 8192, 50), e("free_completed", (1 << 20) + 8192, 60),
         e("alloc", 1 << 20, 100), e("free_requested", 1 << 20, 200), e("free_completed", 1 << 20, 400)]
ann = [{"stage": "START", "name": "between", "device": 0, "time_us": 300},
       {"stage": "START", "name": "early", "device": 0, "time_us": 55}]
pickle.dump({"segments": [seg], "device_traces": [trace], "external_annotations": ann}, open(sys.argv[1], "wb"))
PYEOF
"$B/culeak" report --at 'between 1' "$T/held.pickle" >"$T/held" 2>&1 || fail "report --at on a made snapshot: $(cat "$T/held")"
grep -q "^LIVE 4.0 KiB (4096 bytes) in 1 allocation (block) from <module> at /job/held.py:7" "$T/held" ||
    fail "a block freed but not free_completed is not live: $(cat "$T/held")"
"$B/culeak" report --at 'early 1' "$T/held.pickle" >"$T/held" 2>&1 || fail "report --at early: $(cat "$T/held")"
grep -q "^LIVE SUMMARY (early 1): 4196 bytes in 2 allocations " "$T/held" ||
    fail "the blocks live before the trace are not live at its start: $(cat "$T/held")"

# hostile pickles: each would run `touch $T/ran`
"$PY" - "$T" <<'PYEOF'
import os, pickle, sys
t = sys.argv[1]
class Run:
    def __reduce__(self):
        return (os.system, ("touch %s/ran" % t,))
for p in (2, 4):
    open("%s/evil%d.pickle" % (t, p), "wb").write(pickle.dumps({"segments": [Run()], "device_traces": []}, protocol=p))
open("%s/other.pickle" % t, "wb").write(pickle.dumps({"weights": [1.5, 2.5]}, protocol=4))
PYEOF
"$PY" -c "import pickle; pickle.load(open('$T/evil2.pickle', 'rb'))"
[ -e "$T/ran" ] || fail "the hostile pickle runs nothing even in Python: the test proves nothing"
rm -f "$T/ran"
for p in 2 4; do
    "$B/culeak" report "$T/evil$p.pickle" >"$T/out" 2>&1 && fail "a hostile pickle (protocol $p) was read"
    cat "$T/out"
    grep -Eq "evil$p.pickle: pickle: at offset [0-9]+: opcode (GLOBAL|STACK_GLOBAL) \(0x[0-9a-f]+\) refused" "$T/out" ||
        fail "the refusal does not name the opcode and its offset: $(cat "$T/out")"
    [ -e "$T/ran" ] && fail "reading a hostile pickle ran its code"
done
"$B/culeak" report "$T/other.pickle" >"$T/out" 2>&1 && fail "a pickle that is no snapshot was read"
grep -q "other.pickle: a pickle, but not a PyTorch memory snapshot" "$T/out" || fail "no snapshot: $(cat "$T/out")"
echo "torch_snapshot_read: ok"
