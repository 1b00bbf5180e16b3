#!/usr/bin/env bash
# The console on memory made for backward() (the stand-in torch, no GPU): live, the
# gradients made on the engine thread without Python frames are a row at the
# loss.backward() line, marked "(autograd backward)", via the node; and so in a recording.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null || { echo "no $PY in PATH"; exit 1; }
src=$ROOT/tests/e2e/python/backward_train.py
L_BWD=$(grep -n '# SITE-BACKWARD$' "$src" | cut -d: -f1)
ROW="backward_train.py:$L_BWD (autograd backward), via torch::autograd::generated::MmBackward0::apply"

start_sized 220 40 -- env FAKE_C10="$FAKE/torch/lib/libc10_cuda.so" "$PY" "$src" 8
wait_for "EXITED (status 0)"
wait_for "$ROW"
screen | grep -Eq " block +python +.*backward_train.py:$L_BWD \(autograd backward\)" || fail "no row of the gradients' blocks"
! screen | grep -Eq "record_trace|empty_generic|NativeCachingAllocator" || fail "an allocator frame names a row"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
env LD_LIBRARY_PATH="$FAKE" FAKE_C10="$FAKE/torch/lib/libc10_cuda.so" \
    ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 "$B/culeak" record -o "$T/bwd.culeak" -- \
    "$PY" "$src" 8 >/dev/null 2>&1 || fail "recording failed"
start_sized 220 40 open "$T/bwd.culeak"
wait_for "RECORDING"
wait_for "$ROW"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
echo "backward console e2e ok"
