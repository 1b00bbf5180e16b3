#!/usr/bin/env bash
# The job outlives its console (tmux, fake driver): quit asks (y or n) while the job runs
# and kills it only on y; detach FILE leaves it running to its end with its further output
# in FILE; a console killed with SIGKILL, the job running or paused at a breakpoint,
# detaches the same way, the output going to $XDG_STATE_HOME/culeak/job-PID.log; the job
# inherits no descriptor of the console; kill asks (y or n) too.
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
while [ ! -e "$T/go.\$1" ] && [ -d "$T" ]; do sleep 0.05; done # (an aborted test leaves no job behind)
"$FAKE/client_static" long 3 1000
echo "job ran to its end"
touch "$T/ended.\$1"
JOB
chmod +x "$T/job.sh"

# job_pid: sets pid to the job's, from the console's first line in the output pane
job_pid() {
    pid=$(screen | sed -n 's/.*\[culeak\] started pid \([0-9]*\);.*/\1/p' | head -n 1)
    [ -n "$pid" ] || fail "no job pid on the screen"
}
# kill_console: SIGKILL to the console, the child of the session's shell
kill_console() {
    local console
    console=$(pgrep -P "$(tmux display-message -p -t "$S" '#{pane_pid}')" -x culeak)
    [ -n "$console" ] || fail "no console process to kill"
    kill -9 "$console"
}
# ended TAG: the job ran to its end (a generous deadline that only catches a hang)
ended() {
    local end=$((SECONDS + WAIT_S))
    until [ -e "$T/ended.$1" ]; do
        [ "$SECONDS" -lt "$end" ] || fail "the job $1 did not run to its end"
        sleep 0.1
    done
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
job_pid
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
job_pid
type_line "detach $T/detached.log"
wait_for "CONSOLE-DONE rc=0"
screen | grep -qF "detached from the job (pid $pid): it runs on, its output goes to $T/detached.log" ||
    fail "culeak does not say where the job's output goes"
kill -0 "$pid" 2>/dev/null || fail "the job (pid $pid) died with the detached console"
touch "$T/go.detach"
ended detach
wait_file "$T/detached.log" "job ran to its end"  # copied by the holder, maybe after the job ended
[ "$(stat -c %a "$T/detached.log")" = 600 ] || fail "the detach file is not private"

# 4. the console killed (SIGKILL) while the job runs: the job runs to its end, its
#    output in the state directory's file
start -- "$T/job.sh" kill9
wait_for "waiting for the go"
job_pid
kill_console
wait_for "CONSOLE-DONE rc=137"
touch "$T/go.kill9"
ended kill9
wait_file "$T/state/culeak/job-$pid.log" "job ran to its end"

# 5. the console killed while a breakpoint holds the job inside an allocation: the shim
#    lets the thread go, the job runs to its end
start -- "$T/job.sh" paused gated
wait_for "connected:"
type_line "break client_run"
wait_for "breakpoint 1 at client_run"
echo >"$T/gate.paused"
wait_for "PAUSED in cuMemAlloc_v2"
touch "$T/go.paused"
job_pid
kill_console
wait_for "CONSOLE-DONE rc=137"
ended paused
wait_file "$T/state/culeak/job-$pid.log" "job ran to its end"
grep -q "console went away" "$T/state/culeak/job-$pid.log" || fail "the shim did not say it stopped tracing"

# 6. as 5, the holder slow to learn that the console died (stopped, as a loaded machine
#    may leave it unscheduled) until the job has ended: the job's output waiting in the
#    terminal still goes to the file, not away with the terminal
start -- "$T/job.sh" slow gated
wait_for "connected:"
type_line "break client_run"
wait_for "breakpoint 1 at client_run"
echo >"$T/gate.slow"
wait_for "PAUSED in cuMemAlloc_v2"
touch "$T/go.slow"
job_pid
console=$(pgrep -P "$(tmux display-message -p -t "$S" '#{pane_pid}')" -x culeak)
holder=$(pgrep -P "$console" -x culeak)
[ -n "$holder" ] || fail "no holder of the job's terminal"
kill -STOP "$holder"
kill_console
wait_for "CONSOLE-DONE rc=137"
end=$((SECONDS + WAIT_S))
while [ ! -e "$T/ended.slow" ] && [ "$SECONDS" -lt "$end" ]; do sleep 0.1; done
kill -CONT "$holder"
ended slow
wait_file "$T/state/culeak/job-$pid.log" "job ran to its end"

# 7. the job inherits no descriptor of the console (its terminal, /dev/null): a detached
#    job would hold the console's terminal open (a closed ssh session would hang on it)
cat >"$T/fds.c" <<'C'
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        int fd = atoi(e->d_name), flags = fd < 3 || fd == dirfd(d) ? -1 : fcntl(fd, F_GETFD);
        if (flags < 0 || (flags & FD_CLOEXEC)) /* close-on-exec: its own (the shim's), not inherited */
            continue;
        char link[64], target[256] = "";
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        target[n > 0 ? n : 0] = 0;
        printf("inherited fd %d -> %s\n", fd, target);
    }
    puts("descriptors listed");
    return 0;
}
C
cc -o "$T/fds" "$T/fds.c" || fail "cannot build the descriptor lister"
start -- "$T/fds"
wait_for "descriptors listed"
screen | grep "inherited fd" && fail "the job inherited descriptors of the console"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"

# 8. kill asks too: n keeps the job, y stops it (SIGTERM) and the console stays
start -- "$T/job.sh" kill
wait_for "waiting for the go"
type_line "kill"
wait_for "Kill the job (pid"
type_line "n"
wait_for "Not confirmed."
screen | grep -q " RUNNING " || fail "kill + n stopped the job"
type_line "kill"
wait_for "Kill the job (pid"
type_line "y"
wait_for "EXITED (signal 15)"
type_line "quit"
wait_for "CONSOLE-DONE rc=143"
echo "console detach e2e ok"
