#!/usr/bin/env bash
# The console's `compare FILE`: culeak open of a run of 30 iterations compared with a run
# of 10 recorded before it: the growing site is GROWN, the sawtooth (nothing live at the
# baseline's end) new, with the summary in the output pane.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static

for n in 10 30; do
    env LD_LIBRARY_PATH="$FAKE" XDG_RUNTIME_DIR="$T/run" ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 \
        ${CULEAK_E2E_SHIM:+CULEAK_LIB=$CULEAK_E2E_SHIM} \
        "$B/culeak" record -o "$T/g$n.culeak" -- "$FAKE/client_static" growth $n 0 >"$T/rec.out" 2>&1 ||
        { cat "$T/rec.out"; fail "record of $n iterations failed"; }
done

start_sized 120 40 open "$T/g30.culeak"
wait_for "RECORDING"
type_expect "compare $T/g10.culeak" "1 call sites new, 0 gone, 1 grown, 0 shrunk (output pane)"
screen | grep -q "^COMPARE SUMMARY: leaked 448.0 KiB (458752 bytes) more than the baseline" ||
    fail "the summary is not in the output pane"
type_expect "search GROWN +320" "GROWN +320.0 KiB (327680 bytes) (163840 bytes in 10 allocations -> 491520 bytes in 30) from grow_step at"
type_expect "compare $T/nothing.culeak" "compare: "
echo "PASS console_compare"
