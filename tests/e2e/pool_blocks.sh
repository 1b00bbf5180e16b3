#!/usr/bin/env bash
# A framework's pool blocks reported through include/culeak.h by pool id
# (culeak_pool_block: CuPy's and PyTorch's rows of the frameworks table) and through the
# first name, culeak_report_block, which still means CuPy's pool; pool ids without blocks
# are refused with -1 and record nothing.
set -u
. "$(dirname "$0")/lib.sh"
cc -g -O2 -I"$ROOT/include" -o "$T/pool" "$C/pool_blocks.c" -ldl || fail "cannot build pool_blocks.c"
"$T/pool" || fail "without culeak the calls are not no-ops returning 0"
"$B/culeak" record -o "$T/r.culeak" -- "$T/pool" >/dev/null 2>"$T/err" || fail "record failed: $(cat "$T/err")"
"$B/culeak" dump "$T/r.culeak" >"$T/dump"
count() { grep -c "\"api\":\"$1\",\"kind\":\"block\"" "$T/dump"; }
[ "$(count cupy.alloc)" = 2 ] || fail "expected 2 cupy.alloc blocks (pool id and old name), saw $(count cupy.alloc)"
[ "$(count cupy.free)" = 1 ] || fail "expected 1 cupy.free block (the old name's), saw $(count cupy.free)"
[ "$(count torch.alloc)" = 1 ] && [ "$(count torch.free)" = 1 ] ||
    fail "the PyTorch pool id's block and its free are not torch.alloc/torch.free"
[ "$(grep -c '"kind":"block"' "$T/dump")" = 5 ] || fail "a refused pool id recorded a block"
"$B/culeak" report --at after "$T/r.culeak" >"$T/out" 2>&1
LINE=$(grep -n 'POOL-BLOCK-CUPY' "$C/pool_blocks.c" | cut -d: -f1)
grep -q "pool_blocks.c:$LINE" "$T/out" || fail "the CuPy block is not at its caller's line: $(cat "$T/out")"
echo "pool_blocks: ok"
