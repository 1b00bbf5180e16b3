#!/usr/bin/env bash
# PyTorch's memory snapshots both ways on a real GPU (tests/gpu/torch_snapshot_job.py, a
# leaking loop with its own memory history on): the job's culeak recording written as a
# snapshot loads in torch.cuda._memory_viz (trace_plot, segment_plot, segsum, trace), its
# blocks name the leaking line and the backward() line, cuBLAS's memory is a segment of its
# own; the snapshot the job took itself reads in culeak: report --suspects and --diff name
# the leaking line; read and written again it has the same segments and blocks.
# Needs dist/culeak-*.whl (make wheel), torch, a GPU. Prints PASS/FAIL lines; exits 1 on a
# failure. The files are left in $OUT/torch_snapshot.tar.gz.
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-/tmp/culeak-gpu}
mkdir -p "$OUT"
W=$(mktemp -d)
python3 -m venv --system-site-packages "$W/venv" >/dev/null 2>&1 || { echo "FAIL: no venv"; exit 1; }
"$W/venv/bin/python" -m pip install -q --no-index --no-deps dist/culeak-*.whl || { echo "FAIL: the wheel"; exit 1; }
CULEAK=$W/venv/bin/culeak
JOB=tests/gpu/torch_snapshot_job.py
LEAK=$(grep -n '# LEAK$' "$JOB" | cut -d: -f1)
BACKWARD=$(grep -n '# BACKWARD$' "$JOB" | cut -d: -f1)
fails=0
check() { # check OK WHAT
    if [ "$1" = 0 ]; then echo "PASS: $2"; else echo "FAIL: $2"; fails=$((fails + 1)); fi
}

"$CULEAK" record -o "$W/job.culeak" -- python3 "$JOB" "$W/own.pickle" 16 >"$W/job.out" 2>&1
check $? "the job recorded ($(tail -1 "$W/job.out"))"
[ -s "$W/own.pickle" ]
check $? "the job dumped its own snapshot ($(stat -c %s "$W/own.pickle" 2>/dev/null) bytes)"

# out: culeak's recording as PyTorch's snapshot
"$CULEAK" report --format torch-snapshot -o "$W/culeak.pickle" "$W/job.culeak" 2>"$W/said"
check $? "report --format torch-snapshot: $(cat "$W/said")"
python3 tests/gpu/check_torch_snapshot.py viz "$W/culeak.pickle" torch_snapshot_job.py "$LEAK" "$BACKWARD"
check $? "culeak's snapshot in torch.cuda._memory_viz"
"$CULEAK" report --format torch-snapshot --from 'iteration 10' --to 'iteration 12' -o "$W/window.pickle" \
    "$W/job.culeak" 2>"$W/said"
check $? "--from 'iteration 10' --to 'iteration 12': $(cat "$W/said")"

# in: the job's own snapshot in culeak
"$CULEAK" report --suspects "$W/own.pickle" >"$W/suspects.txt" 2>&1
grep -E "^GROWS .* at <module> at .*torch_snapshot_job.py:$LEAK " "$W/suspects.txt"
check $? "report --suspects on the job's own snapshot names torch_snapshot_job.py:$LEAK"
"$CULEAK" report --diff 'Optimizer.step#SGD.step 4' 'Optimizer.step#SGD.step 12' "$W/own.pickle" >"$W/diff.txt" 2>&1
grep -E "^  \+33554432 bytes .*torch_snapshot_job.py:$LEAK$" "$W/diff.txt"
check $? "report --diff between two optimizer steps names torch_snapshot_job.py:$LEAK with 8 blocks more"
"$CULEAK" report --format html -o "$W/own.html" "$W/own.pickle" 2>"$W/html.err"
grep -q "torch_snapshot_job.py:$LEAK" "$W/own.html"
check $? "report --format html of the job's own snapshot names the leaking line"

# both ways
"$CULEAK" report --format torch-snapshot -o "$W/again.pickle" "$W/own.pickle" 2>"$W/said"
check $? "the job's snapshot written again: $(cat "$W/said")"
python3 tests/gpu/check_torch_snapshot.py same "$W/own.pickle" "$W/again.pickle"
check $? "read by culeak and written again: the same segments and blocks"

tar -C "$W" -czf "$OUT/torch_snapshot.tar.gz" own.pickle culeak.pickle window.pickle again.pickle suspects.txt \
    diff.txt job.out 2>/dev/null
echo "torch_snapshot: $fails failed"
rm -rf "$W"
exit $((fails > 0))
