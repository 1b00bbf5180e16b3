#!/usr/bin/env bash
# A leak whose call site is in a library dlopen'ed after the stream started: the site is
# named by the library's function and line, as its stack's frame is, not a bare address.
# (The event at the new stack comes before the MODULES record that names the library.)
set -u
. "$(dirname "$0")/lib.sh"
cc -g -O0 -fPIC -shared -I"$ROOT/src" -o "$T/libdlsite.so" "$C/dl_site_lib.c" -L"$B/fakecuda" -lcudart ||
    fail "cannot build the library"
cc -g -O0 -I"$ROOT/src" -o "$T/job" "$C/dl_site_main.c" -L"$B/fakecuda" -lcudart -ldl || fail "cannot build the job"
export LD_LIBRARY_PATH=$B/fakecuda
LINE=$(grep -n "LEAK-DL" "$C/dl_site_lib.c" | cut -d: -f1)
"$B/culeak" check -- "$T/job" "$T/libdlsite.so" >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" -eq 1 ] || fail "check: status $rc, want 1 (a leak): $(cat "$T/err")"
grep -q "^LEAKED 2.0 MiB .* from dl_site_leak at .*dl_site_lib.c:$LINE\$" "$T/err" ||
    fail "the dlopen'ed library's site is not named: $(cat "$T/err")"
# grouped by module, the library is the leak's module
"$B/culeak" check --group module -- "$T/job" "$T/libdlsite.so" >"$T/out" 2>"$T/err"
grep -q "^LEAKED 2.0 MiB .*libdlsite.so" "$T/err" || fail "--group module: the library is not the module: $(cat "$T/err")"
echo "dlopen_site: ok"
