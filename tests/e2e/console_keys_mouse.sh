#!/usr/bin/env bash
# htop's habits end to end in tmux: the key bar on the last line, < > I and F6 sort the
# table, F5 groups, F3 starts a search, F10 quits; the mouse as ncurses reads it from the
# terminal (SGR mouse reports, as a terminal sends them; tmux passes them to the pane): a
# click on a column title sorts by it, on a row selects it, again lists its stack, the
# wheel scrolls the output pane, a click on the key bar presses its key; `set mouse off`
# gives the mouse back to the terminal; NO_COLOR draws without colour.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static

# The job: 3 MiB at one line, 4 KiB at another, 60 lines of output, then waits for $T/stop.
cat >"$T/job.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

typedef int (*fn)();
int main(int argc, char **argv)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
    fn init = (fn)dlsym(cuda, "cuInit"), get = (fn)dlsym(cuda, "cuDeviceGet"),
       retain = (fn)dlsym(cuda, "cuDevicePrimaryCtxRetain"), current = (fn)dlsym(cuda, "cuCtxSetCurrent"),
       alloc = (fn)dlsym(cuda, "cuMemAlloc_v2");
    int dev;
    void *ctx;
    unsigned long long d;
    if (argc < 2 || init(0) || get(&dev, 0) || retain(&ctx, dev) || current(ctx))
        return 1;
    for (int i = 0; i < 3; i++)
        if (alloc(&d, (size_t)1 << 20)) /* BIG */
            return 1;
    if (alloc(&d, (size_t)4096)) /* SMALL */
        return 1;
    for (int i = 0; i < 60; i++)
        printf("job line %d\n", i);
    fflush(stdout);
    while (access(argv[1], F_OK) != 0)
        usleep(20000);
    return 0;
}
C
cc -g -O0 -o "$T/job" "$T/job.c" -ldl || fail "cannot build the job"
SMALL=job.c:$(grep -n "SMALL" "$T/job.c" | cut -d: -f1)
flag() { tmux display -p -t "$S" "#{mouse_sgr_flag}#{mouse_standard_flag}"; }
flag_is() { [ "$(flag)" = "$1" ]; }
# click Y X: a left press at screen line Y, column X (1-based), as an SGR mouse report
click() { tmux send-keys -t "$S" -l $'\e'"[<0;$2;$1M"; tmux send-keys -t "$S" -l $'\e'"[<0;$2;$1m"; }
wheel() { tmux send-keys -t "$S" -l $'\e'"[<$3;$2;$1M"; } # Y X 64 (up) | 65 (down)
# at TEXT: "Y X" of the first place TEXT is on the screen (1-based)
at() { screen | awk -v t="$1" '{ i = index($0, t); if (i) { print NR, i; exit } }'; }
# title WORD: "Y X" of WORD in the table's column titles
title() { screen | awk -v t=" $1 " '/^ +id +/ { i = index($0, t); if (i) { print NR, i + 1; exit } }'; }
# Each action waits for what it should bring, which must not be on the screen before it
# (a wait that could match the screen before the action passes before the console even
# read it, and the next action then meets a state the test did not mean).
fresh() { ! on_screen "$1" || fail "'$1' is on the screen before the action meant to bring it: wait for something new"; }
# key_expect KEY TEXT: presses KEY (a tmux key name), waits for TEXT
key_expect() { fresh "$2"; tmux send-keys -t "$S" "$1"; wait_for "$2"; }
# click_expect Y X TEXT: a click at Y X, then waits for TEXT
click_expect() { fresh "$3"; click "$1" "$2"; wait_for "$3"; }
# at_wait TEXT: "Y X" of TEXT once it is on the screen
at_wait() { wait_for "$1"; at "$1"; }

rm -f "$T/stop"
start -- "$T/job" "$T/stop"
wait_for "job line 59"
wait_for "$SMALL"
until_deadline eval 'screen | tail -n 1 | grep -qE "^F1Help +F3Search +F5Group +F6Sort +F9Kill +F10Quit"' ||
    fail "no key bar on the last line"

# single keys on an empty prompt, and F6
key_expect ">" "sorted by count, largest first"
key_expect "<" "sorted by live, largest first"
key_expect "I" "sorted by live, smallest first"
key_expect "I" "sorted by live, largest first"
key_expect F6 "sorted by count, largest first"
key_expect F5 "grouped by function"
type_expect "group site" "grouped by site"
tmux send-keys -t "$S" F3
until_deadline eval 'screen | tail -n 2 | head -n 1 | grep -q "^(culeak) /$"' || fail "F3 should start a search (/)"
fresh "scrolled back"
tmux send-keys -t "$S" -l "line 42"
tmux send-keys -t "$S" Enter
wait_for "scrolled back"

# the mouse: ncurses asked the terminal for SGR reports
until_deadline eval 'flag_is 11' || fail "the console should ask for the mouse (sgr+button flags: $(flag))"
read -r y x < <(title live)
click_expect "$y" $((x + 1)) "sorted by live, largest first"
click_expect "$y" $((x + 1)) "sorted by live, smallest first" # the sorted column again: the other way
read -r y x < <(title count)
click_expect "$y" $((x + 1)) "sorted by count, largest first"
read -r y x < <(at_wait "$SMALL")
click_expect "$y" "$x" "stack of #3 main at" # the selection moved: the stack pane shows it
click_expect "$y" "$x" "its stack is in the output pane"
wait_for "(culeak) show " # a click on the selected row runs show
# show brought the output pane to its newest line; the wheel over it scrolls it
wait_gone "scrolled back"
read -r oy _ < <(at_wait " output ")
wheel $((oy + 2)) 5 64
wait_for "scrolled back 3 of"
wheel $((oy + 2)) 5 65
wait_gone "scrolled back"
# a click on the key bar presses the key
read -r ky kx < <(at_wait "F10Quit")
click_expect "$ky" $((kx + 3)) "will be killed. Quit anyway? (y or n)"
type_expect "n" "Not confirmed."
# set mouse off: the terminal is told so (and on again)
type_expect "set mouse off" "mouse off: the terminal selects text again"
until_deadline eval 'flag_is 00' || fail "set mouse off should turn the terminal's mouse reports off ($(flag))"
type_expect "set mouse on" "mouse on: click a column title"
until_deadline eval 'flag_is 11' || fail "set mouse on should turn them on again ($(flag))"
touch "$T/stop"
wait_for "EXITED (status 0)"
# colours: the title and growth are drawn in colour
colours() { tmux capture-pane -p -e -t "$S" | grep -cE $'\e\\[([0-9;]*;)?(3[0-7]|4[0-7]|38|48)(;[0-9;]*)?m'; }
[ "$(colours)" -gt 0 ] || fail "the console should draw in colour without NO_COLOR"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"

# NO_COLOR: the same screen without a colour
ENVS="$ENVS NO_COLOR=1"
rm -f "$T/stop"
start -- "$T/job" "$T/stop"
wait_for "job line 59"
wait_for "$SMALL"
touch "$T/stop"
wait_for "EXITED (status 0)"
[ "$(colours)" -eq 0 ] || { tmux capture-pane -p -e -t "$S" | cat -v | head; fail "NO_COLOR=1: no colour should be drawn"; }
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
echo "console keys and mouse e2e ok"
