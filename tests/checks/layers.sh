#!/usr/bin/env bash
# The layers of src/ read one way (tools/layers.sh, make lint): the tree as it is passes,
# and an include that climbs a layer, or names no folder, is caught with its file and line.
set -eu
. "$(dirname "$0")/../e2e/lib.sh"
cd "$ROOT"
tools/layers.sh
cp -r src include "$T/"
cd "$T"
sed -i '1a #include "report/report.h"' src/model/apply.c
sed -i '1a #include "console.h"' src/cli/attach.c
sed -i '1a #include "model/model.h"' src/shim/event.c
out=$("$ROOT/tools/layers.sh" 2>&1) && { echo "planted crossings passed: $out"; exit 1; }
for want in 'src/model/apply.c:2: model/ includes report/' 'src/cli/attach.c:2: "console.h" is not in cli/' \
    'src/shim/event.c:2: shim/ includes model/'; do
    grep -qF "$want" <<<"$out" || { echo "not caught: $want"; echo "$out"; exit 1; }
done
echo "layers: planted crossings caught"
