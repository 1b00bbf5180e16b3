# Sourced by the end-to-end scripts that record jobs on the fake driver (no #! line:
# tests/run.sh passes it over), after `set -euo pipefail`. Sources lib.sh (ROOT, BUILD, B,
# T, fail, at_exit), sets the working directory to the repository, CULEAK, FAKE, PY and tmp
# (lib.sh's T); preloads ASan's runtime where the shim was built with it; puts the fake
# driver on LD_LIBRARY_PATH (FAKE_LIBCUDA). Then `standin_torch` gives the jobs the
# stand-in torch's caching allocator (FAKE_C10) and needs $PY.
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
CULEAK=$B/culeak
FAKE=$B/fakecuda
PY=${PYTHON:-python3}
tmp=$T
preload_asan
export LD_LIBRARY_PATH=$FAKE FAKE_LIBCUDA=$FAKE/libcuda.so.1
standin_torch() {
    command -v "$PY" >/dev/null || fail "no $PY in PATH"
    export FAKE_C10=$FAKE/torch/lib/libc10_cuda.so
}
