#!/usr/bin/env bash
# culeak attach PID (tmux, fake driver): the console on a job started without culeak, which
# allocated 4 blocks of 8192 bytes and 4096 bytes of pinned host memory before the attach,
# frees the pinned memory after it and leaks 3 blocks of 12288 at one line. The header says
# the process is attached; the table shows (before attach) with the 4 blocks and the leak
# at its line; the live total is the fake driver's own count (69632 bytes = 68.0 KiB); a
# diff between two snapshots names the leak's line; detach leaves the job running, and it
# ends with its own status and output. Then a console whose process ends while attached
# says so (its leak report: the 3 blocks, the 4 from before not judged), and quit detaches
# (never kills) an attached process. gdb is not on PATH: culeak needs none.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static
. "$ROOT/tests/e2e/attach/job.sh"
attach_console_setup # culeak's own injector: no gdb on the console's PATH
line=$(leak_line tests/fakecuda/client_scenarios.c)

# 1. attach, snapshot, leak, diff, detach
D=$T/one
mkdir "$D"
start_job client_static "$D"
t0=$(date +%s%N)
start attach "$job"
wait_for "process $job connected"
wait_for "before attach: 5 allocations, 36864 bytes"
wait_for "(attached; before it: no stacks)"
wait_for "(before attach)"
# a figure, not a check: from the command to the table on screen (the screen is read
# every poll of wait_for, so this is an upper bound)
echo "first live table: $((($(date +%s%N) - t0) / 1000000)) ms after culeak attach"
type_expect "snapshot a" "snapshot a: 36.0 KiB live"
touch "$D/go"
wait_file_exists "$D/leaked"
wait_for "client_scenarios.c:$line"
type_expect "diff a" "diff a -> now"
wait_for "+36.0 KiB"
type_expect "snapshot b" "snapshot b: 68.0 KiB live"
type_line "detach"
wait_for "CONSOLE-DONE rc=0"
wait_for "culeak: detached from pid $job: it runs on, untraced"
kill -0 "$job" 2>/dev/null || fail "the job did not outlive the detach"
touch "$D/end"
job_rc=0
wait "$job" || job_rc=$?
check_job_output client_static "$D"

# 2. the process ends while attached: the console says so, and its leak report holds the 3
# blocks leaked after the attach, not what was live before it (no stack: not judged);
# quit leaves without a question
D=$T/two
mkdir "$D"
start_job client_static "$D"
start attach "$job"
wait_for "process $job connected"
wait_for "before attach: 5 allocations, 36864 bytes"
finish_job "$D"
wait_for "EXITED"
wait_for "LEAK SUMMARY: 36864 bytes leaked in 3 allocations from 1 call sites"
wait_for "ATTACH SUMMARY: 32768 bytes in 4 allocations live since before"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
wait_for "culeak: pid $job ended"
check_job_output client_static "$D"

# 3. quit on a running attached process detaches (no question, no kill)
D=$T/three
mkdir "$D"
start_job client_static "$D"
start attach "$job"
wait_for "process $job connected"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
kill -0 "$job" 2>/dev/null || fail "quit killed the attached job"
finish_job "$D"
check_job_output client_static "$D"
job=
echo "attach_console: ok"
