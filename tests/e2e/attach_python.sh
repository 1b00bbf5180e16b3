#!/usr/bin/env bash
# culeak's own injector on Python jobs, gdb not on PATH: one sleeping in time.sleep (the
# main thread borrowed in clock_nanosleep), one computing in a loop (the main thread
# borrowed wherever it runs), each attached by record --pid and detached 20 times at random
# moments. Neither raises an exception nor sees an early sleep or a wrong sum; each exits 0
# with the output of an untraced run.
set -u
. "$(dirname "$0")/attach/job.sh"
attach_test_setup
ATTACHES=${ATTACHES:-20}
JOB=$ROOT/tests/e2e/python/attach_victim.py
RANDOM=11
for mode in sleep busy; do
    D=$T/$mode-plain
    mkdir "$D"
    python3 "$JOB" "$mode" "$D" >"$D/out" 2>"$D/err" &
    job=$!
    sleep 0.5
    touch "$D/end"
    rc=0
    wait "$job" || rc=$?
    job=
    [ "$rc" -eq 0 ] || fail "$mode, untraced: exited $rc: $(cat "$D/out" "$D/err")"

    D=$T/$mode
    mkdir "$D"
    python3 "$JOB" "$mode" "$D" >"$D/out" 2>"$D/err" &
    job=$!
    until grep -qs running "$D/out"; do sleep 0.05; done
    attach_many "$mode" "$D" "$ATTACHES"
    end_job "$mode" "$D" "$T/$mode-plain/out"
    echo "$mode: $ATTACHES attaches; attach time $(cut -d' ' -f1 "$D/timing" | timing_stats);" \
        "stopped $(cut -d' ' -f2 "$D/timing" | timing_stats); $(cat "$D/turns") turns"
done
echo "attach_python: ok"
