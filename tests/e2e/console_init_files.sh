#!/usr/bin/env bash
# The init files end to end in tmux, as gdb reads its own: $XDG_CONFIG_HOME/culeak/init at
# start; ./.culeakinit only from a directory that init trusts (set auto-load safe-path),
# else a warning that says how to trust it; -nx reads neither, for `culeak -- PROGRAM` and
# `culeak open` alike; -ex runs after them.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static

mkdir -p "$T/config/culeak" "$T/trusted/proj" "$T/elsewhere"
cat >"$T/config/culeak/init" <<I
# the user's own
break from_home
set auto-load safe-path $T/trusted
I
echo "break from_local" >"$T/trusted/proj/.culeakinit"
echo "break from_local" >"$T/elsewhere/.culeakinit"
# in DIR ARGS...: the console on a job that waits for $T/stop, started in DIR
in_dir() {
    local dir=$1
    shift
    cd "$dir" || fail "no $dir"
    start "$@" -- "$FAKE/client_static" until "$T/stop" 100000
    cd - >/dev/null || exit 1
    wait_for "RUNNING"
}
done_run() {
    type_line "quit"
    wait_for "(y or n)"
    type_line "y"
    wait_for "CONSOLE-DONE"
}

# 1. a trusted directory: both files, the home one first, then -ex
in_dir "$T/trusted/proj" -ex "'break from_ex'"
type_expect "info breakpoints" "3 breakpoints listed in the output pane"
screen | grep -qE "^1 .*from_home" || fail "the home init's breakpoint should be 1"
screen | grep -qE "^2 .*from_local" || fail "./.culeakinit of a trusted directory should be read, after the home init"
screen | grep -qE "^3 .*from_ex" || fail "-ex should run after the init files"
done_run

# 2. elsewhere: the home init only, and how to trust the directory
in_dir "$T/elsewhere"
wait_for "its directory is not trusted (see the output pane)"
joined() { screen | tr -d '\n' | grep -qF -- "$1"; }  # the pane wraps long lines
joined "[culeak] $T/elsewhere/.culeakinit was not read: $T/elsewhere is not in the auto-load safe-path" ||
    fail "the output pane should say which file was not read and why"
joined "add the line 'set auto-load safe-path $T/elsewhere' to $T/config/culeak/init" ||
    fail "the output pane should say how to trust the directory"
type_expect "info breakpoints" "1 breakpoint listed in the output pane"
screen | grep -qE "^1 .*from_home" || fail "the home init should still be read"
done_run

# 3. -nx: neither
in_dir "$T/trusted/proj" -nx
type_expect "info breakpoints" "no breakpoints"
done_run

# 4. culeak open reads them too, and takes -nx
# shellcheck disable=SC2086 # ENVS is a list of assignments
env $ENVS "$B/culeak" record -o "$T/rec.culeak" -- "$FAKE/client_static" growth 5 1000 >"$T/rec.out" 2>&1 ||
    { cat "$T/rec.out"; fail "cannot record a job"; }
cd "$T/trusted/proj" || exit 1
tmux kill-session -t "$S" 2>/dev/null
tmux new-session -d -s "$S" -x 120 -y 40 \
    "env $ENVS $B/culeak open -nx $T/rec.culeak; printf '\\r\\nCONSOLE-DONE rc=%s\\r\\n' \$?; sleep 600"
cd - >/dev/null || exit 1
wait_for "RECORDING"
type_expect "info breakpoints" "no breakpoints"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
cd "$T/trusted/proj" || exit 1
tmux kill-session -t "$S" 2>/dev/null
tmux new-session -d -s "$S" -x 120 -y 40 \
    "env $ENVS $B/culeak open $T/rec.culeak; printf '\\r\\nCONSOLE-DONE rc=%s\\r\\n' \$?; sleep 600"
cd - >/dev/null || exit 1
wait_for "RECORDING"
type_expect "info breakpoints" "2 breakpoints listed in the output pane"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
echo "console init files e2e ok"
