#!/usr/bin/env bash
# The shim's hook table (src/shim/hooks.h) and what libculeak.so exports agree: every
# entry point with a wrapper is exported (a name left out of src/shim/exports.map hides
# its wrapper from the program without a word), every name exports.map lists is defined,
# and no CUDA name is exported that the table does not route (dlsym and cuGetProcAddress
# would never hand it out).
set -euo pipefail
. "$(dirname "$0")/../e2e/lib.sh"
cd "$ROOT"
lib=$B/libculeak.so
[ -f "$lib" ] || fail "$lib is not built"
hooks=$(printf '#include "shim/hooks.h"\nCULEAK_DRIVER_HOOKS(ROW) CULEAK_RUNTIME_HOOKS(ROW)\n' |
    cc -E -P -D'ROW(fn)=HOOK:fn' -Isrc -x c - | grep -o 'HOOK:[A-Za-z0-9_]*' | cut -d: -f2 | sort -u)
[ "$(wc -l <<<"$hooks")" -gt 40 ] || fail "too few hooks read from src/shim/hooks.h: $hooks"
exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" || $2 == "W" || $2 == "i" { sub(/@.*/, "", $3); print $3 }' | sort -u)
mapped=$(sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);.*/\1/p' src/shim/exports.map | sort -u)
missing=$(comm -23 <(echo "$hooks") <(echo "$exported"))
[ -z "$missing" ] || fail "hooks.h has wrappers libculeak.so does not export (add them to src/shim/exports.map): $missing"
undefined=$(comm -23 <(echo "$mapped") <(echo "$exported"))
[ -z "$undefined" ] || fail "src/shim/exports.map lists names libculeak.so does not define: $undefined"
stray=$(comm -13 <(echo "$hooks") <(echo "$exported") | grep -E '^(cu|cuda)[A-Z]' || true)
[ -z "$stray" ] || fail "libculeak.so exports CUDA names hooks.h does not route: $stray"
echo "shim_exports: $(wc -l <<<"$hooks") hooks exported, $(wc -l <<<"$mapped") names of exports.map defined"
