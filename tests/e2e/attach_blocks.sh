#!/usr/bin/env bash
# culeak record --pid on a Python training loop over the fake caching allocator
# (tests/fakecuda/torch), started without culeak: once attached, the allocator's next
# segment attaches the trace tracker through the bridge, as for a launched job, so each
# tensor after the attach is a block at its Python line; culeak.mark finds the attached
# shim; the diff between two iterations names the loop's SITE-KEEP line; the job's output
# and stderr are its own.
set -u
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/$BUILD
T=$(mktemp -d)
job=
trap '[ -n "$job" ] && kill -9 "$job" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
. "$ROOT/tests/e2e/attach/job.sh"
command -v gdb >/dev/null || fail "gdb missing (tools/packages.deb)"
src=tests/e2e/python/attach_train.py
line=$(grep -n '# SITE-KEEP$' "$ROOT/$src" | cut -d: -f1)

export LD_LIBRARY_PATH=$B/fakecuda FAKE_C10=$B/fakecuda/torch/lib/libc10_cuda.so PYTHONPATH=$ROOT/python
python3 "$ROOT/$src" "$T" >"$T/out" 2>"$T/err" &
job=$!
wait_file_exists "$T/ready"
"$B/culeak" record --pid "$job" -o "$T/rec.culeak" 2>"$T/rec.err" &
rec=$!
end=$((SECONDS + 60))
until grep -qs "attached to pid $job" "$T/rec.err"; do
    kill -0 "$rec" 2>/dev/null || fail "record ended: $(cat "$T/rec.err")"
    [ "$SECONDS" -lt "$end" ] || fail "record never attached: $(cat "$T/rec.err")"
    sleep 0.05
done
wait_inventory "$T/rec.culeak"
finish_job "$T"
[ "$job_rc" -eq 0 ] || fail "the job exited $job_rc: $(cat "$T/err")"
job=
wait "$rec" || fail "record exited $?: $(cat "$T/rec.err")"
grep -qx "attach_train: 8 tensors kept" "$T/out" || fail "the job's output: $(cat "$T/out")"
[ ! -s "$T/err" ] || fail "the job's stderr got: $(cat "$T/err")"
"$B/culeak" dump "$T/rec.culeak" >"$T/dump"
allocs=$(grep -c '"api":"torch.alloc","kind":"block"' "$T/dump")
[ "$allocs" -eq 12 ] || fail "$allocs block allocations after the attach, want 12 (6 kept, 6 churned): $(grep note "$T/dump")"
"$B/culeak" report --diff 'iteration 1' 'iteration 4' "$T/rec.culeak" >"$T/diff" 2>&1 || fail "report --diff exited $?"
top=$(grep -m1 -E '^  \+[0-9]+ bytes' "$T/diff")
echo "$top" | grep -q "attach_train.py:$line\b" || fail "the diff's first row is not attach_train.py:$line: $(cat "$T/diff")"
echo "$top" | grep -q "blocks" || fail "the diff's first row is not of blocks: $top"
echo "attach_blocks: ok"
