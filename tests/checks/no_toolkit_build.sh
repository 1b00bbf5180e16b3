#!/usr/bin/env bash
# The build needs no CUDA toolkit: a copy of the source tree (what git tracks, plus new
# files it does not ignore) builds the shim, the fake driver and runtime with their
# clients, the simulated demo, the shim bench and every test that uses CUDA declarations,
# with CUDA_HOME pointing nowhere and, where a mount namespace can be had, with the
# toolkit's directory (/usr/local/cuda and where it links to) hidden under an empty tmpfs.
# Where no namespace can be had, no compiler flag and no dependency file may name it.
set -euo pipefail
. "$(dirname "$0")/../e2e/lib.sh"
cd "$ROOT"

src=$T/src
mkdir "$src"
if git rev-parse --show-toplevel >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard | xargs -0 -I{} sh -c 'test -e "{}" && printf "%s\0" "{}"' |
        tar -cf - --null -T - | tar -xf - -C "$src"
else
    tar -cf - --exclude='./build*' . | tar -xf - -C "$src"
fi

# What includes CUDA declarations, and the unit tests among them (compiled, not linked).
targets="build/libculeak.so fakecuda demo-sim build/bench/shim_bench"
for t in $(grep -l 'culeak_cuda\.h\|culeak_cudart\.h\|culeak_nvtx\.h' tests/unit/*.c tests/shim/*.c || true); do
    targets+=" build/obj/${t%.c}.o"
done
build="cd '$src' && env -u CPATH -u C_INCLUDE_PATH -u LIBRARY_PATH CUDA_HOME=/nonexistent \
    nice make -j2 BUILD=build $targets"

hidden=""
if [ -e /usr/local/cuda ]; then
    toolkit=$(readlink -f /usr/local/cuda)
    for ns in "unshare -m --propagation private" "unshare -rm --propagation private"; do
        if $ns sh -c "mount -t tmpfs none '$toolkit'" 2>/dev/null; then
            hidden=$toolkit
            $ns sh -c "mount -t tmpfs none '$toolkit' && $build" >"$T/log" 2>&1 || { tail -n 30 "$T/log"; fail "build failed with $toolkit hidden"; }
            break
        fi
    done
fi
if [ -z "$hidden" ]; then
    sh -c "$build" >"$T/log" 2>&1 || { tail -n 30 "$T/log"; fail "build failed with CUDA_HOME=/nonexistent"; }
fi

! grep -n 'cuda/include\|/usr/local/cuda\|/nonexistent' "$T/log" || fail "a command line names a CUDA toolkit (above)"
deps=$(find "$src/build" -name '*.d')
[ -n "$deps" ] || fail "no dependency files"
! grep -l 'cuda/include\|/usr/local/cuda' $deps || fail "the files above read a CUDA toolkit's headers"
for f in build/libculeak.so build/fakecuda/libcuda.so.1 build/fakecuda/libcudart.so.13 build/fakecuda/client_static \
    build/demo/loop_leak_sim build/bench/shim_bench; do
    [ -e "$src/$f" ] || fail "$f was not built"
done
if [ -n "$hidden" ]; then how="$hidden hidden"; else how="CUDA_HOME=/nonexistent (no mount namespace)"; fi
echo "no_toolkit_build: built $(wc -w <<<"$targets") targets with $how"
