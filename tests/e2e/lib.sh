# The set-up the end-to-end scripts and the checks (tests/checks) share, sourced after
# `set -e...` (no #! line: tests/run.sh passes it over):
#     ROOT            the repository
#     BUILD, B        the build ($BUILD, default build) and its path ($ROOT/$BUILD)
#     C               the test programs' sources, tests/e2e/c
#     T               a scratch directory, removed at exit
#     fail MESSAGE    prints FAIL: MESSAGE, then what the script's show_failure prints (a
#                     function the script may define: the files that tell why), exits 1
#     at_exit CMD     runs the command line CMD at exit, before T is removed (the last
#                     added first): a job to kill, a process to let go on
#     preload_asan    where the shim was built with ASan, preloads ASan's runtime (the
#                     jobs are built without it) and keeps it quiet about their leaks
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case $BUILD in
/*) B=$BUILD ;;
*) B=$ROOT/$BUILD ;;
esac
C=$ROOT/tests/e2e/c
T=$(mktemp -d)
lib_exits=()
at_exit() { lib_exits=("$*" "${lib_exits[@]}"); }
# each command may fail (a job already gone) without changing the script's exit status
lib_exit() {
    local cmd
    for cmd in "${lib_exits[@]}"; do eval "$cmd" || true; done
    rm -rf "$T"
}
trap lib_exit EXIT
fail() {
    echo "FAIL: $*"
    if declare -F show_failure >/dev/null; then show_failure || true; fi
    exit 1
}
preload_asan() {
    local asan
    asan=$(ldd "$B/libculeak.so" | awk '/libasan/ { print $3 }')
    [ -z "$asan" ] ||
        export LD_PRELOAD=$asan ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}
}
