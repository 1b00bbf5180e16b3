# The set-up end-to-end scripts share, sourced (no #! line: tests/run.sh passes it over):
# ROOT (the repository), B (the build: $BUILD, default build), T (a scratch directory,
# removed at exit), C (the test programs' sources, tests/e2e/c) and fail MESSAGE.
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
B=$ROOT/$BUILD
C=$ROOT/tests/e2e/c
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
