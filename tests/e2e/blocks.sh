#!/usr/bin/env bash
# Blocks of a caching allocator, without a GPU or torch: a Python training loop allocates
# through an installed library (a package on a site-packages path) from the fake
# libc10_cuda (tests/fakecuda/torch), which calls culeak's trace tracker like PyTorch's.
# Each step keeps one block and churns another. The diff between two iteration marks must
# name the user's line, with the library line it went through; blocks live at exit are
# not leaks; the allocator's method is the one its symbol table names, whatever the table
# of versions says; without symbols only an exact version of the table is trusted; else,
# or with a misread trace entry, tensor tracking is off with one line and the job's
# segments are still traced.
set -euo pipefail
. "$(dirname "$0")/python/job_env.sh"
standin_torch

src=tests/e2e/python/blocks_train.py lib=tests/e2e/python/site-packages/tensorlib/__init__.py
L_KEEP=$(grep -n '# SITE-KEEP$' "$src" | cut -d: -f1)
L_CHURN=$(grep -n '# SITE-CHURN$' "$src" | cut -d: -f1)
L_LIB=$(grep -n '# LIB-ALLOC$' "$lib" | cut -d: -f1)


"$CULEAK" record -o "$tmp/run.culeak" -- "$PY" "$src" 8 >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "recording failed"; }
grep -q 'tensor tracking off' "$tmp/err" && { cat "$tmp/err"; fail "tensor tracking was turned off"; }
"$CULEAK" dump "$tmp/run.culeak" >"$tmp/dump"
allocs=$(grep -c '"api":"torch.alloc","kind":"block"' "$tmp/dump" || true)
frees=$(grep -c '"api":"torch.free","kind":"block"' "$tmp/dump" || true)
# 8 churned blocks freed in the loop, the kept ones when the interpreter exits
[ "$allocs" = 17 ] && [ "$frees" -ge 8 ] || fail "expected 17 block allocations and 8 or more frees, saw $allocs and $frees"

# in a Python process a thread without Python frames (autograd's backward thread) keeps
# the pool's few native frames, not its whole stack (11 nested calls below its start)
"$PY" - "$tmp/dump" <<'PYEOF' || fail "the block of a thread without Python is unwound in full"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
b = [e for e in ev if e.get("api") == "torch.alloc" and e["size"] == 12800]
assert len(b) == 1 and 1 <= len(b[0]["stack"]) <= 6, b
assert not any(int(ip, 16) >> 63 for ip in b[0]["stack"]), b
PYEOF

# --depth holds for blocks too: at most 2 native frames inside the Python caller, and a
# thread without Python keeps 2 frames in all
"$CULEAK" record -d 2 -o "$tmp/d2.culeak" -- "$PY" "$src" 3 >/dev/null 2>"$tmp/d2.err" || { cat "$tmp/d2.err"; fail "recording with -d 2 failed"; }
"$CULEAK" dump "$tmp/d2.culeak" >"$tmp/d2.dump"
"$PY" - "$tmp/d2.dump" <<'PYEOF' || fail "block stacks ignore --depth"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
b = [e for e in ev if e.get("api") == "torch.alloc"]
py = lambda ip: int(ip, 16) >> 63
with_py = [e for e in b if any(py(ip) for ip in e["stack"])]
assert len(with_py) == 6, [e["stack"] for e in b]
for e in with_py:
    native = next(i for i, ip in enumerate(e["stack"]) if py(ip))
    assert native <= 2, e["stack"]
thread = [e for e in b if e["size"] == 12800]
assert len(thread) == 1 and len(thread[0]["stack"]) == 2, thread
PYEOF

# the growth between two marks: 4 kept blocks at the user's line, via the library's line
"$CULEAK" report --diff 'iteration 2' 'iteration 6' "$tmp/run.culeak" >"$tmp/diff" 2>&1
cat "$tmp/diff"
grep -Eq "^  \+16384 bytes \(8192 -> 24576 bytes, 2 -> 6 blocks\) <module> at .*blocks_train.py:$L_KEEP, via tensorlib/__init__.py:$L_LIB\$" "$tmp/diff" ||
    fail "the diff does not name blocks_train.py:$L_KEEP via tensorlib/__init__.py:$L_LIB"
