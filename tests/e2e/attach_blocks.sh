#!/usr/bin/env bash
# culeak record --pid on a Python training loop over the fake caching allocator
# (tests/fakecuda/torch) and the stand-in torch, started without culeak: once attached,
# culeak's Python side runs on the job's main thread (a pending call) and attaches the
# trace tracker at once, so the very first tensor after the attach (carved from a segment
# the allocator already had) is a block at its Python line; the tensors and the segment
# the allocator held at the attach are before-attach blocks and segments equal to its
# memory_snapshot, and the pool's totals are the allocator's; backward() is wrapped, so a
# gradient made on autograd's thread is charged to its line; culeak.mark finds the
# attached shim; the diff between two iterations names the loop's SITE-KEEP line; the
# job's output and stderr are its own. Then, with a snapshot that raises in the job, the
# Python side says so in a NOTE and goes on; the job's output, stderr and status are its
# own.
set -u
. "$(dirname "$0")/attach/job.sh"
attach_test_setup
src=tests/e2e/python/attach_train.py
line=$(grep -n '# SITE-KEEP$' "$ROOT/$src" | cut -d: -f1)
first=$(grep -n '# SITE-SCRATCH$' "$ROOT/$src" | cut -d: -f1)
bwd=$(grep -n '# SITE-BACKWARD$' "$ROOT/$src" | cut -d: -f1)

export LD_LIBRARY_PATH=$B/fakecuda FAKE_C10=$B/fakecuda/torch/lib/libc10_cuda.so PYTHONPATH=$ROOT/python
python3 "$ROOT/$src" "$T" >"$T/out" 2>"$T/err" &
job=$!
wait_file_exists "$T/ready"
"$B/culeak" record --pid "$job" -o "$T/rec.culeak" 2>"$T/rec.err" &
rec=$!
end=$((SECONDS + WAIT_S))
until grep -qs "attached to pid $job" "$T/rec.err"; do
    kill -0 "$rec" 2>/dev/null || fail "record ended: $(cat "$T/rec.err")"
    [ "$SECONDS" -lt "$end" ] || fail "record never attached: $(cat "$T/rec.err")"
    sleep 0.05
done
wait_inventory "$T/rec.culeak"
end=$((SECONDS + WAIT_S))
until grep -aq "caching allocator tracked from now on" "$T/rec.culeak"; do
    [ "$SECONDS" -lt "$end" ] || fail "culeak's Python side never ran in the job: $("$B/culeak" dump "$T/rec.culeak" | grep note)"
    sleep 0.05
done
finish_job "$T"
[ "$job_rc" -eq 0 ] || fail "the job exited $job_rc: $(cat "$T/err")"
job=
wait "$rec" || fail "record exited $?: $(cat "$T/rec.err")"
grep -qx "attach_train: 8 tensors kept" "$T/out" || fail "the job's output: $(cat "$T/out")"
[ ! -s "$T/err" ] || fail "the job's stderr got: $(cat "$T/err")"
"$B/culeak" dump "$T/rec.culeak" >"$T/dump"
allocs=$(grep -c '"api":"torch.alloc","kind":"block"' "$T/dump")
[ "$allocs" -eq 13 ] ||
    fail "$allocs block allocations after the attach, want 13 (6 kept, 6 churned, 1 gradient): $(grep note "$T/dump")"
# the first tensor after the attach, made before any new segment, is a block at its line
"$B/culeak" report --at 'scratch 0' "$T/rec.culeak" >"$T/at0" 2>&1 || fail "report --at exited $?: $(cat "$T/at0")"
grep -E "block\) from <module> at .*attach_train.py:$first\b" "$T/at0" >/dev/null ||
    fail "no block row at attach_train.py:$first (the first tensor after the attach): $(cat "$T/at0")"
# before attach: the allocator's two tensors (1 MiB + 512 KiB) and its 2 MiB segment
before_blocks=$(grep '"api":"before-attach","kind":"block"' "$T/dump" | grep -o '"size":[0-9]*' | cut -d: -f2 | sort -n | tr '\n' ' ')
[ "$before_blocks" = "524288 1048576 " ] ||
    fail "before-attach blocks: '$before_blocks', want the allocator's 524288 and 1048576: $(grep before-attach "$T/dump")"
grep '"api":"before-attach","kind":"device"' "$T/dump" | grep -q '"size":2097152' ||
    fail "no before-attach 2 MiB segment: $(grep before-attach "$T/dump")"
# the pool's totals at "scratch 0" are the allocator's own, nothing outside the pool
want=$(cat "$T/pool0")
grep -qx "MEMORY SUMMARY: ${want% segments} segments by the pools, 0 bytes outside them" "$T/at0" ||
    fail "totals at 'scratch 0' are not the allocator's ($want): $(grep 'MEMORY SUMMARY' "$T/at0")"
# backward() is wrapped: the gradient, made on the engine's thread, is charged to its line
"$B/culeak" report --at 'after backward' "$T/rec.culeak" >"$T/bwd" 2>&1 || fail "report --at exited $?: $(cat "$T/bwd")"
grep -Eq "block\) from <module> at .*attach_train.py:$bwd \(autograd backward\)" "$T/bwd" ||
    fail "the gradient is not charged to attach_train.py:$bwd (autograd backward): $(cat "$T/bwd")"
"$B/culeak" report --diff 'iteration 1' 'iteration 4' "$T/rec.culeak" >"$T/diff" 2>&1 || fail "report --diff exited $?"
top=$(grep -m1 -E '^  \+[0-9]+ bytes' "$T/diff")
echo "$top" | grep -q "attach_train.py:$line\b" || fail "the diff's first row is not attach_train.py:$line: $(cat "$T/diff")"
echo "$top" | grep -q "blocks" || fail "the diff's first row is not of blocks: $top"

rm -f "$T"/ready "$T"/go "$T"/leaked "$T"/end
FAKE_TORCH_SNAPSHOT_FAILS=1 python3 "$ROOT/$src" "$T" >"$T/out" 2>"$T/err" &
job=$!
wait_file_exists "$T/ready"
"$B/culeak" record --pid "$job" -o "$T/fails.culeak" 2>"$T/rec.err" &
rec=$!
end=$((SECONDS + WAIT_S))
until grep -aqs "caching allocator tracked from now on" "$T/fails.culeak"; do
    [ "$SECONDS" -lt "$end" ] || fail "culeak's Python side never ran in the job: $(cat "$T/rec.err")"
    sleep 0.05
done
finish_job "$T"
[ "$job_rc" -eq 0 ] || fail "with a failing snapshot the job exited $job_rc: $(cat "$T/err")"
job=
wait "$rec" || fail "record exited $?: $(cat "$T/rec.err")"
grep -qx "attach_train: 8 tensors kept" "$T/out" || fail "with a failing snapshot, the job's output: $(cat "$T/out")"
[ ! -s "$T/err" ] || fail "with a failing snapshot, the job's stderr got: $(cat "$T/err")"
"$B/culeak" dump "$T/fails.culeak" >"$T/dump"
grep -q '"text":"attached: the caching allocator.s snapshot could not be read: the snapshot failed"' "$T/dump" ||
    fail "no NOTE of the failed snapshot: $(grep note "$T/dump")"
allocs=$(grep -c '"api":"torch.alloc","kind":"block"' "$T/dump")
[ "$allocs" -eq 13 ] || fail "with a failing snapshot, $allocs block allocations after the attach, want 13"
echo "attach_blocks: ok"
