#!/usr/bin/env bash
# The man pages are clean under mandoc -Tlint (make lint).
set -euo pipefail
. "$(dirname "$0")/../e2e/lib.sh"
cd "$ROOT"
make -s lint
echo "man_lint: ok"
