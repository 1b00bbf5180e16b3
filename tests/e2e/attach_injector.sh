#!/usr/bin/env bash
# culeak record --pid when the injector goes wrong (fake driver); the job is never left
# stopped or changed: it ends with its own status (7) and output each time.
# culeak's own injector (gdb not on PATH):
#  - the shim cannot be loaded (CULEAK_LIB names no library): record says dlopen's words,
#    the job never calls into it;
#  - the library loaded crashes in its constructor: record says where, the thread is given
#    back its state and the job runs on;
#  - the library loaded ends the process: record says the job exited during the attach;
#  - a stopped process (state T) is refused, naming the fix;
#  - CULEAK_GDB names no program: refused, naming the fix.
# gdb when CULEAK_GDB names it (the cases run where the machine has a gdb):
#  - the injector dead with the job left in a stop: the job is made to run;
#  - gdb cannot attach (the process it was told is gone): record says what gdb said;
#  - the shim cannot be loaded: record says dlopen's words;
#  - a call fails: record says gdb's first error, not the ones that follow from it;
#  - another process connects to culeak's socket first: culeak records the attached one.
set -u
. "$(dirname "$0")/attach/job.sh"
attach_test_setup
export XDG_RUNTIME_DIR=$T # a killed culeak leaves its socket's directory there


# record_refused WHAT PATTERN [VAR=VALUE...]: record --pid on the job ($job), with those
# variables, exits 1 and says PATTERN (a grep pattern; none when empty) on stderr
record_refused() {
    local what=$1 pattern=$2 rc=0
    shift 2
    env "$@" timeout 120 "$B/culeak" record --pid "$job" -o "$D/rec.culeak" 2>"$D/rec.err" || rc=$?
    [ "$rc" -eq 1 ] || fail "$what: record exited $rc: $(cat "$D/rec.err")"
    [ -z "$pattern" ] || grep -q "$pattern" "$D/rec.err" || fail "$what: $(cat "$D/rec.err")"
}
# the shim cannot be loaded: dlopen's words, and nothing called in the job
D=$T/no-shim
mkdir "$D"
start_job client_static "$D"
printf 'not a library\n' >"$D/libculeak.so"
record_refused "no shim" "culeak could not load $D/libculeak.so into pid $job: $D/libculeak.so: .*" \
    "CULEAK_LIB=$D/libculeak.so"
not_stopped "no shim"
finish_job "$D"
check_job_output client_static "$D"

# a library that crashes as it loads (its constructor writes to address 8)
D=$T/crash
mkdir "$D"
printf '__attribute__((constructor)) static void boom(void) { *(volatile int *)8 = 1; }\n' >"$D/boom.c"
cc -shared -fPIC -o "$D/libculeak.so" "$D/boom.c" || fail "cannot build the crashing library"
start_job client_static "$D"
record_refused "a crashing library" "dlopen failed in pid $job: Segmentation fault at address 0x[0-9a-f]* (the thread was given back its state)" \
    "CULEAK_LIB=$D/libculeak.so"
not_stopped "a crashing library"
finish_job "$D"
check_job_output client_static "$D"

# a library that ends the process as it loads
D=$T/exits
mkdir "$D"
printf '#include <unistd.h>\n__attribute__((constructor)) static void bye(void) { _exit(3); }\n' >"$D/bye.c"
cc -shared -fPIC -o "$D/libculeak.so" "$D/bye.c" || fail "cannot build the exiting library"
start_job client_static "$D"
record_refused "an exiting library" "pid $job exited during the attach" \
    "CULEAK_LIB=$D/libculeak.so"
job_rc=0
wait "$job" || job_rc=$?
job=
[ "$job_rc" -eq 3 ] || fail "an exiting library: the job exited $job_rc, not the library's 3"

# a stopped process: refused, and left stopped as it was
D=$T/stopped-job
mkdir "$D"
start_job client_static "$D"
kill -STOP "$job"
record_refused "a stopped job" "culeak record: pid $job is stopped (state T): .* resume it (kill -CONT $job), then attach"
[ "$(sed 's/.*) \(.\).*/\1/' "/proc/$job/stat")" = T ] || fail "a stopped job was made to run"
kill -CONT "$job"
finish_job "$D"
check_job_output client_static "$D"

# CULEAK_GDB names no program
D=$T/no-gdb
mkdir "$D"
start_job client_static "$D"
record_refused "CULEAK_GDB unknown" "CULEAK_GDB names culeak-no-such-gdb, which cannot be run: .*unset CULEAK_GDB to use culeak's own injector" \
    "CULEAK_GDB=culeak-no-such-gdb"
finish_job "$D"
check_job_output client_static "$D"

if [ -z "$REAL_GDB" ]; then
    echo "attach_injector: the CULEAK_GDB cases need gdb, which this machine lacks: not run"
    echo "attach_injector: ok"
    exit 0
fi

# the injector dies and leaves the job stopped (untraced): culeak makes it run
D=$T/stopped
mkdir "$D"
start_job client_static "$D"
record_refused "left stopped" "" \
    "CULEAK_GDB=$STEP_GDB" "STOP_AT=dlopen"
not_stopped "the injector dead with the job stopped"
finish_job "$D"
check_job_output client_static "$D"

# gdb fails to attach (told another pid, which does not exist): its words, no next step
D=$T/no-attach
mkdir "$D"
start_job client_static "$D"
record_refused "gdb attached elsewhere" "could not attach to pid $job: ptrace: No such process" \
    "CULEAK_GDB=$STEP_GDB" "ATTACH_ELSEWHERE=2147483000"
finish_job "$D"
check_job_output client_static "$D"

# gdb cannot load the shim: dlopen's words (CULEAK-ERR), no start step
D=$T/gdb-no-shim
mkdir "$D"
start_job client_static "$D"
printf 'not a library\n' >"$D/libculeak.so"
record_refused "gdb, no shim" "could not load $D/libculeak.so into pid $job: $D/libculeak.so: .*(unset CULEAK_GDB to use culeak's own injector)" \
    "CULEAK_GDB=$STEP_GDB" "CULEAK_LIB=$D/libculeak.so"
not_stopped "gdb, no shim"
finish_job "$D"
check_job_output client_static "$D"

# gdb's first error, not its last: a call of a function that does not exist (then the
# result compared is void: 'Invalid type combination in equality test.')
D=$T/first-error
mkdir "$D"
start_job client_static "$D"
record_refused "gdb's call failing" "" \
    "CULEAK_GDB=$STEP_GDB" "BREAK_DLOPEN=1"
grep -q "could not load .* into pid $job: No symbol \"culeak_no_such_function\" in current context. (unset CULEAK_GDB to use culeak's own injector)" \
    "$D/rec.err" || fail "gdb's call failing: not its first error: $(cat "$D/rec.err")"
not_stopped "gdb's call failing"
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
