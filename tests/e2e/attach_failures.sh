#!/usr/bin/env bash
# culeak record --pid when things go wrong (fake driver); the job is never left stopped or
# changed: it ends with its own status (7) and output each time. gdb is not on PATH: the
# injector is culeak's own, but where CULEAK_GDB names gdb (where the machine has one):
#  - the injector (gdb) killed at each step: record fails (or, killed once the shim has
#    started, records anyway), the job runs on;
#  - culeak itself killed at each step: gdb detaches at the end of its input;
#  - a job that ends during gdb's attach: record says so and ends.
# With either injector:
#  - a job already traced (another tracer holds it): refused, naming the tracer;
#  - no such process: refused;
#  - attached twice: the second is refused while the first records; once the first has
#    detached (SIGINT), a new attach records again;
#  - record stopped (SIGSTOP) while the job floods its ring: the job runs to its end, the
#    recording counts what was lost.
set -u
. "$(dirname "$0")/attach/job.sh"
attach_test_setup
holder=
at_exit '[ -n "$holder" ] && kill -9 "$holder" 2>/dev/null'
export XDG_RUNTIME_DIR=$T # a killed culeak leaves its socket's directory there
# whole_report RECORDING: its report has the 3 leaks made after the attach and the 4
# blocks live before it (with them, the fake driver's own 69632 bytes)
whole_report() {
    local r
    r=$("$B/culeak" report "$1" 2>&1)
    grep -q "^LEAK SUMMARY: 36864 bytes leaked in 3 allocations" <<<"$r" &&
        grep -q "^ATTACH SUMMARY: 32768 bytes in 4 allocations" <<<"$r"
}
culeak_report() { "$B/culeak" report "$1" 2>&1; }

if [ -z "$REAL_GDB" ]; then
    echo "attach_failures: the CULEAK_GDB cases need gdb, which this machine lacks: not run"
else
# 1. the injector killed at each step
for step in attach dlopen start detach; do
    D=$T/kill-$step
    mkdir "$D"
    start_job client_static "$D"
    rc=0
    CULEAK_GDB=$STEP_GDB KILL_AT=$step timeout 120 "$B/culeak" record --pid "$job" -o "$D/rec.culeak" \
        >"$D/rec.out" 2>"$D/rec.err" &
    rec=$!
    if [ "$step" = detach ]; then
        # the shim had started: the recording goes on without the debugger
        wait_attached "$D/rec.err" "$job"
        wait_inventory "$D/rec.culeak"
        finish_job "$D"
        wait "$rec" || rc=$?
        [ "$rc" -eq 0 ] || fail "killed at $step: record exited $rc: $(cat "$D/rec.err")"
        whole_report "$D/rec.culeak" || fail "killed at $step: the recording is not whole"
    else
        wait "$rec" || rc=$?
        [ "$rc" -eq 1 ] || fail "killed at $step: record exited $rc, want 1: $(cat "$D/rec.err")"
        [ -s "$D/rec.err" ] || fail "killed at $step: record said nothing"
        [ ! -e "$D/rec.culeak" ] || fail "killed at $step: a recording was left"
        not_stopped "killed at $step"
        finish_job "$D"
    fi
    check_job_output client_static "$D"
done

# 1b. culeak killed at each step (the debugger is left with what culeak had sent)
for step in dlopen start detach; do
    D=$T/dies-$step
    mkdir "$D"
    start_job client_static "$D"
    rc=0
    CULEAK_GDB=$STEP_GDB CULEAK_DIES_AT=$step "$B/culeak" record --pid "$job" -o "$D/rec.culeak" \
        >"$D/rec.out" 2>"$D/rec.err" || rc=$?
    [ "$rc" -eq 137 ] || fail "culeak killed at $step: exited $rc: $(cat "$D/rec.err")"
    # the debugger goes once it has read all; the job must not stay traced or stopped
    end=$((SECONDS + WAIT_S))
    until [ "$(sed -n 's/^TracerPid:\t*//p' "/proc/$job/status")" = 0 ]; do
        [ "$SECONDS" -lt "$end" ] || fail "culeak killed at $step: the job stays traced"
        sleep 0.05
    done
    not_stopped "culeak killed at $step"
    finish_job "$D"
    check_job_output client_static "$D"
done

# 1c. the job ends during the attach (killed while the debugger holds it)
D=$T/exits
mkdir "$D"
start_job client_static "$D"
rc=0
CULEAK_GDB=$STEP_GDB TARGET_EXIT_AT=dlopen timeout 120 "$B/culeak" record --pid "$job" -o "$D/rec.culeak" \
    2>"$D/rec.err" || rc=$?
[ "$rc" -eq 1 ] || fail "a job ending during the attach: record exited $rc: $(cat "$D/rec.err")"
grep -q "pid $job exited during the attach" "$D/rec.err" || fail "a job ending during the attach: $(cat "$D/rec.err")"
wait "$job" 2>/dev/null
job=
fi

