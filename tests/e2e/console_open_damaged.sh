#!/usr/bin/env bash
# culeak open on a recording with one corrupt byte reads it up to the damage and says so,
# as culeak report does (before, it refused the whole recording).
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static
LD_LIBRARY_PATH=$FAKE "$B/culeak" record -o "$T/r.culeak" -- "$FAKE/client_static" leak 5 4096 >/dev/null 2>&1 ||
    fail "record failed"
python3 - "$T/r.culeak" "$T/bad.culeak" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
# the last ALLOC's (or ALLOC_AGAIN's) length one byte short (the last field it must have
# cut): a flipped byte at a fixed distance from the end could land where the stream still
# parses
pos, last = 8, None  # magic, then type:u8 length:uvarint payload (culeak-stream(5))
while pos < len(b):
    start, pos = pos, pos + 1
    n = shift = 0
    while True:
        c = b[pos]; pos += 1
        n |= (c & 0x7f) << shift; shift += 7
        if not c & 0x80:
            break
    if b[start] in (13, 15) and pos == start + 2:
        last = start
    pos += n
b[last + 1] -= 1
open(sys.argv[2], "wb").write(b)
PY
"$B/culeak" report "$T/bad.culeak" >/dev/null 2>"$T/err"
grep -q "corrupt stream" "$T/err" || fail "the planted damage is not corrupt to report: $(cat "$T/err")"
start open "$T/bad.culeak"
wait_for "RECORDING"
wait_for "read up to the damage"
wait_for "leak at tests/fakecuda/client_scenarios.c"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
echo "console_open_damaged: ok"
