#!/usr/bin/env bash
# culeak's default suppressions (share/culeak/default.supp): what the CUDA libraries
# allocate once, when a framework sets them up or makes their handles, and hold until
# exit is reported apart ("held by a library until exit"), counted, never LEAKED, and does
# not fail check; --no-default-suppressions shows it as leaks again; the handles a program
# creates itself through the same library, one a step, are still its leak; the user's own
# --suppressions keep working beside them. On the stand-ins of cuDNN, cuBLAS, NCCL, XLA's
# CUDA plugin and libtorch_cuda (tests/fakecuda/libs, client_libs).
set -euo pipefail
. "$(dirname "$0")/python/job_env.sh"

L_USER=$(grep -n 'SITE-USER-HANDLE' tests/fakecuda/client_libs.c | cut -d: -f1)
SUPP=$ROOT/share/culeak/default.supp

# held: XLA's cuDNN set-up 4096 + 256, PyTorch's cuBLAS handle 8192, NCCL's thread 1024 + 2048
HELD=15616 HELD_N=5
held_line="LIBRARY SUMMARY: $HELD bytes in $HELD_N allocations from 4 sites held by a library until exit (default suppressions, not counted as leaks)"

# a job that leaks nothing of its own: check passes, the libraries' memory counted apart
"$CULEAK" check -- "$FAKE/client_libs" clean >"$tmp/clean.out" 2>"$tmp/clean.err" ||
    { cat "$tmp/clean.err"; fail "check failed a job whose only live memory the libraries hold"; }
grep -q '^client_libs: done$' "$tmp/clean.out" || fail "the job's output changed"
grep -q '^LEAK SUMMARY: 0 bytes leaked in 0 allocations' "$tmp/clean.err" || { cat "$tmp/clean.err"; fail "no clean summary"; }
! grep -q '^LEAKED' "$tmp/clean.err" || { cat "$tmp/clean.err"; fail "the libraries' memory is LEAKED"; }
grep -qxF "$held_line" "$tmp/clean.err" || { cat "$tmp/clean.err"; fail "no LIBRARY SUMMARY of what the libraries hold"; }
for used in "xla-stream-executor-init' ($SUPP:[0-9]*): 4352 bytes in 2 allocations" \
    "pytorch-cublas-handle' ($SUPP:[0-9]*): 8192 bytes in 1 allocations" \
    "nccl-own-thread' ($SUPP:[0-9]*): 3072 bytes in 2 allocations"; do
    grep -q "^  used default suppression '$used\$" "$tmp/clean.err" || { cat "$tmp/clean.err"; fail "no used line $used"; }
done

# --no-default-suppressions: leaks again, and check fails
set +e
"$CULEAK" check --no-default-suppressions -- "$FAKE/client_libs" clean >/dev/null 2>"$tmp/nodef.err"
st=$?
set -e
[ $st = 1 ] || { cat "$tmp/nodef.err"; fail "check --no-default-suppressions exited $st, not 1"; }
grep -q "^LEAK SUMMARY: $HELD bytes leaked in $HELD_N allocations" "$tmp/nodef.err" || { cat "$tmp/nodef.err"; fail "not leaks without the defaults"; }
grep -q '^LEAKED .* from stream_executor::gpu::CudnnSupport::Init()' "$tmp/nodef.err" || fail "XLA's set-up not LEAKED without the defaults"
! grep -q 'LIBRARY SUMMARY' "$tmp/nodef.err" || fail "a LIBRARY SUMMARY without the defaults"

# cuBLAS handles the program creates itself, one a step: its leak, at its line
"$CULEAK" record -o "$tmp/run.culeak" -- "$FAKE/client_libs" >/dev/null 2>"$tmp/rec.err" || { cat "$tmp/rec.err"; fail "recording failed"; }
set +e
"$CULEAK" report --error-exitcode 7 "$tmp/run.culeak" >"$tmp/run.txt" 2>&1
st=$?
set -e
[ $st = 7 ] || { cat "$tmp/run.txt"; fail "report found no leak in the program's own handles ($st)"; }
grep -q "^LEAKED 24.0 KiB (24576 bytes) in 3 allocations (device) from main at .*client_libs.c:$L_USER\$" "$tmp/run.txt" ||
    { cat "$tmp/run.txt"; fail "the program's own cuBLAS handles are not LEAKED at client_libs.c:$L_USER"; }
