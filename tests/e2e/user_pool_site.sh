#!/usr/bin/env bash
# Blocks a program's own pool reports with include/culeak.h (culeak_alloc) are at the
# line that called it, not at the header's own inline functions, built at -O0 (the header's
# functions are frames) and -O2 (inlined frames) alike.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
CULEAK=$B/culeak
src=tests/e2e/c/user_pool.c
take=$(grep -n 'USER-POOL-TAKE' "$src" | cut -d: -f1)
for opt in -O0 -O2; do
    cc -g "$opt" -Iinclude -o "$T/pool" "$src" || fail "cannot build $src ($opt)"
    "$CULEAK" record -o "$T/r.culeak" -- "$T/pool" >/dev/null 2>"$T/err" || { cat "$T/err"; fail "record failed ($opt)"; }
    "$CULEAK" report --at after "$T/r.culeak" >"$T/out" 2>&1
    grep -Eq "^LIVE .* in 4 allocations \(user\) from take at .*user_pool.c:$take\$" "$T/out" ||
        { cat "$T/out"; fail "the blocks are not at the caller's line user_pool.c:$take ($opt)"; }
    ! grep -q "from culeak_alloc" "$T/out" || { cat "$T/out"; fail "a site is the header's culeak_alloc ($opt)"; }
done
echo "user_pool_site: ok"
