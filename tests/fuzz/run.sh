#!/usr/bin/env bash
# Builds the fuzz targets (the decoder and model; a connection read by the console) and runs
# each briefly (FUZZ_SECONDS, default 30) from the seed corpus. Fails on any crash, leak, timeout or memory blow-up. Needs clang.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
seconds=${FUZZ_SECONDS:-30}
if ! command -v "${FUZZ_CC:-clang}" >/dev/null; then
    echo "tests/fuzz/run.sh: clang not found (apt-get install clang)" >&2
    exit 1
fi
make -s BUILD="$BUILD" fuzz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# -rss_limit_mb and -malloc_limit_mb turn unbounded growth into a failure; -max_len lets an
# input hold thousands of records (a seed has 3,000 MODULES), where work per record shows
mkdir -p "$BUILD/fuzz/artifacts"
for target in fuzz_model fuzz_console; do
    rm -rf "$work/corpus"
    mkdir "$work/corpus"
    cp tests/fuzz/corpus/* "$work/corpus"/
    (cd "$work" && "$OLDPWD/$BUILD/fuzz/$target" -artifact_prefix="$OLDPWD/$BUILD/fuzz/artifacts/$target-" \
        -max_total_time="$seconds" -max_len=131072 -timeout=10 -rss_limit_mb=1024 -malloc_limit_mb=512 \
        -print_final_stats=1 "$work/corpus" >"$work/log" 2>&1) ||
        { grep -B2 -A30 -m1 "ERROR\|runtime error" "$work/log" || tail -n 40 "$work/log"; exit 1; }
    tail -n 6 "$work/log"
    echo "fuzz: $target: no crash in ${seconds} s"
done