! grep -q "blocks_train.py:$L_CHURN" "$tmp/diff" || fail "the churning line shows in the diff"
"$CULEAK" report --format json --diff 'iteration 2' 'iteration 6' "$tmp/run.culeak" >"$tmp/diff.json"
grep -q "\"via\":\"tensorlib/__init__.py:$L_LIB\"" "$tmp/diff.json" || fail "no via in the JSON diff"

# the growth suspects name the same line, with the library line it went through
"$CULEAK" report --suspects "$tmp/run.culeak" >"$tmp/suspects" 2>&1
grep -Eq "^GROWS \+4.00 KiB per iteration \(block\) at <module> at .*blocks_train.py:$L_KEEP, via tensorlib/__init__.py:$L_LIB " \
    "$tmp/suspects" || { cat "$tmp/suspects"; fail "the suspects do not name blocks_train.py:$L_KEEP via tensorlib"; }

# from before the first step: one row per cause. The blocks are the row at the user's line;
# the segment the pool took for them is the pool's own line, never a second row at that
# line; the header says allocated (blocks) and reserved (segments) as torch.cuda does, at
# each mark, and live is reserved plus what lies outside the pools
"$CULEAK" report --diff 'iteration 0' 'iteration 6' "$tmp/run.culeak" >"$tmp/diff0" 2>&1
grep -q "^culeak: iteration 0 -> iteration 6: allocated +24.0 KiB (24576 bytes), reserved +2.0 MiB (2097152 bytes), +0 bytes outside the pools (live +2.0 MiB (2097152 bytes))\$" "$tmp/diff0" ||
    { cat "$tmp/diff0"; fail "the diff's header does not say allocated and reserved"; }
grep -q "^culeak:   at iteration 0: allocated 0 bytes in 0 blocks, reserved 0 bytes in 0 segments, 0 bytes outside the pools\$" "$tmp/diff0" &&
grep -q "^culeak:   at iteration 6: allocated 24.0 KiB (24576 bytes) in 6 blocks, reserved 2.0 MiB (2097152 bytes) in 1 segment, 0 bytes outside the pools\$" "$tmp/diff0" ||
    { cat "$tmp/diff0"; fail "no allocated and reserved at each mark"; }
[ "$(grep -c "blocks_train.py:$L_KEEP," "$tmp/diff0")" = 1 ] || { cat "$tmp/diff0"; fail "the growth is listed twice"; }
grep -Eq "^  \+24576 bytes \(0 -> 24576 bytes, 0 -> 6 blocks\) .*blocks_train.py:$L_KEEP," "$tmp/diff0" ||
    { cat "$tmp/diff0"; fail "no row of the blocks"; }
grep -q "^  pytorch caching allocator: reserved +2.0 MiB (2097152 bytes) (0 -> 2097152 bytes, 0 -> 1 segments)\$" "$tmp/diff0" ||
    { cat "$tmp/diff0"; fail "no line of the pool's segment"; }
grep -q ", 24.0 KiB (24576 bytes) in 6 pool blocks, 2.0 MiB (2097152 bytes) in 1 segment the pools reserved\$" "$tmp/diff0" ||
    { cat "$tmp/diff0"; fail "the segment made after iteration 0 is not the pool's"; }
"$CULEAK" report --format json --diff 'iteration 0' 'iteration 6' "$tmp/run.culeak" >"$tmp/diff0.json"
"$PY" - "$tmp/diff0.json" <<'PYEOF' || { cat "$tmp/diff0.json"; fail "the JSON diff does not keep the pool apart"; }
import json, sys
d = json.load(open(sys.argv[1]))["diff"]
assert [s["kind"] for s in d["sites"]] == ["block"], d["sites"]
assert [(p["allocator"], p["delta_bytes"], p["segments_b"]) for p in d["pools"]] == [("pytorch", 2097152, 1)], d["pools"]
assert d["memory_a"] == dict(allocated_bytes=0, allocated_blocks=0, reserved_bytes=0, reserved_segments=0,
                             other_bytes=0, other_count=0), d["memory_a"]
assert d["memory_b"] == dict(allocated_bytes=24576, allocated_blocks=6, reserved_bytes=2097152, reserved_segments=1,
                             other_bytes=0, other_count=0), d["memory_b"]
