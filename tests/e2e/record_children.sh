#!/usr/bin/env bash
# record and a job's children (fake driver): a vfork child that _exits leaves its parent's
# recording whole (both allocations, the parent's own exit); a child that outlives its
# parent is waited for, its allocation after the parent's exit recorded; a child that
# stops tracing (it execs a program that makes no CUDA call) is not waited for.
set -u
. "$(dirname "$0")/lib.sh"
linger=
# release a shell left waiting (never blocking on a FIFO no one reads)
release() { [ -n "$linger" ] && timeout 5 sh -c 'echo >"$0"' "$linger"; linger=; }
at_exit release
export LD_LIBRARY_PATH=$B/fakecuda
H=$B/fakecuda/client_hostile

allocs() { "$B/culeak" dump "$1" 2>/dev/null | grep -c '"type":"alloc".*"size":4096,'; }

# vfork: the child shares the parent's memory, the shim's stream with it
"$B/culeak" record -o "$T/v.culeak" -- "$H" vfork >"$T/out" 2>"$T/err" || fail "vfork: status $?: $(cat "$T/err")"
[ "$(allocs "$T/v.culeak")" = 2 ] || fail "vfork: $(allocs "$T/v.culeak") of the parent's 2 allocations recorded"
"$B/culeak" dump "$T/v.culeak" | grep '"type":"exit"' >"$T/exits"
[ "$(wc -l <"$T/exits")" = 1 ] || fail "vfork: the parent's recording has $(wc -l <"$T/exits") exit records: $(cat "$T/exits")"
# the reason of the one exit record: a process that returned from main, as a plain job's
"$B/culeak" record -o "$T/plain.culeak" -- "$H" churn 1 >/dev/null 2>&1 || fail "churn: status $?"
reason() { "$B/culeak" dump "$1" | sed -n 's/.*"type":"exit".*"reason":\([0-9]*\).*/\1/p'; }
[ "$(reason "$T/v.culeak")" = "$(reason "$T/plain.culeak")" ] ||
    fail "vfork: the parent's exit record says reason $(reason "$T/v.culeak"), a plain exit's is $(reason "$T/plain.culeak")"

# a child that allocates again once its parent has exited
"$B/culeak" record -o "$T/o.culeak" -- "$H" orphan >"$T/out" 2>"$T/err" || fail "orphan: status $?: $(cat "$T/err")"
child=$(ls "$T"/o.culeak.[0-9]* 2>/dev/null)
[ -n "$child" ] || fail "orphan: no recording of the child: $(ls "$T")"
[ "$(allocs "$child")" = 2 ] || fail "orphan: $(allocs "$child") of the child's 2 allocations recorded (record ended with the parent)"

# a child that execs a shell making no CUDA call, which waits on a FIFO: record ends with
# the parent, the shell still waiting
linger=$T/fifo
mkfifo "$linger"
timeout 20 "$B/culeak" record -o "$T/l.culeak" -- "$H" execlinger "$linger" >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" -eq 0 ] || fail "execlinger: record exited $rc (124: it waited for the shell): $(cat "$T/err")"
release
child=$(ls "$T"/l.culeak.[0-9]* 2>/dev/null)
[ -n "$child" ] && [ "$(allocs "$child")" = 1 ] || fail "execlinger: the child's allocation is not recorded"
echo "record_children: ok"
