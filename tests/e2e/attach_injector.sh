#!/usr/bin/env bash
# culeak record --pid when the injector goes wrong (fake driver); the job is never left
# stopped or changed: it ends with its own status (7) and output each time.
#  - the injector dead with the job left in a stop: the job is made to run;
#  - gdb cannot attach (the process it was told is gone): record says what gdb said;
#  - the shim cannot be loaded (CULEAK_LIB names no library): record says why, the job
#    never calls into it;
#  - another process connects to culeak's socket first: culeak records the attached one.
set -u
. "$(dirname "$0")/attach/job.sh"
attach_test_setup
export XDG_RUNTIME_DIR=$T # a killed culeak leaves its socket's directory there

# the injector dies and leaves the job stopped (untraced): culeak makes it run
D=$T/stopped
mkdir "$D"
start_job client_static "$D"
rc=0
CULEAK_GDB=$STEP_GDB STOP_AT=dlopen timeout 120 "$B/culeak" record --pid "$job" -o "$D/rec.culeak" \
    2>"$D/rec.err" || rc=$?
[ "$rc" -eq 1 ] || fail "left stopped: record exited $rc: $(cat "$D/rec.err")"
not_stopped "the injector dead with the job stopped"
finish_job "$D"
check_job_output client_static "$D"

# gdb fails to attach (told another pid, which does not exist): its words, no next step
D=$T/no-attach
mkdir "$D"
start_job client_static "$D"
rc=0
CULEAK_GDB=$STEP_GDB ATTACH_ELSEWHERE=2147483000 timeout 120 "$B/culeak" record --pid "$job" \
    -o "$D/rec.culeak" 2>"$D/rec.err" || rc=$?
[ "$rc" -eq 1 ] || fail "gdb attached elsewhere: record exited $rc: $(cat "$D/rec.err")"
grep -q "could not attach to pid $job: ptrace: No such process" "$D/rec.err" ||
    fail "gdb attached elsewhere: $(cat "$D/rec.err")"
finish_job "$D"
check_job_output client_static "$D"

# the shim cannot be loaded: dlopen's words, and nothing called in the job
D=$T/no-shim
mkdir "$D"
start_job client_static "$D"
printf 'not a library\n' >"$D/libculeak.so"
rc=0
CULEAK_LIB=$D/libculeak.so timeout 120 "$B/culeak" record --pid "$job" -o "$D/rec.culeak" 2>"$D/rec.err" || rc=$?
[ "$rc" -eq 1 ] || fail "no shim: record exited $rc: $(cat "$D/rec.err")"
grep -q "the debugger could not load $D/libculeak.so into pid $job: .*" "$D/rec.err" ||
    fail "no shim: $(cat "$D/rec.err")"
not_stopped "no shim"
finish_job "$D"
check_job_output client_static "$D"

# another process connects first (the debugger): refused, the job's stream recorded
D=$T/intruder
mkdir "$D"
start_job client_static "$D"
CULEAK_GDB=$STEP_GDB INTRUDE=1 timeout 120 "$B/culeak" record --pid "$job" -o "$D/rec.culeak" 2>"$D/rec.err" &
rec=$!
wait_attached "$D/rec.err" "$job"
end=$((SECONDS + WAIT_S))
until grep -aq "before attach: [0-9]* allocation" "$D/rec.culeak" 2>/dev/null; do
    kill -0 "$rec" 2>/dev/null || fail "an intruder: record ended before the job's inventory came: $(cat "$D/rec.err")"
    [ "$SECONDS" -lt "$end" ] || fail "an intruder: no inventory of the job in the recording"
    sleep 0.05
done
finish_job "$D"
rc=0
wait "$rec" || rc=$?
[ "$rc" -eq 0 ] || fail "an intruder: record exited $rc: $(cat "$D/rec.err")"
"$B/culeak" report "$D/rec.culeak" | grep -q "^LEAK SUMMARY: 36864 bytes leaked in 3 allocations" ||
    fail "an intruder: the recording is not the job's: $(head -c 300 "$D/rec.culeak" | od -c | head -3)"
check_job_output client_static "$D"

echo "attach_injector: ok"