assert d["delta_bytes"] == d["memory_b"]["reserved_bytes"] + d["memory_b"]["other_bytes"]
assert d["new"]["stacks"] and all(s["count"] == 6 for s in d["new"]["stacks"]), d["new"]
PYEOF
# what was live at a mark: the blocks at their line, the segment as the pool's, and a
# summary in PyTorch's words (text and JSON)
"$CULEAK" report --at 'iteration 6' "$tmp/run.culeak" >"$tmp/at6" 2>&1
[ "$(grep -c "blocks_train.py:$L_KEEP," "$tmp/at6")" = 1 ] || { cat "$tmp/at6"; fail "the report at a mark lists the growth twice"; }
grep -q "^LIVE 2.0 MiB (2097152 bytes) in 1 segment (device): pytorch caching allocator: reserved\$" "$tmp/at6" ||
    { cat "$tmp/at6"; fail "no line of the pool in the report at a mark"; }
grep -q "^MEMORY SUMMARY: allocated 24576 bytes in 6 blocks, reserved 2097152 bytes in 1 segments by the pools, 0 bytes outside them\$" "$tmp/at6" ||
    { cat "$tmp/at6"; fail "no memory summary at a mark"; }
"$CULEAK" report --format json --at 'iteration 6' "$tmp/run.culeak" >"$tmp/at6.json"
"$PY" - "$tmp/at6.json" <<'PYEOF' || { cat "$tmp/at6.json"; fail "the JSON report at a mark does not keep the pool apart"; }
import json, sys
d = json.load(open(sys.argv[1]))
assert [s["kinds"] for s in d["sites"]] == [["block"]], d["sites"]
assert [(p["allocator"], p["bytes"], p["segments"]) for p in d["pools"]] == [("pytorch", 2097152, 1)], d["pools"]
assert d["summary"]["memory"]["allocated_bytes"] == 24576 and d["summary"]["memory"]["reserved_bytes"] == 2097152
PYEOF

# the page's sites: the user's line once (its blocks), the segment as the pool's row
"$CULEAK" report --format html -o "$tmp/run.html" "$tmp/run.culeak" || fail "no page"
"$PY" - "$tmp/run.html" "$L_KEEP" <<'PYEOF' || fail "the page lists the growth twice"
import re, sys
page = open(sys.argv[1]).read()
texts = re.findall(r'"text":"((?:[^"\\]|\\.)*)"', page)
at_line = [t for t in texts if t.endswith("blocks_train.py:" + sys.argv[2])]
assert len(at_line) == 1, texts
assert "pytorch caching allocator: reserved" in texts, texts
PYEOF

# "this package is mine": with the library's path in CULEAK_MY_CODE its line is the site
CULEAK_MY_CODE=$ROOT/tests/e2e/python/site-packages/tensorlib/ "$CULEAK" report --diff 'iteration 2' 'iteration 6' \
    "$tmp/run.culeak" >"$tmp/mine" 2>&1
grep -Eq "^  \+16384 bytes .* at .*site-packages/tensorlib/__init__.py:$L_LIB\$" "$tmp/mine" ||
    { cat "$tmp/mine"; fail "CULEAK_MY_CODE did not make the library's line the site"; }
"$CULEAK" report --my-code "$ROOT/tests/e2e/python/site-packages/tensorlib/" --diff 'iteration 2' 'iteration 6' \
    "$tmp/run.culeak" >"$tmp/mine2" 2>&1
grep -Eq "^  \+16384 bytes .* at .*site-packages/tensorlib/__init__.py:$L_LIB\$" "$tmp/mine2" ||
    { cat "$tmp/mine2"; fail "--my-code did not make the library's line the site"; }

# live blocks at exit are the pool's: no leak, and the segment is reported as cache
"$CULEAK" check -- "$PY" "$src" 3 >"$tmp/check.out" 2>"$tmp/check.err" || { cat "$tmp/check.err"; fail "check reported leaks"; }
grep -q '^LEAK SUMMARY: 0 bytes' "$tmp/check.err" || { cat "$tmp/check.err"; fail "no clean leak summary"; }
grep -q '^CACHE SUMMARY: 2097152 bytes' "$tmp/check.err" || { cat "$tmp/check.err"; fail "the segment is not cache"; }

