#!/usr/bin/env bash
# Every process that exited has its EXIT record, so check never calls it killed: 64
# threads calling exit() at once (20 runs), daemon()'s parent (it ends inside libc), and,
# where the record is lost (the reader was stopped while the ring was full), check takes
# its own child's wait status instead.
set -u
. "$(dirname "$0")/lib.sh"
cpid=
at_exit 'kill -CONT $cpid 2>/dev/null'
cc -g -O0 -I"$ROOT/src" -o "$T/job" "$C/exit_races.c" -L"$B/fakecuda" -lcudart -lpthread ||
    fail "cannot build the job"
export LD_LIBRARY_PATH=$B/fakecuda
KILLED="ends before the process did\|no exit seen"

# 64 threads call exit(3) as main does (20 runs), or one while main's return runs the
# destructors (5 runs: that thread's exit comes there every time): the process exited, in
# every run (a child of bash: its own EXIT record, not check's wait status, says so)
for mode in threads return; do
    false_kills=0
    runs=20
    [ $mode = return ] && runs=5
    for run in $(seq $runs); do
        "$B/culeak" check -- bash -c "$T/job $mode; exit \$?" >"$T/out" 2>"$T/err"
        rc=$?
        [ "$rc" -eq 3 ] || fail "$mode, run $run: status $rc, want the program's 3: $(cat "$T/err")"
        grep -q "$KILLED" "$T/err" && false_kills=$((false_kills + 1)) && cp "$T/err" "$T/err.kill"
    done
    echo "threads exiting ($mode): $false_kills false kills in $runs runs"
    [ "$false_kills" -eq 0 ] || fail "$mode: $false_kills of $runs runs lost the EXIT record: $(cat "$T/err.kill")"
done

# daemon()'s parent, a grandchild of check (bash is its child): its own EXIT record
"$B/culeak" check -- bash -c "$T/job daemon; true" >"$T/out" 2>"$T/err"
rc=$?
grep -q "$KILLED" "$T/err" && fail "daemon()'s parent is called killed: $(cat "$T/err")"
[ "$rc" -eq 1 ] || fail "daemon: status $rc, want 1 (the parent's 1 MiB): $(cat "$T/err")"

# the reader stopped while the job fills its ring and exits: events are lost and so is
# the EXIT record; check, the job's parent, knows it exited with 0
"$B/culeak" check -- "$T/job" flood "$T/go" "$T/done" >"$T/out" 2>"$T/err" &
cpid=$!
# after the job's first allocation (its ring handed over), the reader is stopped
for _ in $(seq 600); do [ -e "$T/go.ready" ] && break; sleep 0.1; done
[ -e "$T/go.ready" ] || fail "the flood job did not start: $(cat "$T/err")"
kill -STOP $cpid
touch "$T/go"
for _ in $(seq 600); do [ -e "$T/done" ] && break; sleep 0.1; done
[ -e "$T/done" ] || fail "the flood job did not finish"
for _ in $(seq 600); do pgrep -f "^$T/job flood" >/dev/null || break; sleep 0.1; done # it exits
kill -CONT $cpid
wait $cpid
rc=$?
grep -q "events lost while the reader was stopped" "$T/err" || fail "no events were lost: $(cat "$T/err")"
grep -q "$KILLED" "$T/err" && fail "a job that exited 0 is called killed: $(cat "$T/err")"
[ "$rc" -eq 1 ] || fail "flood with the reader stopped: status $rc, want 1 (its 1 MiB): $(cat "$T/err")"
# a child killed with SIGKILL has no EXIT record: check says which signal killed it
"$B/culeak" check -- "$B/fakecuda/client_hostile" killnow 2 9 >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" -eq 137 ] || fail "killnow: status $rc, want 137 (SIGKILL): $(cat "$T/err")"
grep -q "ends before the process did (killed by signal 9" "$T/err" || fail "killnow: the signal is not named: $(cat "$T/err")"
echo "exit_records: ok"
