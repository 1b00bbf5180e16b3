#!/usr/bin/env bash
# A recording saved from the console while its job runs on (`save`) has no exit record:
# `culeak report` says what is live at its end is "live when the recording ends", not
# judged and not failing --error-exitcode, as memory from before an attach is. The time
# `save` took and the file's size are printed (figures, no threshold).
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static
start -- "$FAKE/client_static" growth 100000 100000
wait_for "3 marks"
t0=$(date +%s%N)
type_line "save $T/mid.culeak"
wait_for "saved the recording to $T/mid.culeak"
t1=$(date +%s%N)
echo "save: $(((t1 - t0) / 1000000)) ms to the message (tmux polls every 100 ms), $(stat -c %s "$T/mid.culeak") bytes"
"$B/culeak" report --error-exitcode 9 "$T/mid.culeak" >"$T/out" 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "report --error-exitcode 9 of a recording saved mid-run: status $rc: $(cat "$T/out")"
grep -q "^LEAKED" "$T/out" && fail "live memory of a running job reported as leaked: $(cat "$T/out")"
grep -q "^NOT JUDGED .* from grow_step at " "$T/out" || fail "no not-judged row for the growing site: $(cat "$T/out")"
grep -q "live when the recording ends, before its process did: not judged" "$T/out" ||
    fail "the rows do not say why they are not judged: $(cat "$T/out")"
grep -q "^LEAK SUMMARY: 0 bytes leaked in 0 allocations" "$T/out" || fail "leaks counted: $(cat "$T/out")"
grep -q "^END SUMMARY: [1-9][0-9]* bytes in [1-9][0-9]* allocations live when the recording ends" "$T/out" ||
    fail "no END SUMMARY: $(cat "$T/out")"
grep -q "no exit seen: what is live when the recording ends is not judged" "$T/out" ||
    fail "the process line does not say so: $(cat "$T/out")"
type_line "kill"
wait_for "(y or n)"
type_line "y"
wait_for "EXITED"
type_line "quit"
wait_for "CONSOLE-DONE"
echo "console_save_midrun: ok"