# a torch version not in culeak's table: the method is found through the library's
# symbol table; stripped of it, one line says tracking is off and the segments are seen
mkdir -p "$tmp/torch/lib" "$tmp/stripped/lib"
cp "$FAKE/torch/lib/libc10_cuda.so" "$tmp/torch/lib/"
echo "__version__ = '2.99.0'" >"$tmp/torch/version.py"
FAKE_C10=$tmp/torch/lib/libc10_cuda.so "$CULEAK" record -o "$tmp/new.culeak" -- "$PY" "$src" 3 >"$tmp/new.out" 2>"$tmp/new.err" ||
    { cat "$tmp/new.err"; fail "the job failed with torch 2.99"; }
! grep -q 'tensor tracking off' "$tmp/new.err" || { cat "$tmp/new.err"; fail "tracking off with torch 2.99 and its symbols"; }
"$CULEAK" dump "$tmp/new.culeak" >"$tmp/new.dump"
grep -q '"api":"torch.alloc","kind":"block"' "$tmp/new.dump" || fail "no blocks with torch 2.99 and its symbols"
strip --strip-all -o "$tmp/stripped/lib/libc10_cuda.so" "$FAKE/torch/lib/libc10_cuda.so"
cp "$tmp/torch/version.py" "$tmp/stripped/version.py"
FAKE_C10=$tmp/stripped/lib/libc10_cuda.so "$CULEAK" record -o "$tmp/old.culeak" -- "$PY" "$src" 3 >"$tmp/old.out" 2>"$tmp/old.err" ||
    { cat "$tmp/old.err"; fail "the job failed with an unknown, stripped torch"; }
[ "$(grep -c 'culeak: tensor tracking off: torch 2.99.0 is not one culeak knows' "$tmp/old.err")" = 1 ] ||
    { cat "$tmp/old.err"; fail "no single 'tensor tracking off' line for a stripped torch 2.99"; }
grep -q 'blocks_train: 3 blocks kept' "$tmp/old.out" || fail "the job's output changed"
"$CULEAK" dump "$tmp/old.culeak" >"$tmp/old.dump"
! grep -q '"kind":"block"' "$tmp/old.dump" || fail "block events with tracking off"
grep -q '"api":"cudaMalloc","kind":"device","size":2097152' "$tmp/old.dump" || fail "the segment was not traced"

# a 2.11 build whose method sits elsewhere in the vtable: its symbol table says where,
# the table's slot is not called
mkdir -p "$tmp/shifted/lib"
cp "$FAKE/torch-shifted/lib/libc10_cuda.so" "$tmp/shifted/lib/"
cp "$FAKE/torch/version.py" "$tmp/shifted/version.py"
FAKE_C10=$tmp/shifted/lib/libc10_cuda.so "$CULEAK" record -o "$tmp/shifted.culeak" -- "$PY" "$src" 3 \
    >"$tmp/shifted.out" 2>"$tmp/shifted.err" || { cat "$tmp/shifted.err"; fail "the job failed with a shifted vtable"; }
! grep -q 'tensor tracking off' "$tmp/shifted.err" || { cat "$tmp/shifted.err"; fail "tracking off with a shifted vtable"; }
"$CULEAK" dump "$tmp/shifted.culeak" >"$tmp/shifted.dump"
grep -q '"api":"torch.alloc","kind":"block"' "$tmp/shifted.dump" || fail "no blocks with a shifted vtable and its symbols"
# ... whose device_ field is elsewhere too (a byte before it): the table's offset is not
# trusted for it, blocks on device 1 are recorded on their context's device
FAKE_C10=$tmp/shifted/lib/libc10_cuda.so FAKE_C10_BLOCK_DEVICE=1 "$CULEAK" record -o "$tmp/shifted1.culeak" -- \
    "$PY" "$src" 3 >"$tmp/shifted1.out" 2>"$tmp/shifted1.err" || { cat "$tmp/shifted1.err"; fail "the job failed"; }
"$CULEAK" dump "$tmp/shifted1.culeak" >"$tmp/shifted1.dump"
devices=$(grep '"api":"torch.alloc","kind":"block"' "$tmp/shifted1.dump" | grep -o '"device":[-0-9]*' | sort | uniq -c)
# (the block of the thread without Python has no context: device -1)
[ "$(echo $devices)" = '1 "device":-1 6 "device":0' ] ||
    fail "a shifted vtable's blocks are not on their context's device: $devices"
