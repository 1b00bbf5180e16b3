#!/usr/bin/env bash
# Names from the recording reach a text report escaped: a program whose path and arguments
# hold a newline followed by a forged summary line, and terminal escape sequences, gives a
# report with one LEAK SUMMARY line (the real one) and no control character but newlines;
# the JSON report keeps the names as they were.
set -u
. "$(dirname "$0")/lib.sh"
forged=$'x\nLEAK SUMMARY: 0 bytes leaked in 0 allocations from 0 call sites\n\e[2J\e]0;owned\a'
dir="$T/dir$forged"
mkdir "$dir" || fail "cannot make the directory"
cp "$B/fakecuda/client_static" "$dir/client$forged" || fail "cannot copy the client"
LD_LIBRARY_PATH=$B/fakecuda "$B/culeak" record -o "$T/r.culeak" -- "$dir/client$forged" leak 1 64 \
    >"$T/out" 2>&1 || fail "record failed: $(cat "$T/out")"
for mode in "" "--suspects" "--group=module"; do
    # shellcheck disable=SC2086
    "$B/culeak" report $mode "$T/r.culeak" >"$T/report" 2>&1
    rc=$?
    [ "$rc" -le 1 ] || fail "report $mode exited $rc: $(cat "$T/report")"
    n=$(grep -c "^[A-Z]* SUMMARY:" "$T/report")
    [ "$n" -eq 1 ] || fail "report $mode: $n SUMMARY lines: $(cat -v "$T/report")"
    if LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$T/report"; then
        fail "report $mode holds control characters: $(cat -v "$T/report")"
    fi
done
"$B/culeak" report "$T/r.culeak" >"$T/report" 2>&1
grep -qF 'x\nLEAK SUMMARY: 0 bytes' "$T/report" || fail "the newline is not shown as \\n: $(cat -v "$T/report")"
grep -qF '\u001b[2J' "$T/report" || fail "the escape is not shown as \\u001b: $(cat -v "$T/report")"
"$B/culeak" report --format=json "$T/r.culeak" >"$T/json" 2>&1
python3 - "$T/json" "$forged" <<'PY' || fail "the JSON report lost the argument"
import json, sys
r = json.load(open(sys.argv[1]))
assert any(a.endswith("client" + sys.argv[2]) for p in r["processes"] for a in p["argv"]), r["processes"]
PY
echo "report_escapes: ok"
