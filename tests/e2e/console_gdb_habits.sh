#!/usr/bin/env bash
# gdb's breakpoint habits end to end in tmux on the fake driver: tbreak pauses once and is
# gone, condition N and ignore N COUNT change a breakpoint after it was set, commands N ...
# end run at each pause (a snapshot, then continue: the job goes on unattended), save
# breakpoints writes them as commands that -x reads back to the same effect, and info
# alone lists what it describes.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static

# The job: one allocation freed at once, waits for $T/go, then leaks 10 blocks of 1 MiB at
# the line marked LEAK.
cp "$(dirname "$0")/c/gated_leak.c" "$T/job.c"
cc -g -O0 -o "$T/job" "$T/job.c" -ldl || fail "cannot build the job"
LEAK=job.c:$(grep -n "LEAK" "$T/job.c" | cut -d: -f1)
# the screen's lines after the last one holding TEXT (the answer to the last command)
after_last() { screen | awk -v t="$1" 'index($0, t) { n = 0; delete a; next } { a[++n] = $0 } END { for (i = 1; i <= n; i++) print a[i] }'; }
gated_leak() {
    rm -f "$T/go"
    start "$@" -- "$T/job" "$T/go"
    wait_for "1 proc (1 live)"
}
# What both runs must show once the job is let go: tbreak 1 pauses at the first block and
# is deleted; breakpoint 2 (live > 5 MiB, its first 2 pauses ignored) pauses at 8, 9 and
# 10 MiB, where its commands take a snapshot and continue without anyone typing.
unattended() {
    touch "$T/go"
    wait_for "PAUSED in cuMemAlloc_v2(1.00 MiB) - breakpoint 1 (hit 1)"
    type_expect "info breakpoints" "1 breakpoint listed in the output pane"
    after_last "(culeak) info breakpoints" | grep -qE "^1 " && fail "tbreak 1 should be gone once it paused"
    type_expect "continue" "EXITED (status 0)"
    type_expect "snapshots" "3 snapshots listed in the output pane"
    for s in "s1 +8.00 MiB live in 8 " "s2 +9.00 MiB live in 9 " "s3 +10.0 MiB live in 10 "; do
        screen | grep -qE "^  $s" || fail "breakpoint 2's commands should have taken snapshot $s"
    done
    type_expect "info breakpoints" "1 breakpoint listed in the output pane"
    after_last "(culeak) info breakpoints" | grep -qE "^2 +y +5  live > 5.00 MiB +$LEAK\$" ||
        fail "info breakpoints: live > 5MiB is hit at 6..10 MiB (5 hits; 2 ignored)"
    screen | grep -qE "^        snapshot\$" || fail "info breakpoints lists breakpoint 2's commands"
    type_line "quit"
    wait_for "CONSOLE-DONE rc=0"
}

# 1. typed at the prompt, then saved
gated_leak
type_expect "tbreak $LEAK" "temporary breakpoint 1 at $LEAK when any allocation"
type_expect "break $LEAK" "breakpoint 2 at $LEAK when any allocation"
type_expect "condition 2 live > 5MiB" "breakpoint 2 pauses when live > 5.00 MiB"
type_expect "ignore 2 2" "will ignore next 2 crossings of breakpoint 2"
type_expect "commands 2" "commands for breakpoint 2, one a line; end to finish"
on_screen "End with a line saying just \"end\"." || fail "commands should say how the list ends"
type_line "snapshot"
wait_for ">snapshot"
type_line "continue"
wait_for ">continue"
type_expect "end" "breakpoint 2 runs these commands when it pauses the job"
type_expect "info" "info breakpoints|marks|processes|snapshots"
for sub in breakpoints marks processes snapshots; do
    on_screen "  info $sub" || fail "info alone should list info $sub"
done
type_expect "save breakpoints $T/bps" "saved 2 breakpoints to $T/bps"
unattended
cat >"$T/want" <<W
# culeak breakpoints: culeak -x FILE sets them again
tbreak $LEAK
break $LEAK live > 5242880
ignore \$bpnum 2
commands \$bpnum
  snapshot
  continue
end
W
diff -u "$T/want" "$T/bps" || fail "save breakpoints wrote something else"

# 2. the same breakpoints read back with -x: the same unattended run
gated_leak -x "$T/bps"
type_expect "info breakpoints" "2 breakpoints listed in the output pane"
screen | grep -qE "^1 +y +0  any allocation +$LEAK \(temporary" || fail "-x should set tbreak 1 again"
screen | grep -qE "^        ignore next 2 hits\$" || fail "-x should set breakpoint 2's ignore count again"
unattended
echo "console gdb habits e2e ok"
