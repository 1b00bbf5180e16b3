#!/usr/bin/env bash
# make install / uninstall into a staging DESTDIR: the files land where documented, the
# installed culeak finds its installed shim without CULEAK_LIB, pkg-config describes the
# header, the installed default suppressions are read, a program using culeak.h builds and
# runs, and uninstall leaves no file behind.
set -euo pipefail
. "$(dirname "$0")/../e2e/lib.sh"
cd "$ROOT"
dest=$T/stage
prefix=/opt/culeak-test
root=$dest$prefix

make -s BUILD="$BUILD" DESTDIR="$dest" PREFIX="$prefix" install >/dev/null

# The files, and only them.
expected=(bin/culeak lib/culeak/libculeak.so lib/culeak/libculeak_unwind.so lib/culeak/libculeak_torch.so include/culeak.h lib/pkgconfig/culeak.pc
          share/culeak/python/culeak.py share/culeak/python/sitecustomize.py share/culeak/python/culeak_attach.py share/culeak/python/culeak_holders.py share/culeak/python/culeak_holders_ask.py
          share/culeak/default.supp)
for page in man/*.1 man/*.3 man/*.5; do
    [ -e "$page" ] || continue
    expected+=("share/man/man${page##*.}/$(basename "$page")")
done
for f in "${expected[@]}"; do
    [ -f "$root/$f" ] || fail "missing $prefix/$f"
done
[ -x "$root/bin/culeak" ] || fail "bin/culeak is not executable"
cmp -s include/culeak.h "$root/include/culeak.h" || fail "installed culeak.h differs"
got=$(cd "$root" && find . \( -type f -o -type l \) | sed 's|^\./||' | sort)
want=$(printf '%s\n' "${expected[@]}" | sort)
[ "$got" = "$want" ] || fail "installed files differ from the list:"$'\n'"$(diff <(echo "$want") <(echo "$got"))"

# The installed culeak preloads the installed shim, found from its own location.
# shellcheck disable=SC2016 # $LD_PRELOAD is the child's
out=$(env -u CULEAK_LIB "$root/bin/culeak" record -o "$T/rec.culeak" -- sh -c 'echo "$LD_PRELOAD"') ||
    fail "installed culeak record failed"
shim=$(realpath "$root/lib/culeak/libculeak.so")
case "$out" in
*"$shim"*) ;;
*) fail "child's LD_PRELOAD is '$out', expected the installed $shim" ;;
esac
# A job allocating through the fake driver is recorded by the installed shim; the installed
# culeak dumps and reports it.
env -u CULEAK_LIB LD_LIBRARY_PATH="$BUILD/fakecuda" "$root/bin/culeak" record -o "$T/leak.culeak" -- \
    "$BUILD/fakecuda/client_static" leak 2 4096 >/dev/null || fail "installed culeak record of a leaking client failed"
[ -s "$T/leak.culeak" ] || fail "installed culeak record wrote no recording"
"$root/bin/culeak" dump "$T/leak.culeak" >"$T/leak.jsonl" || fail "installed culeak cannot dump its recording"
[ "$(grep -c '"type":"alloc".*"size":4096,' "$T/leak.jsonl")" -eq 2 ] || fail "the dump lacks the 2 allocations"
"$root/bin/culeak" report "$T/leak.culeak" 2>&1 | grep -q "^LEAK SUMMARY: 8192 bytes leaked in 2 allocations" ||
    fail "installed culeak report does not find the leak"
# ... and reads its installed default suppressions: what a library holds until exit
env -u CULEAK_LIB LD_LIBRARY_PATH="$BUILD/fakecuda" "$root/bin/culeak" check -- "$BUILD/fakecuda/client_libs" clean \
    >/dev/null 2>"$T/libs.err" || { cat "$T/libs.err"; fail "installed culeak check fails a job whose libraries hold memory"; }
supp=$(realpath "$root/share/culeak/default.supp")
grep -q "^  used default suppression 'xla-stream-executor-init' ($supp:[0-9]*):" "$T/libs.err" ||
    { cat "$T/libs.err"; fail "installed culeak does not read $prefix/share/culeak/default.supp"; }

# pkg-config: the template is filled in, and a program using the header builds and runs.
export PKG_CONFIG_PATH=$root/lib/pkgconfig
cflags=$(pkg-config --cflags culeak | xargs)
libs=$(pkg-config --libs culeak | xargs)
[ "$cflags" = "-I$prefix/include" ] || fail "cflags: '$cflags', expected -I$prefix/include"
[ "$libs" = "-ldl" ] || fail "libs: '$libs', expected -ldl"
[ "$(pkg-config --modversion culeak)" = "$(cat VERSION)" ] || fail "culeak.pc's version is not the VERSION file's"
cat >"$T/use.c" <<'C'
#include <culeak.h>
#include <stdio.h>

int main(void)
{
    static char pool[64];
    culeak_mark("start");
    culeak_alloc(pool, sizeof pool);
    culeak_free(pool);
    printf("active=%d\n", culeak_active());
    return 0;
}
C
# The staged tree stands in for $prefix here.
cflags=$(pkg-config --define-variable=prefix="$root" --cflags culeak)
libs=$(pkg-config --define-variable=prefix="$root" --libs culeak)
# shellcheck disable=SC2086 # flags are words
cc -Wall -Wextra -Werror $cflags -o "$T/use" "$T/use.c" $libs || fail "cannot build against the installed header"
[ "$("$T/use")" = "active=0" ] || fail "header calls are not no-ops without the shim"

make -s BUILD="$BUILD" DESTDIR="$dest" PREFIX="$prefix" uninstall >/dev/null
left=$(find "$dest" \( -type f -o -type l \))
[ -z "$left" ] || fail "left after uninstall: $left"
[ ! -e "$root/lib/culeak" ] || fail "lib/culeak is still there"
[ ! -e "$root/share/culeak" ] || fail "share/culeak is still there"
echo "install: ok"