# without symbols: the table for its exact versions only, not for a 2.11.0a0 (NGC, source builds)
mkdir -p "$tmp/stripped211/lib" "$tmp/ngc/lib"
strip --strip-all -o "$tmp/stripped211/lib/libc10_cuda.so" "$FAKE/torch/lib/libc10_cuda.so"
cp "$tmp/stripped211/lib/libc10_cuda.so" "$tmp/ngc/lib/"
cp "$FAKE/torch/version.py" "$tmp/stripped211/version.py"
echo "__version__ = '2.11.0a0+a1b2c3d.nv26.01'" >"$tmp/ngc/version.py"
FAKE_C10=$tmp/stripped211/lib/libc10_cuda.so "$CULEAK" record -o "$tmp/s211.culeak" -- "$PY" "$src" 3 \
    >"$tmp/s211.out" 2>"$tmp/s211.err" || { cat "$tmp/s211.err"; fail "the job failed with a stripped 2.11.0+cu130"; }
! grep -q 'tensor tracking off' "$tmp/s211.err" || { cat "$tmp/s211.err"; fail "tracking off with a stripped 2.11.0+cu130"; }
"$CULEAK" dump "$tmp/s211.culeak" >"$tmp/s211.dump"
grep -q '"api":"torch.alloc","kind":"block"' "$tmp/s211.dump" || fail "no blocks with a stripped 2.11.0+cu130"
FAKE_C10=$tmp/ngc/lib/libc10_cuda.so "$CULEAK" record -o "$tmp/ngc.culeak" -- "$PY" "$src" 3 \
    >"$tmp/ngc.out" 2>"$tmp/ngc.err" || { cat "$tmp/ngc.err"; fail "the job failed with a stripped 2.11.0a0"; }
[ "$(grep -c 'culeak: tensor tracking off: torch 2.11.0a0+a1b2c3d.nv26.01 is not one culeak knows' "$tmp/ngc.err")" = 1 ] ||
    { cat "$tmp/ngc.err"; fail "no single 'tensor tracking off' line for a stripped 2.11.0a0"; }
"$CULEAK" dump "$tmp/ngc.culeak" >"$tmp/ngc.dump"
! grep -q '"kind":"block"' "$tmp/ngc.dump" || fail "block events from a stripped 2.11.0a0"

# trace entries that do not read as expected (their sizes, or their addresses, read at
# the wrong place): off, with the reason
for skew in size addr; do
    FAKE_C10_SKEWED_TRACE=$skew "$CULEAK" record -o "$tmp/skew.culeak" -- "$PY" "$src" 3 >"$tmp/skew.out" 2>"$tmp/skew.err" ||
        { cat "$tmp/skew.err"; fail "the job failed with a misread trace ($skew)"; }
    grep -q "culeak: tensor tracking off: this torch's trace entries do not read as expected" "$tmp/skew.err" ||
        { cat "$tmp/skew.err"; fail "a misread trace entry ($skew) was not caught"; }
    "$CULEAK" dump "$tmp/skew.culeak" >"$tmp/skew.dump"
    ! grep -q '"kind":"block"' "$tmp/skew.dump" || fail "block events from a misread trace ($skew)"
done
# expandable segments: the first mapping the shim sees is one page of a SEGMENT_MAP that
# covers them all; and another device's segment traced first (another thread's) is not
# this one's: tracking stays on in both
for mode in FAKE_C10_EXPANDABLE FAKE_C10_OTHER_DEVICE_FIRST; do
    env "$mode=1" "$CULEAK" record -o "$tmp/$mode.culeak" -- "$PY" "$src" 3 >"$tmp/$mode.out" 2>"$tmp/$mode.err" ||
        { cat "$tmp/$mode.err"; fail "the job failed with $mode"; }
    ! grep -q 'tensor tracking off' "$tmp/$mode.err" || { cat "$tmp/$mode.err"; fail "tracking off with $mode"; }
    "$CULEAK" dump "$tmp/$mode.culeak" >"$tmp/$mode.dump"
    [ "$(grep -c '"api":"torch.alloc","kind":"block"' "$tmp/$mode.dump")" = 7 ] || fail "not 7 blocks with $mode"
done
grep -q '"api":"cuMemMap","kind":"vmm-mapped","size":2097152' "$tmp/FAKE_C10_EXPANDABLE.dump" ||
    fail "the expandable segment was not mapped page by page"
