# Set-up of the tests of many processes, sourced (no #! line: tests/run.sh passes it
# over): lib.sh's names, the fake driver on LD_LIBRARY_PATH with small rings, and
# $T/seq_forks built from tests/e2e/c/seq_forks.c (N children one after another, each
# leaking SIZE bytes).
. "$(dirname "$0")/lib.sh"
[ -x "$B/fakecuda/client_static" ] || { echo "fake driver not built"; exit 1; }
export LD_LIBRARY_PATH=$B/fakecuda CULEAK_RING_SIZE=4096 # a small ring keeps each start cheap
cc -O2 -o "$T/seq_forks" "$ROOT/tests/e2e/c/seq_forks.c" -ldl || fail "cannot build the job"
