#!/usr/bin/env bash
# The console reads its job through shared-memory rings (tmux, fake driver): nothing the
# job does cuts the console off, and nothing the console does (or suffers) stalls the job.
#   1. A console stopped with SIGSTOP while the job allocates: the job runs to its end
#      while the console is stopped; after SIGCONT the console says how many events were
#      lost while it was stopped, and so does the report of the recording it saves.
#   2. A job that closes its descriptors from 3 up (closefrom) still has every allocation
#      on the table.
#   3. A running traced job holds no descriptor of culeak's (/proc/PID/fd: 0, 1, 2).
#   4. The console killed while a thread is paused at a breakpoint: the job goes on and
#      exits with its own status.
#   5. Without XDG_RUNTIME_DIR the hand-over socket lies in a directory made afresh under
#      TMPDIR (mkdtemp, 0700), never at a name another user could make first.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static

cc -g -O0 -o "$T/job" "$(dirname "$0")/c/ring_job.c" -ldl || fail "cannot build the job"
cp "$(dirname "$0")/c/gated_leak.c" "$T/leak.c"
cc -g -O0 -o "$T/leak" "$T/leak.c" -ldl || fail "cannot build the gated job"
LEAK=leak.c:$(grep -n "LEAK" "$T/leak.c" | cut -d: -f1)
started_pid() { screen | sed -n 's/.*\[culeak\] started pid \([0-9]*\);.*/\1/p' | head -n 1; }
# the console is the parent of the process it started
console_of() { ps -o ppid= -p "$1" | tr -d ' '; }
console=""
trap '[ -n "$console" ] && kill -CONT "$console" 2>/dev/null; cleanup' EXIT

# 1. stopped console: 300000 allocations (megabytes of stream) while it is stopped
start -- "$T/job" burst "$T/go" "$T/done" 300000
wait_for "1 proc (1 live)"
pid=$(started_pid)
console=$(console_of "$pid")
[ -n "$console" ] || fail "no console process for job $pid"
kill -STOP "$console"
touch "$T/go"
until_deadline test -e "$T/done" || { kill -CONT "$console"; fail "the job did not finish while the console was stopped"; }
kill -CONT "$console"
wait_for "EXITED (status 0)"
wait_for "events lost while the console was stopped"
lost=$(screen | sed -n 's/.*pid [0-9]*: \([0-9]*\) events lost while the console was stopped.*/\1/p' | head -n 1)
[ -n "$lost" ] && [ "$lost" -gt 0 ] || fail "no count of lost events on the screen"
# the recording saved from the console says so too (all gaps together: as many or more)
type_expect "save $T/stopped.culeak" "saved the recording to $T/stopped.culeak"
env LD_LIBRARY_PATH="$FAKE" "$B/culeak" report "$T/stopped.culeak" >"$T/stopped.txt" 2>&1
saved=$(sed -n 's/.*\[\([0-9]*\) events lost while the reader was stopped\].*/\1/p' "$T/stopped.txt" | head -n 1)
[ -n "$saved" ] && [ "$saved" -ge "$lost" ] ||
    fail "the saved recording's report does not say the $lost events were lost: $(head -n 5 "$T/stopped.txt")"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
console=""

# 2. closefrom: every allocation after it reaches the console
start -- "$T/job" closefrom
wait_for "EXITED (status 0)"
wait_for "leak report"
wait_for "409600 bytes leaked in 100 allocations"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"

# 3. no descriptor of culeak's in the traced job
rm -f "$T/go"
start -- "$T/job" wait "$T/go"
wait_for "1 proc (1 live)"
pid=$(started_pid)
fds=$(ls /proc/"$pid"/fd | sort -n | tr '\n' ' ')
touch "$T/go"
[ "$fds" = "0 1 2 " ] || fail "the job holds descriptors beyond 0 1 2: $fds($(ls -l /proc/"$pid"/fd 2>&1 | tail -n +4))"
wait_for "EXITED (status 0)"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"

# 4. the console killed while the job is paused at a breakpoint: it goes on, its status its own
rm -f "$T/go" "$T/rc"
printf '#!/bin/sh\n"%s" "%s"\necho rc=$? >"%s"\n' "$T/leak" "$T/go" "$T/rc" >"$T/leak.sh"
chmod +x "$T/leak.sh"
start -- "$T/leak.sh"
wait_for "1 proc (1 live)"
type_expect "break $LEAK" "breakpoint 1 at $LEAK"
touch "$T/go"
wait_for "PAUSED in cuMemAlloc_v2(1.00 MiB) - breakpoint 1 (hit 1)"
pid=$(started_pid)
console=$(console_of "$pid")
[ -n "$console" ] || fail "no console process for job $pid"
kill -KILL "$console"
console=""
WAIT_S=30 until_deadline test -s "$T/rc" || fail "the job stayed held after the console was killed"
grep -qx "rc=0" "$T/rc" || fail "the job's status: $(cat "$T/rc") (want rc=0)"

# 5. no XDG_RUNTIME_DIR: a fresh private directory under TMPDIR
mkdir -m 700 "$T/tmp"
saved_envs=$ENVS
ENVS="-u XDG_RUNTIME_DIR $(echo "$ENVS" | sed 's|XDG_RUNTIME_DIR=[^ ]*||') TMPDIR=$T/tmp"
rm -f "$T/go"
start -- "$T/job" wait "$T/go"
wait_for "1 proc (1 live)"
ENVS=$saved_envs
sock=$(screen | sed -n 's/.*\[culeak\] started pid [0-9]*; socket \([^ ]*\).*/\1/p' | head -n 1)
case "$sock" in
"$T"/tmp/culeak-??????/ring) ;;
*) fail "the hand-over socket is not in a fresh directory under TMPDIR: '$sock'" ;;
esac
[ "$(stat -c '%a %u' "$(dirname "$sock")")" = "700 $(id -u)" ] || fail "$(dirname "$sock") is not private"
touch "$T/go"
wait_for "EXITED (status 0)"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
[ ! -e "$(dirname "$sock")" ] || fail "$(dirname "$sock") stays after the console"
echo "console_ring: ok"
