#!/usr/bin/env bash
# Stacks are libunwind's, frame for frame: client_mixed_fp allocates from call paths
# mixing functions with and without frame pointers (one leaves rbp alone, one keeps a
# stack address that is no frame record in it), in two threads, and from a signal
# handler on an alternate stack, and from two call sites whose frames lie alike; with
# CULEAK_UNWIND_CHECK=1 the shim also takes every stack with libunwind alone and says at
# exit how many differed. Run at depth limits that cut the stacks short and that don't.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
CULEAK=$B/culeak

for depth in 3 6 48 256; do
    CULEAK_UNWIND_CHECK=1 "$CULEAK" record -o "$T/m.culeak" --depth "$depth" -- \
        "$BUILD/fakecuda/client_mixed_fp" 300 >"$T/out" 2>&1 || { cat "$T/out"; fail "recording failed"; }
    "$CULEAK" dump "$T/m.culeak" >"$T/dump"
    allocs=$(grep -c '"type":"alloc"' "$T/dump" || true)
    note=$(grep -o 'unwind check: [0-9]* stacks compared[^"]*' "$T/dump" || true)
    echo "unwind_check: depth $depth: $allocs allocations; $note"
    [ "$allocs" = 640 ] || fail "depth $depth: expected 640 allocations, got $allocs"
    [ "$note" = "unwind check: 640 stacks compared with libunwind's, 0 differed" ] ||
        fail "depth $depth: stacks differ from libunwind's: ${note:-no note}"
done
echo "unwind_check: ok"
