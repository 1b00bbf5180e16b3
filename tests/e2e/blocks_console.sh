#!/usr/bin/env bash
# The console on a caching allocator's blocks (fake libc10_cuda, no GPU): the user's line
# shows as a site with the library line it went through; a breakpoint on it pauses the
# job inside the block's allocation, in the allocating thread; continue runs to the end.
# The header counts the pool's segment, not its blocks on top, and says both in PyTorch's
# words; the segment is the pool's own row, never a second row at the user's line.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null || { echo "no $PY in PATH"; exit 1; }
src=$ROOT/tests/e2e/python/blocks_train.py
L_KEEP=$(grep -n '# SITE-KEEP$' "$src" | cut -d: -f1)
L_LIB=$(grep -n '# LIB-ALLOC$' "$ROOT/tests/e2e/python/site-packages/tensorlib/__init__.py" | cut -d: -f1)

start_sized 200 40 -- env FAKE_C10="$FAKE/torch/lib/libc10_cuda.so" "$PY" "$src" 400 0.02
wait_for "RUNNING"
wait_for "blocks_train.py:$L_KEEP, via tensorlib/__init__.py:$L_LIB"
type_line "break blocks_train.py:$L_KEEP"
wait_for "PAUSED in torch.alloc(4.00 KiB) - breakpoint 1"
screen | grep -q " PAUSED " || fail "header does not say PAUSED"
screen | grep -Eq " block +python +.*blocks_train.py:$L_KEEP" || fail "no row of blocks at the site"
! screen | grep -Eq " device +python +.*blocks_train.py:$L_KEEP" || fail "the pool's segment is a second row at the site"
screen | grep -Eq " 2.00 MiB +1 .* device +pytorch +pytorch caching allocator: reserved" ||
    fail "no row of the pool's segment"
# the breakpoint counts the site's blocks, not the segment they lie in
screen | grep -Eq "block, device 0; site [0-9.]+ KiB live" || fail "the breakpoint's site live is not its blocks"
# the header's live memory is the pool's segment: its blocks lie inside it
screen | grep -Eq "^ live 2.00 MiB \(allocated [0-9.]+ KiB reserved 2.00 MiB other 0 B\) peak 2.00 MiB" ||
    fail "the header adds blocks to device memory, or does not say allocated and reserved"
type_line "delete 1"
wait_for "deleted breakpoint 1"
type_line "continue"
wait_for "EXITED (status 0)"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
# culeak open on a recording of the same job: the blocks' row
env LD_LIBRARY_PATH="$FAKE" FAKE_C10="$FAKE/torch/lib/libc10_cuda.so" \
    ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 "$B/culeak" record -o "$T/blocks.culeak" -- \
    "$PY" "$src" 8 >/dev/null 2>&1 || fail "recording failed"
start_sized 200 40 open "$T/blocks.culeak"
wait_for "RECORDING"
wait_for "blocks_train.py:$L_KEEP, via tensorlib/__init__.py:$L_LIB"
screen | grep -Eq " block +python +.*blocks_train.py:$L_KEEP" || fail "no row of blocks in the recording"
! screen | grep -Eq " device +python +.*blocks_train.py:$L_KEEP" || fail "the segment is a second row in the recording"
# a diff of two marks: the blocks' row and the pool's; allocated and reserved at each mark
type_line "diff iteration 2 iteration 6"
wait_for "at iteration 6: allocated 24.0 KiB in 6 blocks, reserved 2.00 MiB in 1 segments, other 0 B"
screen | grep -q "iteration 2 -> iteration 6: allocated +16.0 KiB, reserved 0, other 0" ||
    fail "the diff does not say allocated and reserved"
screen | grep -Eq " \+16.0 KiB +\+4 .*blocks_train.py:$L_KEEP" || fail "no diff row of the blocks"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
echo "blocks console e2e ok"
