#!/usr/bin/env bash
# report --format torch-snapshot: PyTorch's memory snapshot of a recording, checked field by
# field against what PyTorch 2.11's torch/cuda/_memory_viz.py reads
# (python/torch_snapshot_check.py; Debian's python3-torch, 1.13, reads an older format and
# not even PyTorch 2.11's own snapshots), the checker itself first run on a snapshot
# PyTorch 2.11 took (data/torch211_leak.pickle). A training loop on the stand-in torch:
# its kept blocks carry the user's line, the churned one is not live; the default window
# is the last 10 iterations and --from/--to narrow it; memory PyTorch's allocator does
# not see (the simulated driver's cuMemAlloc) is a segment named by its allocator.
set -euo pipefail
. "$(dirname "$0")/python/job_env.sh"
standin_torch
CHECK="$PY tests/e2e/python/torch_snapshot_check.py"

$CHECK tests/e2e/data/torch211_leak.pickle --site leak_snap.py:13 >"$tmp/real" ||
    { cat "$tmp/real"; fail "the checker refuses PyTorch 2.11's own snapshot"; }

src=tests/e2e/python/blocks_train.py
L_KEEP=$(grep -n '# SITE-KEEP$' "$src" | cut -d: -f1)
L_CHURN=$(grep -n '# SITE-CHURN$' "$src" | cut -d: -f1)
"$CULEAK" record -o "$tmp/run.culeak" -- "$PY" "$src" 14 >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "recording failed"; }
"$CULEAK" report --format torch-snapshot -o "$tmp/snap.pickle" "$tmp/run.culeak" 2>"$tmp/said" ||
    { cat "$tmp/said"; fail "report --format torch-snapshot failed"; }
cat "$tmp/said"
bytes=$(stat -c %s "$tmp/snap.pickle")
grep -q "^culeak: wrote $tmp/snap.pickle: .*($bytes bytes); .* from mark 'iteration 3' to the last allocation" "$tmp/said" ||
    fail "the size written or the window is not said: $(cat "$tmp/said")"
$CHECK "$tmp/snap.pickle" --site "blocks_train.py:$L_KEEP" --no-site "blocks_train.py:$L_CHURN" >"$tmp/check" ||
    { cat "$tmp/check"; fail "the snapshot does not read as PyTorch's"; }
cat "$tmp/check"
# 14 kept blocks and a thread's live at the end; the last 10 iterations' allocations and
# the last one's in the trace
grep -q "active 15 " "$tmp/check" || fail "expected the 14 kept blocks and the thread's live: $(cat "$tmp/check")"
grep -q "alloc=23 " "$tmp/check" || fail "expected the 20 block allocations of 10 iterations and the thread's: $(cat "$tmp/check")"

# a free is its allocation's: its size and frames (the churned line)
"$PY" - "$tmp/snap.pickle" "blocks_train.py" "$L_CHURN" <<'PYEOF' || fail "the frees do not carry their allocation's frames"
import pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
frees = [e for e in d["device_traces"][0] if e["action"] == "free_completed"]
assert frees and all(e["size"] == 65536 for e in frees), [e["size"] for e in frees]
assert all(any(f["filename"].endswith(sys.argv[2]) and f["line"] == int(sys.argv[3]) for f in e["frames"])
           for e in frees), [e["frames"] for e in frees]
PYEOF

"$CULEAK" report --format torch-snapshot --from 'iteration 12' --to 'iteration 13' -o "$tmp/w.pickle" "$tmp/run.culeak" 2>"$tmp/said" ||
    { cat "$tmp/said"; fail "--from/--to failed"; }
$CHECK "$tmp/w.pickle" >"$tmp/check" || { cat "$tmp/check"; fail "the window's snapshot does not read"; }
grep -q "alloc=2 " "$tmp/check" && grep -q "active 13 " "$tmp/check" ||
    fail "--from 'iteration 12' --to 'iteration 13': expected 2 allocations, 13 kept blocks live: $(cat "$tmp/check")"
if "$CULEAK" report --format torch-snapshot --from 'iteration 99' -o "$tmp/x.pickle" "$tmp/run.culeak" 2>"$tmp/said"; then
    fail "an unknown --from mark was taken"
fi
grep -q "no mark 'iteration 99'.*the nearest: 'iteration 13'" "$tmp/said" || fail "the unknown mark is not said: $(cat "$tmp/said")"
"$CULEAK" report --from 'iteration 1' "$tmp/run.culeak" >/dev/null 2>"$tmp/said" && fail "--from was taken without torch-snapshot"
grep -q -- "--from and --to go with --format torch-snapshot" "$tmp/said" || fail "--from alone: $(cat "$tmp/said")"

# the simulated driver: a program's own cuMemAlloc leaks, 600 marked iterations
cc -g -O2 -Iinclude -o "$tmp/pool" tests/e2e/c/pool_and_leak.c -ldl || fail "cannot build pool_and_leak.c"
"$CULEAK" record -o "$tmp/p.culeak" -- "$tmp/pool" >"$tmp/out" 2>&1 || fail "record: $(cat "$tmp/out")"
"$CULEAK" report --format torch-snapshot -o "$tmp/p.pickle" "$tmp/p.culeak" 2>"$tmp/said" || { cat "$tmp/said"; fail "the driver's snapshot"; }
$CHECK "$tmp/p.pickle" --site "pool_and_leak.c:$(grep -n DEVICE-LEAK tests/e2e/c/pool_and_leak.c | cut -d: -f1)" >"$tmp/check" ||
    { cat "$tmp/check"; fail "the driver's snapshot does not read"; }
cat "$tmp/check"
grep -q "^segments 600 blocks 600 active 600 " "$tmp/check" && grep -q "segment_alloc=10$" "$tmp/check" ||
    fail "expected 600 one-block segments and 10 iterations of segment_alloc: $(cat "$tmp/check")"
"$PY" - "$tmp/p.pickle" <<'PYEOF' || fail "the driver's memory is not named by its allocator"
import pickle, sys
d = pickle.load(open(sys.argv[1], "rb"))
names = {s["frames"][0]["name"] for s in d["segments"]}
assert names == {"CUDA driver: cuMemAlloc_v2"}, names
PYEOF
echo "torch_snapshot: ok"