# 2. a job traced already: another tracer seizes it (PTRACE_SEIZE does not stop it)
D=$T/traced
mkdir "$D"
start_job client_static "$D"
python3 - "$job" "$D/seized" <<'PY' &
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(0x4206, int(sys.argv[1]), None, None) != 0:  # PTRACE_SEIZE
    sys.exit("seize: " + os.strerror(ctypes.get_errno()))
open(sys.argv[2], "w").close()
time.sleep(3600)
PY
holder=$!
wait_file_exists "$D/seized"
rc=0
"$B/culeak" record --pid "$job" -o "$D/rec.culeak" 2>"$D/rec.err" || rc=$?
[ "$rc" -eq 1 ] || fail "a traced job: record exited $rc, want 1"
grep -q "culeak record: pid $job is already traced by pid $holder (python3)" "$D/rec.err" ||
    fail "a traced job: $(cat "$D/rec.err")"
kill -9 "$holder"
wait "$holder" 2>/dev/null
holder=
finish_job "$D"
check_job_output client_static "$D"

# 3. no such process
rc=0
"$B/culeak" record --pid 2147483000 -o "$T/none.culeak" 2>"$T/none.err" || rc=$?
[ "$rc" -eq 1 ] || fail "no such process: record exited $rc"
grep -q "no running process with pid 2147483000" "$T/none.err" || fail "no such process: $(cat "$T/none.err")"

# 5. twice: refused while attached; after a detach, attached again
D=$T/twice
mkdir "$D"
start_job client_static "$D"
"$B/culeak" record --pid "$job" -o "$D/first.culeak" 2>"$D/first.err" &
first=$!
wait_attached "$D/first.err" "$job"
rc=0
"$B/culeak" record --pid "$job" -o "$D/second.culeak" 2>"$D/second.err" || rc=$?
[ "$rc" -eq 1 ] || fail "attached twice: the second record exited $rc: $(cat "$D/second.err")"
grep -q "pid $job is traced by culeak already" "$D/second.err" || fail "attached twice: $(cat "$D/second.err")"
kill -INT "$first"
rc=0
wait "$first" || rc=$?
[ "$rc" -eq 0 ] || fail "record interrupted exited $rc: $(cat "$D/first.err")"
grep -q "detached from pid $job: it runs on" "$D/first.err" || fail "interrupted record: $(cat "$D/first.err")"
"$B/culeak" record --pid "$job" -o "$D/third.culeak" 2>"$D/third.err" &
third=$!
wait_attached "$D/third.err" "$job"
wait_inventory "$D/third.culeak"
finish_job "$D"
rc=0
wait "$third" || rc=$?
[ "$rc" -eq 0 ] || fail "attach after a detach: record exited $rc: $(cat "$D/third.err")"
whole_report "$D/third.culeak" || fail "attach after a detach: $(culeak_report "$D/third.culeak")"
check_job_output client_static "$D"

# 6. record --pid stopped (SIGSTOP) while the attached job floods its ring: the job runs to
# its end meanwhile (a bounded wait, then its events are dropped and counted), and the
# recording says how many were lost once record reads again
D=$T/stopped-reader
mkdir "$D"
mkfifo "$D/gate"
LD_LIBRARY_PATH=$B/fakecuda "$B/fakecuda/client_static" gated 400000 <"$D/gate" >"$D/out" 2>"$D/err" &
job=$!
exec 7>"$D/gate" # the job's first half runs, then it waits for a byte
"$B/culeak" record --pid "$job" -o "$D/rec.culeak" 2>"$D/rec.err" &
rec=$!
wait_attached "$D/rec.err" "$job"
wait_inventory "$D/rec.culeak"
kill -STOP "$rec"
printf x >&7
exec 7>&-
end=$((SECONDS + WAIT_S))
while kill -0 "$job" 2>/dev/null; do
    [ "$SECONDS" -lt "$end" ] || { kill -CONT "$rec"; fail "a stopped record --pid: the job did not finish while it was stopped"; }
    sleep 0.1
done
job_rc=0
wait "$job" || job_rc=$?
job=
kill -CONT "$rec"
rc=0
wait "$rec" || rc=$?
[ "$rc" -eq 0 ] || fail "a stopped record --pid exited $rc: $(cat "$D/rec.err")"
[ "$job_rc" -eq 0 ] && grep -q "^client_static gated ok" "$D/out" ||
    fail "a stopped record --pid: the job exited $job_rc: $(cat "$D/out" "$D/err")"
"$B/culeak" report "$D/rec.culeak" >"$D/report" 2>&1
grep -Eq "[1-9][0-9]* events lost" "$D/report" || fail "a stopped record --pid: no gap said: $(tail -5 "$D/report")"
echo "attach_failures: ok"