grep -q '^LEAK SUMMARY: 24576 bytes leaked in 3 allocations from 1 call sites$' "$tmp/run.txt" || { cat "$tmp/run.txt"; fail "summary"; }
grep -qxF "$held_line" "$tmp/run.txt" || { cat "$tmp/run.txt"; fail "report: no LIBRARY SUMMARY"; }

# JSON: held_by_libraries apart from the user's suppressed; the leaks without the defaults
"$CULEAK" report --format json "$tmp/run.culeak" >"$tmp/run.json"
"$CULEAK" report --format json --no-default-suppressions "$tmp/run.culeak" >"$tmp/nodef.json"
python3 - "$tmp/run.json" "$tmp/nodef.json" "$HELD" <<'PYEOF' || fail "JSON reports"
import json, sys
r, n, held = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
s = r["summary"]
assert s["bytes"] == 24576 and s["allocations"] == 3, s
assert s["suppressed"] == {"bytes": 0, "allocations": 0, "sites": 0, "used": []}, s["suppressed"]
h = s["held_by_libraries"]
assert h["bytes"] == held and h["allocations"] == 5 and h["sites"] == 4, h
assert {u["name"] for u in h["used"]} == {"xla-stream-executor-init", "pytorch-cublas-handle", "nccl-own-thread"}, h
assert all(u["file"].endswith("/share/culeak/default.supp") for u in h["used"]), h
assert n["summary"]["bytes"] == 24576 + held and n["summary"]["held_by_libraries"]["bytes"] == 0, n["summary"]
PYEOF

# the user's own suppressions, beside the defaults: their leak suppressed, counted apart
cat >"$tmp/mine.supp" <<S
{
   my-handles
   culeak:Leak
   src:client_libs.c:$L_USER
}
S
"$CULEAK" report --suppressions "$tmp/mine.supp" "$tmp/run.culeak" >"$tmp/mine.txt" 2>&1
grep -q '^LEAK SUMMARY: 0 bytes leaked' "$tmp/mine.txt" || { cat "$tmp/mine.txt"; fail "the user's suppression did not apply"; }
grep -q '^suppressed: 24576 bytes in 3 allocations from 1 sites$' "$tmp/mine.txt" || { cat "$tmp/mine.txt"; fail "the user's suppressed count"; }
grep -q "^  used suppression 'my-handles' ($tmp/mine.supp:1): 24576 bytes in 3 allocations\$" "$tmp/mine.txt" ||
    { cat "$tmp/mine.txt"; fail "no used line of the user's block"; }
grep -qxF "$held_line" "$tmp/mine.txt" || { cat "$tmp/mine.txt"; fail "the defaults' count changed with the user's file"; }

# generated suppressions: a block for the program's own leak only
"$CULEAK" report --format suppressions "$tmp/run.culeak" >"$tmp/gen.supp"
[ "$(grep -c '^{' "$tmp/gen.supp")" = 1 ] || { cat "$tmp/gen.supp"; fail "suppressions generated for what the libraries hold"; }
grep -q '^   fun:main$' "$tmp/gen.supp" || { cat "$tmp/gen.supp"; fail "no block for the program's own leak"; }

# HTML: the leaks moment leaves the libraries' memory out, and says how much they hold
"$CULEAK" report --format html -o "$tmp/run.html" "$tmp/run.culeak"
grep -q "\"kind\":\"leaks\",\"t\":[0-9.]*,\"bytes\":24576,\"pool_bytes\":0,\"held_bytes\":$HELD," "$tmp/run.html" ||
    fail "the page's leaks moment does not keep the libraries' memory apart"
grep -q 'held by a library until exit' "$tmp/run.html" || fail "the page does not say what the libraries hold"
echo "default_suppressions: ok"
