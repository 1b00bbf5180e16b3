#!/usr/bin/env bash
# The wheel's files, unpacked, without installing it (tests/e2e/wheel.sh installs it and
# runs it): its tag names the newest GLIBC_ version any ELF file in it needs; every ELF
# file needs only the manylinux base set and libraries of culeak.libs, which it finds
# there by its RUNPATH alone; each vendored library is known by its hashed file name (its
# SONAME); the console script names a module of the wheel that has a main().
set -euo pipefail
. "$(dirname "$0")/../e2e/lib.sh"
cd "$ROOT"
base='^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libutil\.so\.1|libresolv\.so\.2|libanl\.so\.1|ld-linux-x86-64\.so\.2|libgcc_s\.so\.1|libstdc\+\+\.so\.6)$'

# made from the build as `make wheel` makes it, into a folder of this test's own
mkdir "$T/build"
cp "$BUILD"/culeak "$BUILD"/libculeak.so "$BUILD"/libculeak_unwind.so "$BUILD"/libculeak_torch.so "$T/build/"
tools/wheel.py "$T/build" "$T/dist" >"$T/wheel.out" 2>&1 || { cat "$T/wheel.out"; fail "tools/wheel.py failed"; }
whl=$(ls "$T"/dist/culeak-*-py3-none-manylinux_2_*_x86_64.whl) || fail "no wheel"
tag=$(basename "$whl" | sed 's/.*manylinux_2_\([0-9]*\)_x86_64.whl/\1/')
mkdir "$T/w"
python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$whl" "$T/w"
libs=$T/w/culeak.libs
[ -d "$libs" ] || fail "no culeak.libs"
find "$T/w" -type f -exec chmod u+x {} +

newest=0 elves=0
while IFS= read -r -d '' f; do
    [ "$(head -c 4 "$f")" = $'\x7fELF' ] || continue
    elves=$((elves + 1))
    name=${f#"$T/w/"}
    for need in $(readelf -dW "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
        [[ $need =~ $base ]] || [ -f "$libs/$need" ] || fail "$name needs $need, neither in culeak.libs nor in the base set"
    done
    while read -r lib _ path _; do
        [[ $lib =~ $base ]] && continue
        case $(realpath -m "$path") in
        "$libs"/*) ;;
        *) fail "$name: ldd finds $lib at $path, outside the wheel" ;;
        esac
    done < <(env -u LD_LIBRARY_PATH ldd "$f" | grep '=>')
    n=$(readelf -VW "$f" | sed -n 's/.*Name: GLIBC_2\.\([0-9]*\).*/\1/p' | sort -n | tail -n 1)
    [ "${n:-0}" -le "$newest" ] || newest=$n
done < <(find "$T/w" -type f -print0)
[ "$elves" -ge 14 ] || fail "only $elves ELF files in the wheel"
[ "$newest" = "$tag" ] || fail "the wheel is tagged manylinux_2_$tag, its files need GLIBC_2.$newest"
for f in "$libs"/*; do
    soname=$(readelf -dW "$f" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [ "$soname" = "$(basename "$f")" ] || fail "culeak.libs/$(basename "$f") keeps the SONAME ${soname:-(none)}"
done
script=$(sed -n 's/^culeak = \(.*\)$/\1/p' "$T"/w/culeak-*.dist-info/entry_points.txt)
module=${script%%:*} func=${script#*:}
(cd "$T/w" && python3 -c "import importlib, sys; m = importlib.import_module(sys.argv[1]); getattr(m, sys.argv[2])" \
    "$module" "$func") || fail "the console script $script is no function of the wheel"
echo "wheel_files: ok"
