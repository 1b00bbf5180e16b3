#!/usr/bin/env bash
# Blocks a program's own pool reports with include/culeak.h (culeak_alloc) are at the
# line that called it, not at the header's own inline functions, built at -O0 (the header's
# functions are frames) and -O2 (inlined frames) alike.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CULEAK=$PWD/$BUILD/culeak
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "user_pool_site: $*" >&2; exit 1; }
src=tests/e2e/c/user_pool.c
take=$(grep -n 'USER-POOL-TAKE' "$src" | cut -d: -f1)
for opt in -O0 -O2; do
    cc -g "$opt" -Iinclude -o "$tmp/pool" "$src" || fail "cannot build $src ($opt)"
    "$CULEAK" record -o "$tmp/r.culeak" -- "$tmp/pool" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "record failed ($opt)"; }
    "$CULEAK" report --at after "$tmp/r.culeak" >"$tmp/out" 2>&1
    grep -Eq "^LIVE .* in 4 allocations \(user\) from take at .*user_pool.c:$take\$" "$tmp/out" ||
        { cat "$tmp/out"; fail "the blocks are not at the caller's line user_pool.c:$take ($opt)"; }
    ! grep -q "from culeak_alloc" "$tmp/out" || { cat "$tmp/out"; fail "a site is the header's culeak_alloc ($opt)"; }
done
echo "user_pool_site: ok"
