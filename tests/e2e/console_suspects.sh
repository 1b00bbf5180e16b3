#!/usr/bin/env bash
# Growth suspects in the console, on the fake driver: a job with marks where one site
# grows, one churns and one goes up and down. The header gains a suspects line naming one
# site and, while the job runs, its forecast; `suspects` lists only the growing site with
# its growth per iteration, since when, the forecast and its stack; help and Tab completion know the command; a job
# with too few marks has no suspects line and the command says why.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static

# 1. thirty iterations of 50 ms; 16 KiB kept per iteration on a 1 GiB device. A breakpoint
# pauses the job once the site holds more than 300 KiB (19 iterations in): while it runs the
# header forecasts when the site fills the device: (1 GiB - 320 KiB) / 16 KiB = 65,516
# iterations at the 18th mark
ENVS="$ENVS FAKECUDA_MEM_BYTES=1073741824"
start -ex "'break grow_step live > 300KiB'" -- "$FAKE/client_static" growth 30 50000
wait_for "PAUSED"
wait_for " suspects: 1 site grows +16.0 KiB/iteration; it fills device 0 in ~"
screen | grep -Eq "it fills device 0 in ~6[56],000 iterations \(~[0-9]+ min\) - \`suspects\` lists them" ||
    fail "the forecast, in iterations and minutes"
type_line "delete 1"
type_line "continue"
wait_for "EXITED (status 0)"
# the exit's leak report first: printed after the listing, it would push it out of view
wait_for "LEAK SUMMARY: "
# a forecast needs a running process: after the exit the line keeps the growth alone
wait_for " suspects: 1 site grows +16.0 KiB/iteration - \`suspects\` lists them"
screen | grep " suspects: " | grep -q "fills" && fail "a forecast after the job exited"
type_line "suspects"
wait_for "1 growth suspect listed in the output pane"
wait_for "grows since mark 'iteration 0' (29 marks ago, 16.0 KiB then)"
listed=$(screen | grep -c '^#[0-9]* +[0-9.]* [KMG]*i*B/iteration')
[ "$listed" -eq 1 ] || fail "want one suspect listed, got $listed"
screen | grep '^#[0-9]* +16.0 KiB/iteration' | grep -q "grow_step at .*client_scenarios.c" ||
    fail "the listed suspect is not grow_step at +16 KiB"
screen | grep -q "480 KiB live at 'iteration 29', rose at 10 of the last 10 marks \"iteration #\"" ||
    fail "live bytes and rises"
screen | grep -q "at +16.0 KiB per iteration (.* each), this site would have filled device 0 in ~65,000 more iterations" ||
    fail "no forecast in the list"
# the site's stack follows, folded as the reports fold it
screen | grep -q "^  > #[0-9]* *grow_step at .*client_scenarios.c" || fail "the suspect's stack is not listed"
type_line "help suspects"
wait_for " help suspects  lines"
wait_for "List the growth suspects in the output pane"
wait_for "higher than before. The header shows a line while there are any."
# Tab completes the command's name
tmux send-keys -t "$S" -l "susp"
tmux send-keys -t "$S" Tab
wait_for "(culeak) suspects"
tmux send-keys -t "$S" C-u
type_line "quit"
wait_for "CONSOLE-DONE rc=0"

# 2. three marks: no verdict, no header line, and the command says so
start -- "$FAKE/client_static" growth 3 0
wait_for "EXITED (status 0)"
screen | grep -q " suspects: " && fail "a suspects line after three marks"
type_line "suspects"
wait_for "no growth suspects"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
echo "console_suspects: ok"
