#!/usr/bin/env bash
# The job outlives its console (tmux, fake driver): quit asks (y or n) while the job runs
# and kills it only on y; detach FILE leaves it running to its end with its further output
# in FILE; a console killed with SIGKILL, the job running or paused at a breakpoint,
# detaches the same way, the output going to $XDG_STATE_HOME/culeak/job-PID.log.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static

# The job: traced allocations, then it waits for $T/go.TAG (made once the console is
# gone), allocates again, prints its last line and leaves $T/ended.TAG. "job.sh TAG gated":
# the first client stops half-way until a line is written into the FIFO $T/gate.TAG.
cat >"$T/job.sh" <<JOB
#!/bin/sh
if [ "\${2:-}" = gated ]; then
    mkfifo "$T/gate.\$1"
    exec 3<>"$T/gate.\$1"
    "$FAKE/client_static" gated 6 <&3
else
    "$FAKE/client_static" long 3 1000
fi
echo "waiting for the go"
while [ ! -e "$T/go.\$1" ]; do sleep 0.05; done
"$FAKE/client_static" long 3 1000
echo "job ran to its end"
touch "$T/ended.\$1"
JOB
chmod +x "$T/job.sh"

job_pid() { screen | sed -n 's/.*\[culeak\] started pid \([0-9]*\);.*/\1/p' | head -n 1; }
console_pid() { pgrep -P "$(tmux display-message -p -t "$S" '#{pane_pid}')" -x culeak; }
# ended TAG: the job ran to its end (a generous deadline that only catches a hang)
ended() {
    local i
    for i in $(seq 1 300); do
        [ -e "$T/ended.$1" ] && return 0
        sleep 0.1
    done
    fail "the job $1 did not run to its end"
}

# 1. quit, n: nothing happens; the job runs on and ends by itself
start -- "$T/job.sh" n
wait_for "waiting for the go"
type_line "quit"
wait_for "Quit anyway? (y or n)"
type_line "n"
wait_for "Not confirmed."
touch "$T/go.n"
wait_for "EXITED (status 0)"
[ -e "$T/ended.n" ] || fail "the job did not end by itself after quit + n"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"

# 2. quit, y: the job is killed, the console leaves with its status (SIGTERM: 143)
start -- "$T/job.sh" y
wait_for "waiting for the go"
pid=$(job_pid)
[ -n "$pid" ] || fail "no job pid on the screen"
type_line "quit"
wait_for "Quit anyway? (y or n)"
type_line "maybe"
wait_for "Please answer y or n."
type_line "y"
wait_for "CONSOLE-DONE rc=143"
kill -0 "$pid" 2>/dev/null && fail "the job (pid $pid) survived quit + y"

# 3. detach FILE: the console leaves, the job runs to its end, its output in FILE
start -- "$T/job.sh" detach
wait_for "waiting for the go"
pid=$(job_pid)
type_line "detach $T/detached.log"
wait_for "CONSOLE-DONE rc=0"
screen | grep -qF "detached from the job (pid $pid): it runs on, its output goes to $T/detached.log" ||
    fail "culeak does not say where the job's output goes"
kill -0 "$pid" 2>/dev/null || fail "the job (pid $pid) died with the detached console"
touch "$T/go.detach"
ended detach
grep -q "job ran to its end" "$T/detached.log" || fail "the job's last line is not in the detach file"
[ "$(stat -c %a "$T/detached.log")" = 600 ] || fail "the detach file is not private"

# 4. the console killed (SIGKILL) while the job runs: the job runs to its end, its
#    output in the state directory's file
start -- "$T/job.sh" kill9
wait_for "waiting for the go"
pid=$(job_pid)
kill -9 "$(console_pid)"
wait_for "CONSOLE-DONE rc=137"
touch "$T/go.kill9"
ended kill9
grep -q "job ran to its end" "$T/state/culeak/job-$pid.log" || fail "the job's output after the console died is lost"

# 5. the console killed while a breakpoint holds the job inside an allocation: the shim
#    lets the thread go, the job runs to its end
start -- "$T/job.sh" paused gated
wait_for "connected:"
type_line "break client_run"
wait_for "breakpoint 1 at client_run"
echo >"$T/gate.paused"
wait_for "PAUSED in cuMemAlloc_v2"
touch "$T/go.paused"
pid=$(job_pid)
kill -9 "$(console_pid)"
wait_for "CONSOLE-DONE rc=137"
ended paused
grep -q "console went away" "$T/state/culeak/job-$pid.log" || fail "the shim did not say it stopped tracing"
grep -q "job ran to its end" "$T/state/culeak/job-$pid.log" || fail "the paused job's output is lost"
echo "console detach e2e ok"