# blocks of another device than the current context's (the pool's entries say device 1,
# the context is device 0's): each block is recorded on the device its entry names
FAKE_C10_BLOCK_DEVICE=1 "$CULEAK" record -o "$tmp/dev1.culeak" -- "$PY" "$src" 3 >"$tmp/dev1.out" 2>"$tmp/dev1.err" ||
    { cat "$tmp/dev1.err"; fail "the job failed with its blocks on device 1"; }
"$CULEAK" dump "$tmp/dev1.culeak" >"$tmp/dev1.dump"
[ "$(grep '"api":"torch.alloc","kind":"block"' "$tmp/dev1.dump" | grep -c '"device":1,')" = 7 ] ||
    fail "not 7 blocks on device 1: $(grep -m2 '"kind":"block"' "$tmp/dev1.dump")"
grep '"api":"cudaMalloc"' "$tmp/dev1.dump" | grep -q '"device":0,' || fail "the segment is not device 0's"

# CuPy's pool through culeak's sitecustomize (nothing imported by the job), which then
# runs the sitecustomize it hides
mkdir -p "$tmp/site"
echo 'print("the hidden sitecustomize ran")' >"$tmp/site/sitecustomize.py"
PYTHONPATH=$tmp/site "$CULEAK" record -o "$tmp/cupy.culeak" -- "$PY" tests/e2e/python/cupy_pool.py >"$tmp/cupy.out" 2>&1 ||
    { cat "$tmp/cupy.out"; fail "the CuPy job failed"; }
grep -q '^the hidden sitecustomize ran$' "$tmp/cupy.out" || { cat "$tmp/cupy.out"; fail "the hidden sitecustomize did not run"; }
grep -q '^cupy_pool: 8 arrays kept$' "$tmp/cupy.out" || fail "the CuPy job's output changed"
L_CUPY=$(grep -n '# SITE-KEEP$' tests/e2e/python/cupy_pool.py | cut -d: -f1)
"$CULEAK" report --diff 'iteration 2' 'iteration 6' "$tmp/cupy.culeak" >"$tmp/cupy.diff" 2>&1
grep -Eq "^  \+16384 bytes \(8192 -> 24576 bytes, 2 -> 6 blocks\) <module> at .*cupy_pool.py:$L_CUPY\$" "$tmp/cupy.diff" ||
    { cat "$tmp/cupy.diff"; fail "the CuPy diff does not name cupy_pool.py:$L_CUPY"; }
"$CULEAK" dump "$tmp/cupy.culeak" >"$tmp/cupy.dump"
grep -q '"api":"cupy.free","kind":"block","size":65536' "$tmp/cupy.dump" || fail "no cupy.free block events"
# the hook is in every thread: a worker thread's block is recorded with its line, and a
# block made in one thread and dropped in another is freed
"$CULEAK" record -o "$tmp/cupyt.culeak" -- "$PY" tests/e2e/python/cupy_threads.py >"$tmp/cupyt.out" 2>&1 ||
    { cat "$tmp/cupyt.out"; fail "the threaded CuPy job failed"; }
grep -q '^cupy_threads: done$' "$tmp/cupyt.out" || { cat "$tmp/cupyt.out"; fail "the threaded CuPy job's output changed"; }
"$CULEAK" dump "$tmp/cupyt.culeak" >"$tmp/cupyt.dump"
grep -q '"api":"cupy.alloc","kind":"block","size":12288' "$tmp/cupyt.dump" || fail "no block of the worker thread"
grep -q '"api":"cupy.free","kind":"block","size":12288' "$tmp/cupyt.dump" || fail "the worker's block was not freed"
grep -q '"api":"cupy.free","kind":"block","size":8192' "$tmp/cupyt.dump" || fail "a block dropped in another thread stays live"
"$PY" - "$tmp/cupyt.dump" "$(grep -n '# THREAD-ALLOC$' tests/e2e/python/cupy_threads.py | cut -d: -f1)" <<'PYEOF' ||
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
frames = {e["ip"]: e for e in ev if e["type"] == "pyframe"}
b = [e for e in ev if e.get("api") == "cupy.alloc" and e["size"] == 12288]
assert len(b) == 1
assert any(frames.get(ip, {}).get("file", "").endswith("cupy_threads.py") and frames[ip]["line"] == int(sys.argv[2])
           for ip in b[0]["stack"]), b
PYEOF
    fail "the worker thread's block does not name its line"
echo "blocks: ok"
