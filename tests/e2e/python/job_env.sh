# Sourced by the end-to-end scripts that record jobs on the fake driver (no #! line:
# tests/run.sh passes it over), after `set -euo pipefail` and NAME=<the test's name>.
# Sets the working directory to the repository, ROOT, BUILD, CULEAK, FAKE, PY and tmp
# (removed at exit), and fail MESSAGE; preloads ASan's runtime where the shim was built
# with it; puts the fake driver on LD_LIBRARY_PATH (FAKE_LIBCUDA). Then `standin_torch`
# gives the jobs the stand-in torch's caching allocator (FAKE_C10) and needs $PY.
cd "$(dirname "$0")/../.."
ROOT=$PWD
BUILD=${BUILD:-build}
CULEAK=$ROOT/$BUILD/culeak
FAKE=$ROOT/$BUILD/fakecuda
PY=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "$NAME: $*" >&2; exit 1; }
asan=$(ldd "$BUILD/libculeak.so" | awk '/libasan/ { print $3 }')
if [ -n "$asan" ]; then
    export LD_PRELOAD=$asan ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}
fi
export LD_LIBRARY_PATH=$FAKE FAKE_LIBCUDA=$FAKE/libcuda.so.1
standin_torch() {
    command -v "$PY" >/dev/null || fail "no $PY in PATH"
    export FAKE_C10=$FAKE/torch/lib/libc10_cuda.so
}
