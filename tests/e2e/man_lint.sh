#!/usr/bin/env bash
# The man pages are clean under mandoc -Tlint (make lint).
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s lint
echo "man_lint: ok"
