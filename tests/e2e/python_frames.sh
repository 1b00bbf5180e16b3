#!/usr/bin/env bash
# Python frames and NVTX marks, without a GPU: python3 (from PATH) allocates through the
# fake driver by ctypes from the main thread, two threads and a forked child; the stacks
# must show the Python frames (file, line, function) among the native ones, and the call
# site must be the .py line. Then a C program's nvtx3 ranges and marks become marks.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
CULEAK=$B/culeak
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null || fail "no $PY in PATH"
echo "python_frames: $("$PY" --version 2>&1)"

src=tests/e2e/python/ctypes_alloc.py
line_of() { grep -n "# $1\$" "$src" | cut -d: -f1; }
L_ALLOC=$(line_of SITE-ALLOC) L_STEP=$(line_of SITE-STEP) L_THREAD=$(line_of SITE-THREAD)
L_MAIN=$(line_of SITE-MAIN) L_CHILD=$(line_of SITE-CHILD)

# A sanitizer build of the shim (make SAN=1) in an uninstrumented python3: the ASan
# runtime is preloaded too (CPython's own allocations at exit are not ours to report).
preload_asan
export FAKE_LIBCUDA=$ROOT/$BUILD/fakecuda/libcuda.so.1 CULEAK_PYTHON_DIR=$ROOT/python
# CULEAK_UNWIND_CHECK=1: the shim also takes each native stack with libunwind alone and
# says at exit how many differed from the one it recorded.
CULEAK_UNWIND_CHECK=1 "$CULEAK" record -o "$T/py.%p.culeak" -- "$PY" "$src" >"$T/out" 2>&1 ||
    { cat "$T/out"; fail "recording failed"; }
