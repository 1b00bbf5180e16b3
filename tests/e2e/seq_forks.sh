# Set-up of the tests of many processes, sourced (no #! line: tests/run.sh passes it
# over): ROOT, B (the build), T (a scratch directory, removed at exit), fail, the fake
# driver on LD_LIBRARY_PATH with small rings, and $T/seq_forks built from
# tests/e2e/c/seq_forks.c (N children one after another, each leaking SIZE bytes).
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/$BUILD
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
[ -x "$B/fakecuda/client_static" ] || { echo "fake driver not built"; exit 1; }
export LD_LIBRARY_PATH=$B/fakecuda CULEAK_RING_SIZE=4096 # a small ring keeps each start cheap
cc -O2 -o "$T/seq_forks" "$ROOT/tests/e2e/c/seq_forks.c" -ldl || fail "cannot build the job"
