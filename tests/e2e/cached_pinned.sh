#!/usr/bin/env bash
# PyTorch's pinned-host caching allocator keeps its blocks, as its device allocator does:
# a job on the stand-in torch that reads scalars back (x.item()) leaks nothing, and
# `culeak check` passes; pinned tensors kept in a list are the allocator's memory, held at
# the user's line (CACHED, not LEAKED) in the text, JSON and folded reports; the same
# without libtorch_cuda's symbol table (torch's allocator names are in no export table);
# pinned memory the job takes with cudaHostAlloc itself and never frees is still a leak.
set -euo pipefail
. "$(dirname "$0")/python/job_env.sh"
standin_torch

src=tests/e2e/python/torch_pinned.py
L_KEEP=$(grep -n '# SITE-KEEP$' "$src" | cut -d: -f1)
L_LEAK=$(grep -n '# SITE-LEAK$' "$src" | cut -d: -f1)

export FAKE_TORCH_CUDA=$FAKE/torch/lib/libtorch_cuda.so

# the clean job: exit 0, nothing leaked, the pinned block of x.item() held by the allocator
"$CULEAK" check -- "$PY" "$src" >"$tmp/clean.out" 2>"$tmp/clean.err" || { cat "$tmp/clean.err"; fail "check failed a clean job"; }
grep -q '^torch_pinned: 0 pinned tensors kept$' "$tmp/clean.out" || fail "the job's output changed"
grep -q '^LEAK SUMMARY: 0 bytes leaked' "$tmp/clean.err" || { cat "$tmp/clean.err"; fail "no clean leak summary"; }
! grep -q '^LEAKED' "$tmp/clean.err" || { cat "$tmp/clean.err"; fail "a leak in a clean job"; }
grep -Eq '^CACHED 4 bytes in 1 allocation \(pinned\) from .* \[held by the pytorch caching allocator\]' "$tmp/clean.err" ||
    { cat "$tmp/clean.err"; fail "the pinned block of x.item() is not the allocator's"; }

# pinned tensors kept in a list: held by the allocator at the user's line, in every format
"$CULEAK" record -o "$tmp/keep.culeak" -- "$PY" "$src" keep >/dev/null 2>"$tmp/keep.rec" || { cat "$tmp/keep.rec"; fail "recording failed"; }
set +e
"$CULEAK" report --error-exitcode 9 "$tmp/keep.culeak" >"$tmp/keep.txt" 2>&1
st=$?
set -e
[ $st = 0 ] || { cat "$tmp/keep.txt"; fail "report --error-exitcode found leaks in pinned tensors the allocator holds ($st)"; }
grep -Eq "^CACHED 4\.0 MiB \(4194304 bytes\) in 4 allocations \(pinned\) from <module> at .*torch_pinned\.py:$L_KEEP \[held by the pytorch caching allocator\]" \
    "$tmp/keep.txt" || { cat "$tmp/keep.txt"; fail "the kept pinned tensors are not held at torch_pinned.py:$L_KEEP"; }
"$CULEAK" report --format json "$tmp/keep.culeak" >"$tmp/keep.json"
"$PY" - "$tmp/keep.json" "$L_KEEP" <<'PYEOF' || fail "the JSON report lists the pinned tensors as leaks"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["leaks"] == [] and r["summary"]["bytes"] == 0, r["leaks"]
keep = [c for c in r["cache"] if c["site"]["line"] == int(sys.argv[2])]
assert len(keep) == 1 and keep[0]["bytes"] == 4 << 20 and keep[0]["allocator"] == "pytorch", r["cache"]
PYEOF
"$CULEAK" report --format folded "$tmp/keep.culeak" >"$tmp/keep.folded"
grep -q ";<module>;.*;fake_torch_pin;.*;allocate_host_memory_slowpath;\[pytorch cache\] 4194304$" "$tmp/keep.folded" ||
    { cat "$tmp/keep.folded"; fail "the folded stacks do not put the pinned tensors in the cache"; }

# without libtorch_cuda's symbol table: the module says whose the pinned memory is
mkdir -p "$tmp/torch/lib"
strip --strip-all -o "$tmp/torch/lib/libtorch_cuda.so" "$FAKE_TORCH_CUDA"
! nm "$tmp/torch/lib/libtorch_cuda.so" 2>/dev/null | grep -q CachingHostAllocator || fail "the stripped copy keeps its names"
FAKE_TORCH_CUDA=$tmp/torch/lib/libtorch_cuda.so "$CULEAK" check -- "$PY" "$src" keep >/dev/null 2>"$tmp/strip.err" ||
    { cat "$tmp/strip.err"; fail "check failed a clean job on a stripped libtorch_cuda"; }
grep -Eq "^CACHED 4\.0 MiB \(4194304 bytes\) in 4 allocations \(pinned\) from <module> at .*torch_pinned\.py:$L_KEEP \[held by the pytorch" \
    "$tmp/strip.err" || { cat "$tmp/strip.err"; fail "stripped: the kept pinned tensors are not held at their line"; }

# pinned memory no allocator holds is a leak, at its line
set +e
"$CULEAK" check -- "$PY" "$src" leak >/dev/null 2>"$tmp/leak.err"
st=$?
set -e
[ $st = 1 ] || { cat "$tmp/leak.err"; fail "check passed a job that leaks pinned memory ($st)"; }
grep -Eq "^LEAKED 8\.0 KiB \(8192 bytes\) in 1 allocation \(pinned\) from <module> at .*torch_pinned\.py:$L_LEAK\$" "$tmp/leak.err" ||
    { cat "$tmp/leak.err"; fail "the job's own pinned leak is not LEAKED at torch_pinned.py:$L_LEAK"; }
echo "cached_pinned: ok"