files=("$T"/py.*.culeak)
[ ${#files[@]} = 2 ] || fail "expected 2 recordings (parent, forked child), got ${#files[@]}"
: >"$T/stacks"
for f in "${files[@]}"; do
    "$CULEAK" dump "$f" >"$T/dump"
    grep -Eq '"unwind check: [1-9][0-9]* stacks compared with libunwind.s, 0 differed"' "$T/dump" ||
        fail "$f: native stacks differ from libunwind's: $(grep -o 'unwind check[^"]*' "$T/dump" || echo no note)"
    "$PY" tests/e2e/python/stacks.py "$T/dump" >>"$T/stacks"
done
cat "$T/stacks"
! grep '^note' "$T/stacks" | grep -vq '^note unwind check' || fail "the shim turned Python frames off"

# "size" -> its stack; Python frames innermost first, natives as n
stack() { awk -v s="$1" '$1 == s { print $3; exit }' "$T/stacks"; }
frames() { stack "$1" | tr '|' '\n' | grep -v '^n$' | paste -sd' '; }
step_fn='(Trainer\.)?step' # 3.11+ has qualified names
for size in 4096 8192 12288; do
    frames "$size" | grep -Eq "^ctypes_alloc.py:$L_ALLOC:device_alloc ctypes_alloc.py:$L_STEP:$step_fn (ctypes_alloc.py:$L_MAIN:<listcomp> )?ctypes_alloc.py:$L_MAIN:<module>\$" ||
        fail "main thread, $size bytes: python frames are '$(frames "$size")'"
    # natives stay inside (driver, ctypes) and outside (the interpreter's main)
    stack "$size" | grep -Eq '^n(\|n)*\|ctypes_alloc' || fail "no native frames inside the Python frames"
    stack "$size" | grep -Eq '<module>(\|n)+$' || fail "no native frames outside the Python frames"
done
for size in 1000 1001; do
    frames "$size" | grep -Eq "^ctypes_alloc.py:$L_ALLOC:device_alloc ctypes_alloc.py:$L_THREAD:worker threading.py:[0-9]+:(Thread\.)?run " ||
        fail "thread, $size bytes: python frames are '$(frames "$size")'"
done
tids=$(awk '$1 == 1000 || $1 == 1001 || $1 == 4096 { print $2 }' "$T/stacks" | sort -u | wc -l)
[ "$tids" = 3 ] || fail "expected allocations from 3 threads, saw $tids"
frames 777 | grep -Eq "^ctypes_alloc.py:$L_ALLOC:device_alloc ctypes_alloc.py:$L_CHILD:<module>\$" ||
    fail "forked child: python frames are '$(frames 777)'"
grep -q '^mark after main 0$' "$T/stacks" || fail "no mark from ctypes culeak_mark_label"
grep -q '^mark before fork 0$' "$T/stacks" || fail "no mark from culeak.mark"

# The call site is the Python line, and the report's stack starts there; the parent and
# the forked child are reported apart, the summary line counts the site once.
"$CULEAK" check -- "$PY" "$src" >/dev/null 2>"$T/check" && rc=0 || rc=$?
[ "$rc" = 1 ] || { cat "$T/check"; fail "culeak check exited $rc, expected 1"; }
grep -q "^LEAKED 25.9 KiB (26577 bytes) in 5 allocations (device) from device_alloc at $ROOT/$src:$L_ALLOC\$" "$T/check" ||
    { cat "$T/check"; fail "check: no leak site at $src:$L_ALLOC in the parent"; }
grep -q "^LEAKED 777 bytes in 1 allocation (device) from device_alloc at $ROOT/$src:$L_ALLOC\$" "$T/check" ||
    { cat "$T/check"; fail "check: no leak site at $src:$L_ALLOC in the forked child"; }
grep -q "^LEAK SUMMARY: 27354 bytes leaked in 6 allocations from 1 call sites\$" "$T/check" ||
    { cat "$T/check"; fail "check: summary"; }
grep -Eq "^    #[0-9]+ +(Trainer\.)?step at $ROOT/$src:$L_STEP\$" "$T/check" || { cat "$T/check"; fail "check: stack"; }
# the interpreter's frames below the Python ones are one line, as in the console
grep -Eq "^    \.\.\. [0-9]+ frames in .*python3.* \(looked through\)\$" "$T/check" ||
    { cat "$T/check"; fail "check: interpreter frames not folded"; }
# a suppression naming Python lines: the main thread's allocations (through step) go,
# the worker threads' and the child's stay
cat >"$T/py.supp" <<S
{
   the trainer's buffers
   culeak:Leak
   src:ctypes_alloc.py:$L_ALLOC
   fun:*step
   ...
   fun:<module>
}
S
"$CULEAK" check --suppressions "$T/py.supp" -- "$PY" "$src" >/dev/null 2>"$T/check_supp" && rc=0 || rc=$?
[ "$rc" = 1 ] || { cat "$T/check_supp"; fail "check --suppressions exited $rc, expected 1"; }
grep -q "^LEAK SUMMARY: 2778 bytes leaked in 3 allocations from 1 call sites\$" "$T/check_supp" ||
    { cat "$T/check_supp"; fail "check --suppressions: summary"; }
grep -q "^suppressed: 24576 bytes in 3 allocations from 1 sites\$" "$T/check_supp" ||
    { cat "$T/check_supp"; fail "check --suppressions: suppressed count"; }

# CULEAK_PYTHON=0: native frames only.
CULEAK_PYTHON=0 "$CULEAK" record -o "$T/off.%p.culeak" -- "$PY" "$src" >/dev/null 2>&1 || fail "CULEAK_PYTHON=0 run failed"
"$CULEAK" dump "$T"/off.*.culeak >"$T/off.jsonl" || fail "CULEAK_PYTHON=0: unreadable recordings"
grep -q '"type":"alloc"' "$T/off.jsonl" || fail "CULEAK_PYTHON=0: nothing recorded"
! grep -q '"type":"pyframe"' "$T/off.jsonl" || fail "CULEAK_PYTHON=0 still sent Python frames"

# NVTX: the shim as injection library of a program using NVIDIA's header-only nvtx3
# (from the CUDA toolkit; without one, this part is skipped).
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [ -f "$CUDA_HOME/include/nvtx3/nvToolsExt.h" ]; then
    cc -std=c11 -I"$CUDA_HOME/include" -o "$T/nvtx_marks" tests/e2e/python/nvtx_marks.c -ldl ||
        fail "cannot build the NVTX program (nvtx3 headers in $CUDA_HOME/include?)"
    "$CULEAK" record -o "$T/nvtx.culeak" -- "$T/nvtx_marks" || fail "nvtx program failed (its ranges were not tracked)"
    "$CULEAK" dump "$T/nvtx.culeak" | grep '"type":"mark"' | sed 's/.*"label":\(.*\),"flags":\([0-9]*\)}/\1 \2/' >"$T/marks"
    cat >"$T/want" <<'W'
"iteration 0" 1
"inside" 0
"" 2
"iteration 1" 1
"inside" 0
"" 2
"iteration 2" 1
"inside" 0
"" 2
"attributes" 1
"" 2
"wide é" 1
"" 2
W
    diff "$T/want" "$T/marks" || fail "NVTX marks differ (want / got above)"
else
    echo "python_frames: NVTX part skipped: no nvtx3 headers in $CUDA_HOME/include"
fi
echo "python_frames: ok"
