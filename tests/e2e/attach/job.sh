# Helpers of the attach tests, sourced (no #! line: tests/run.sh passes it over).
#   attach_test_setup          (scripts without the tmux harness) sources lib.sh (ROOT, B,
#                              T, fail, at_exit) and sets STEP_GDB (the stepping gdb
#                              stand-in, tests/e2e/attach/gdb_step.py, which runs $REAL_GDB:
#                              gdb where the machine has one, else empty), and a trap that
#                              kills the job ($job) and removes T at exit; then hides gdb
#                              (a PATH without it): culeak's own injector needs none
#   attach_console_setup       (scripts with the tmux harness, sourced after it) a trap that
#                              kills the job ($job) and cleans up at exit, and gdb hidden
#                              from culeak's PATH and the console's (ENVS)
#   path_without_gdb DIR       PATH with each directory holding gdb or cuda-gdb replaced by
#                              one of links (made under DIR) to all its other programs
#   wait_attached FILE PID     waits until record's stderr FILE says it attached to PID
#   not_stopped WHAT           fails when the job is left in a stop (T/t)
#   start_job CLIENT DIR       runs the fake driver's CLIENT `attach 4 DIR` without culeak,
#                              in the background ($job: its pid), and waits for DIR/ready
#   finish_job DIR             lets it leak (DIR/go), waits for DIR/leaked, lets it end
#                              (DIR/end), waits for it: $job_rc is its exit status
#   leak_line FILE             the line of FILE marked ATTACH_LEAK_LINE
#   attach_many WHAT DIR N     attaches record --pid to the job ($job) and detaches it N times
#                              at random moments (RANDOM seeds them); each must end 0 with
#                              its detach said, the job alive and silent; DIR/timing gets
#                              each attach's figures
#   wait_inventory RECORDING   waits until the shim has sent what was live before the
#                              attach (its NOTE is in the recording); fails at once if
#                              the job ($job) died
# The job writes its stdout to DIR/out and its stderr to DIR/err. CULEAK_E2E_SHIM: the shim
# loaded into the job comes from another (plain) build, as in tmux_harness.sh. Each wait
# of these tests fails after $WAIT_S seconds, 60 unless set (as tmux_harness.sh's).
WAIT_S=${WAIT_S:-60}
[ -n "${CULEAK_E2E_SHIM:-}" ] && export CULEAK_LIB=$CULEAK_E2E_SHIM
attach_test_setup() {
    . "$(dirname "$0")/lib.sh"
    job=
    at_exit '[ -n "$job" ] && kill -9 "$job" 2>/dev/null'
    STEP_GDB=$ROOT/tests/e2e/attach/gdb_step.py
    REAL_GDB=$(command -v gdb || true)
    export REAL_GDB
    PATH=$(path_without_gdb "$T/path")
    ! command -v gdb >/dev/null || fail "gdb is still on PATH: $(command -v gdb)"
}
attach_console_setup() {
    job=
    trap '[ -n "$job" ] && kill -9 "$job" 2>/dev/null; cleanup' EXIT
    PATH=$(path_without_gdb "$T/path")
    ENVS="$ENVS PATH=$PATH"
    ! command -v gdb >/dev/null || fail "gdb is still on PATH"
}
path_without_gdb() {
    local dir out="" i=0 IFS=:
    for dir in $PATH; do
        if [ -e "$dir/gdb" ] || [ -e "$dir/cuda-gdb" ]; then
            i=$((i + 1))
            mkdir -p "$1/$i"
            ln -s "$dir"/* "$1/$i/" 2>/dev/null # one ln for all: thousands of programs
            rm -f "$1/$i/gdb" "$1/$i/cuda-gdb"
            dir=$1/$i
        fi
        out=${out:+$out:}$dir
    done
    echo "$out"
}
wait_attached() {
    local end=$((SECONDS + WAIT_S))
    until grep -qs "attached to pid $2" "$1"; do
        [ "$SECONDS" -lt "$end" ] || fail "record never attached: $(cat "$1")"
        sleep 0.05
    done
}
not_stopped() {
    local s
    s=$(sed 's/.*) \(.\).*/\1/' "/proc/$job/stat" 2>/dev/null)
    case "$s" in T|t) fail "$1: the job is left stopped (state $s)";; esac
}
start_job() {
    LD_LIBRARY_PATH=$B/fakecuda "$B/fakecuda/$1" attach 4 "$2" >"$2/out" 2>"$2/err" &
    job=$!
    local end=$((SECONDS + WAIT_S))
    until [ -e "$2/ready" ]; do
        [ "$SECONDS" -lt "$end" ] || fail "the job never got ready"
        sleep 0.05
    done
}
wait_file_exists() {
    local end=$((SECONDS + WAIT_S))
    until [ -e "$1" ]; do
        [ "$SECONDS" -lt "$end" ] || fail "$1 never appeared"
        sleep 0.05
    done
}
finish_job() {
    touch "$1/go"
    wait_file_exists "$1/leaked"
    touch "$1/end"
    job_rc=0
    wait "$job" || job_rc=$?
}
# the job runs (a zombie, not yet waited for, has ended)
job_alive() {
    local s
    s=$(sed 's/.*) \(.\).*/\1/' "/proc/$job/stat" 2>/dev/null) && [ "$s" != Z ]
}
wait_inventory() {
    local end=$((SECONDS + WAIT_S))
    until grep -aq "before attach: [0-9]* allocation" "$1" 2>/dev/null; do
        [ -z "${job:-}" ] || job_alive || fail "the job died before its inventory was sent: $(cat "/proc/$job/stat" 2>/dev/null)"
        [ "$SECONDS" -lt "$end" ] || fail "no before-attach inventory in $1"
        sleep 0.05
    done
}
leak_line() { grep -n 'ATTACH_LEAK_LINE' "$ROOT/$1" | head -n 1 | cut -d: -f1; }
# the job's own output, whole, and nothing of culeak's in it
check_job_output() {
    local client=$1 dir=$2
    [ "$job_rc" -eq 7 ] || fail "$client: the job exited $job_rc, want its own 7: $(cat "$dir/out" "$dir/err")"
    grep -q "^$client attach ready .*live_bytes=36864" "$dir/out" || fail "$client: output lost: $(cat "$dir/out")"
    grep -q "^$client attach leaked live_bytes=69632" "$dir/out" || fail "$client: output lost: $(cat "$dir/out")"
    grep -q "^$client attach ok" "$dir/out" || fail "$client: output lost: $(cat "$dir/out")"
    [ ! -s "$dir/err" ] || fail "$client: the job's stderr got: $(cat "$dir/err")"
}
# attach_timing ERRFILE TIMING: appends "ATTACH_MS STOP_MS" that record --pid said (with
# CULEAK_ATTACH_TIMING=1) in ERRFILE to TIMING
attach_timing() {
    sed -n 's/.*the attach took \([0-9.]*\) ms; thread [0-9]* was stopped \([0-9.]*\) ms.*/\1 \2/p' "$1" >>"$2"
}
# timing_stats: "median M ms, max X ms" of the numbers on stdin
timing_stats() { sort -n | awk '{v[NR] = $1} END {printf "median %.3f ms, max %.3f ms", v[int((NR + 1) / 2)], v[NR]}'; }
# end_job WHAT DIR: lets the job ($job) end (DIR/end) and waits for it; fails unless it
# exited 0 with nothing on its stderr (DIR/err) and printed what the untraced run PLAIN did
#   end_job WHAT DIR PLAIN_OUT
end_job() {
    local what=$1 dir=$2 plain=$3 end rc=0
    touch "$dir/end"
    end=$((SECONDS + WAIT_S))
    while job_alive; do
        [ "$SECONDS" -lt "$end" ] || fail "$what: the job did not end: $(head -c 2000 "$dir/err")"
        sleep 0.05
    done
    wait "$job" || rc=$?
    job=
    [ "$rc" -eq 0 ] || fail "$what: the job exited $rc after $ATTACHES attaches: $(cat "$dir/out" "$dir/err")"
    [ ! -s "$dir/err" ] || fail "$what: the job's stderr got: $(cat "$dir/err")"
    diff "$plain" "$dir/out" >"$dir/out.diff" || fail "$what: the output differs from an untraced run's: $(cat "$dir/out.diff")"
}
attach_many() {
    local what=$1 dir=$2 n=$3 i rc rec
    : >"$dir/timing"
    for i in $(seq "$n"); do
        sleep "0.0$((RANDOM % 10))"
        # a file of its own: the last one's words must not be taken for this one's
        CULEAK_ATTACH_TIMING=1 "$B/culeak" record --pid "$job" -o "$dir/rec$i.culeak" 2>"$dir/rec$i.err" &
        rec=$!
        wait_attached "$dir/rec$i.err" "$job"
        sleep "0.0$((RANDOM % 5))"
        kill -INT "$rec"
        rc=0
        wait "$rec" || rc=$?
        [ "$rc" -eq 0 ] || fail "$what, attach $i: record exited $rc: $(cat "$dir/rec$i.err")"
        grep -q "detached from pid $job: it runs on" "$dir/rec$i.err" || fail "$what, attach $i: $(cat "$dir/rec$i.err")"
        attach_timing "$dir/rec$i.err" "$dir/timing"
        job_alive || fail "$what, attach $i: the job died: $(cat "$dir/err")"
        [ ! -s "$dir/err" ] || fail "$what, attach $i: the job complained: $(head -c 2000 "$dir/err")"
        rm -f "$dir/rec$i.culeak"
    done
}
