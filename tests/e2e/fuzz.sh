#!/usr/bin/env bash
# The decoder and model under libFuzzer, briefly, from the seed corpus (tests/fuzz/run.sh;
# FUZZ_SECONDS, default 30): no crash, leak, timeout or memory blow-up. It keeps one core
# busy and waits for nothing: tests/run.sh runs it alongside the other tests.
# run.sh: alongside
set -euo pipefail
cd "$(dirname "$0")/../.."
exec tests/fuzz/run.sh
