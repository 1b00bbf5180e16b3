#!/usr/bin/env bash
# culeak open on a PyTorch memory snapshot (PyTorch 2.11's, of a leaking loop on an H100):
# the table's sites are the user's lines, the pool's segments its own row, the suspects
# line counts the leak, goto moves to a mark of its annotations, and a diff between two of
# them puts the growth at the leaking line.
set -u
. "$(dirname "$0")/tmux_harness.sh"
snap=$ROOT/tests/e2e/data/torch211_leak.pickle

start open "$snap"
wait_for "RECORDING"
screen | grep -qE "^ +[0-9]+\*? +48.0 MiB +12 .*leak_snap.py:13" || fail "the leaking line's 12 blocks are not in the table"
screen | grep -qE "128 MiB .*pytorch caching allocator: reserved" || fail "the pool's segments are not their own row"
screen | grep -q "suspects: 1 site grows +4.00 MiB/iteration" || fail "the suspects line does not count the leak"
type_expect "goto Optimizer.step#SGD.step 2" "at mark Optimizer.step#SGD.step 2"
type_expect "snapshot s2" "snapshot s2: "
type_expect "goto Optimizer.step#SGD.step 10" "at mark Optimizer.step#SGD.step 10"
type_expect "diff s2" "diff s2 -> Optimizer.step#SGD.step 10"
screen | grep -qE "^ +[0-9]+\*? +\+32.0 MiB .*leak_snap.py:13" || fail "diff s2: the growth is not at leak_snap.py:13"
echo "console torch snapshot e2e ok"
