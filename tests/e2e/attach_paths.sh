#!/usr/bin/env bash
# record --pid and the console (culeak attach) take one attach path (tmux, fake driver):
#  1-2. a process that never hands its ring over: CULEAK_GDB names a stand-in that answers
#       every step of the injection as gdb would but loads nothing; each waits --timeout
#       seconds for the ring, then says the process did not connect and exits 1 (the
#       console never opens on a process it cannot read); the job runs on, untouched;
#  3.   CULEAK_ATTACH_TIMING=1: the console says what the attach cost, as record does.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static
. "$ROOT/tests/e2e/attach/job.sh"
attach_console_setup # culeak's own injector for 3: no gdb on the console's PATH
fake=$T/fake-gdb
cat >"$fake" <<'SH'
#!/usr/bin/env bash
# gdb's answers to culeak's steps (inject.c), with nothing done
while IFS= read -r line; do
    case $line in
    "attach "*) echo "Attaching to process ${line#attach }" ;;
    'printf "CULEAK-H'*) echo "CULEAK-H 1" ;;
    'printf "CULEAK-R'*) echo "CULEAK-R 1" ;;
    'echo \nCULEAK-DONE '*) name=${line#'echo \nCULEAK-DONE '}; printf '\nCULEAK-DONE %s\n' "${name%'\n'}" ;;
    quit) exit 0 ;;
    esac
done
SH
chmod +x "$fake"

# 1. record --pid
D=$T/record
mkdir "$D"
start_job client_static "$D"
rc=0
env CULEAK_GDB="$fake" XDG_RUNTIME_DIR="$T/run" "$B/culeak" record --pid "$job" --timeout 1 -o "$D/rec.culeak" \
    2>"$D/rec.err" || rc=$?
[ "$rc" -eq 1 ] || fail "record exited $rc, want 1: $(cat "$D/rec.err")"
grep -q "culeak record: pid $job did not connect after the attach" "$D/rec.err" || fail "record: $(cat "$D/rec.err")"
[ ! -e "$D/rec.culeak" ] || fail "record left a recording"
finish_job "$D"
check_job_output client_static "$D"

# 2. the console
D=$T/console
mkdir "$D"
start_job client_static "$D"
base_envs=$ENVS
ENVS="$base_envs CULEAK_GDB=$fake"
start attach --timeout 1 "$job"
wait_for "CONSOLE-DONE rc=1"
on_screen "culeak attach: pid $job did not connect after the attach" || fail "the console did not say why"
finish_job "$D"
check_job_output client_static "$D"

# 3. the attach's figures in the output pane
D=$T/timing
mkdir "$D"
start_job client_static "$D"
ENVS="$base_envs CULEAK_ATTACH_TIMING=1"
start attach "$job"
wait_for "process $job connected"
wait_for "the attach took"
on_screen "was stopped" || fail "the console did not say how long the thread was stopped"
type_line "detach"
wait_for "CONSOLE-DONE rc=0"
finish_job "$D"
check_job_output client_static "$D"
job=
echo "attach_paths: ok"
