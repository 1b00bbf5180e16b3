#!/usr/bin/env bash
# `make run`: opens the culeak console on the loop-leak demo. With an NVIDIA GPU and nvcc
# it runs demo/loop_leak.cu; otherwise the same scenario (demo/sim/loop_leak_sim.c) on
# culeak's simulated driver.
#
#   demo/run.sh [--sim] [COMMAND [ARGS]]
#
# --sim uses the simulated driver even on a GPU machine. COMMAND ARGS run the demo under
# `culeak COMMAND ARGS --` instead of the console, e.g. `demo/run.sh record -o run.culeak`.
# Environment: BUILD (build directory, default build), CUDA_HOME, NVCC, DEMO_DELAY_MS
# (pause after each iteration: 3000 in the console, so that its 20 iterations last about a
# minute, time enough to try a breakpoint; 300 under a COMMAND).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
if [ $# -eq 0 ] || { [ $# -eq 1 ] && [ "$1" = --sim ]; }; then
    DELAY_MS=${DEMO_DELAY_MS:-3000}
else
    DELAY_MS=${DEMO_DELAY_MS:-300}
fi

sim=0
if [ "${1:-}" = --sim ]; then
    sim=1
    shift
fi

have_gpu() {
    [ -e /dev/nvidia0 ] && return 0
    command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1
}

# Under `make -jN run` the parent's job slots are not passed down to this script: build
# serially, keeping the rest of MAKEFLAGS (-s, variables such as SAN=1).
if [ -n "${MAKEFLAGS:-}" ]; then
    MAKEFLAGS=$(sed -E 's/(^| )-j[0-9]*( |$)/\1\2/; s/ ?--jobserver-(auth|fds)=[^ ]*//' <<<"$MAKEFLAGS")
fi

tools=("$BUILD/culeak" "$BUILD/libculeak.so")
if [ $sim = 0 ] && ! have_gpu; then
    echo "no NVIDIA GPU found: running the loop-leak scenario on culeak's simulated driver" >&2
    sim=1
elif [ $sim = 0 ] && ! command -v "$NVCC" >/dev/null 2>&1; then
    echo "NVIDIA GPU found but no nvcc ($NVCC): running the loop-leak scenario on culeak's simulated driver" >&2
    sim=1
fi

if [ $sim = 1 ]; then
    make -s BUILD="$BUILD" CUDA_HOME="$CUDA_HOME" "${tools[@]}" fakecuda demo-sim
    build=$(cd "$BUILD" && pwd)
    export LD_LIBRARY_PATH="$build/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    program=("$build/demo/loop_leak_sim" --delay-ms "$DELAY_MS")
else
    make -s BUILD="$BUILD" CUDA_HOME="$CUDA_HOME" NVCC="$NVCC" "${tools[@]}" "$BUILD/demo/loop_leak"
    build=$(cd "$BUILD" && pwd)
    program=("$build/demo/loop_leak" --delay-ms "$DELAY_MS")
fi

# Leave the lines above readable for a moment before the console takes the screen.
if [ $# -eq 0 ] && [ -t 2 ]; then
    echo "the demo: 20 iterations, one every $((DELAY_MS / 1000)).$((DELAY_MS % 1000 / 100)) s; try help, break, snapshot, diff; quit ends it" >&2
    sleep 1
fi
if [ $# -gt 0 ]; then
    exec "$build/culeak" "$@" -- "${program[@]}"
fi
# The console exits with the job's status: quit + y or kill (SIGTERM, SIGKILL after 3 s)
# is how the demo is ended before its last iteration, no failure of `make run`.
rc=0
"$build/culeak" -- "${program[@]}" || rc=$?
case $rc in
143 | 137) exit 0 ;;
*) exit "$rc" ;;
esac
