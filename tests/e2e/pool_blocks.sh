#!/usr/bin/env bash
# A framework's pool blocks reported through include/culeak.h by pool id
# (culeak_pool_block: CuPy's and PyTorch's rows of the frameworks table) and through the
# first name, culeak_report_block, which still means CuPy's pool; pool ids without blocks
# are refused with -1 and record nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CULEAK=$PWD/$BUILD/culeak
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "pool_blocks: $*" >&2; exit 1; }
cc -g -O2 -Iinclude -o "$tmp/pool" tests/e2e/c/pool_blocks.c -ldl || fail "cannot build pool_blocks.c"
"$tmp/pool" || fail "without culeak the calls are not no-ops returning 0"
"$CULEAK" record -o "$tmp/r.culeak" -- "$tmp/pool" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "record failed"; }
"$CULEAK" dump "$tmp/r.culeak" >"$tmp/dump"
count() { grep -c "\"api\":\"$1\",\"kind\":\"block\"" "$tmp/dump" || true; }
[ "$(count cupy.alloc)" = 2 ] || { cat "$tmp/dump"; fail "expected 2 cupy.alloc blocks (pool id and old name), saw $(count cupy.alloc)"; }
[ "$(count cupy.free)" = 1 ] || fail "expected 1 cupy.free block (the old name's), saw $(count cupy.free)"
[ "$(count torch.alloc)" = 1 ] && [ "$(count torch.free)" = 1 ] || fail "the PyTorch pool id's block and its free are not torch.alloc/torch.free"
[ "$(grep -c '"kind":"block"' "$tmp/dump")" = 5 ] || fail "a refused pool id recorded a block"
"$CULEAK" report --at after "$tmp/r.culeak" >"$tmp/out" 2>&1 || true
grep -q "pool_blocks.c:$(grep -n 'POOL-BLOCK-CUPY' tests/e2e/c/pool_blocks.c | cut -d: -f1)" "$tmp/out" ||
    { cat "$tmp/out"; fail "the CuPy block is not at its caller's line"; }
echo "pool_blocks: ok"
