#!/usr/bin/env bash
# The output pane is a terminal: the job's colours (none with NO_COLOR), wide characters,
# cursor movement and a line longer than the pane, at 80x24 and 120x40; search finds a
# line that scrolled away; a long line that the job writes at once, before the console
# first draws, is wrapped at the pane's width and kept whole.
# A program that asks its terminal where the cursor is gets the answer.
set -u
. "$(dirname "$0")/tmux_harness.sh"
ENVS="$ENVS LANG=C.UTF-8"

tail=$(printf 'x%.0s' $(seq 1 693))TAIL700   # 700 columns, the marker at the very end
cat >"$T/job.sh" <<JOB
#!/bin/sh
for i in \$(seq 1 30); do echo "filler \$i"; done
echo FIND-ME-OLD
for i in \$(seq 31 60); do echo "filler \$i"; done
echo $tail
printf 'ok \033[31mred\033[0m plain\n'
printf 'wide \346\274\242\345\255\227 end\n'
printf '12345\033[3D\033[KZ\n'
echo READY
while [ -d "$T" ]; do sleep 0.1; done # until the test is over (its console detaches it)
JOB
chmod +x "$T/job.sh"

for size in "80 24" "120 40"; do
    start_sized $size -- "$T/job.sh"
    wait_for "READY"
    screen | grep -q "TAIL700" || fail "the end of the 700-column line is not in the pane ($size)"
    screen | grep -q "wide 漢字 end" || fail "wide characters not shown ($size)"
    screen | grep -q "^12Z$" || fail "cursor movement not applied ($size)"
    screen | grep -q "12345" && fail "erased text still shown ($size)"
    tmux capture-pane -e -p -t "$S" | grep -q $'ok \e\[31mred' || fail "the job's red is lost ($size)"
    screen | grep -q "FIND-ME-OLD" && fail "the old line should have scrolled away ($size)"
    type_line "search find-me-old"
    wait_for "'find-me-old' at output line"
    screen | grep -q "^FIND-ME-OLD" || fail "search did not bring the line into view ($size)"
    type_line "/"
    wait_for "no more: 'find-me-old' is not in the output above the last match"
    # the console's first line, written before the first frame, wraps at the pane's width
    type_expect "/culeak-" "'culeak-' at output line"
done

# the job's first output, likely read before the console's first drawing (a few tries: it
# is a race the console must win every time)
printf '#!/bin/sh\necho %s\necho FIRST-READY\nwhile [ -d "%s" ]; do sleep 0.1; done\n' "$tail" "$T" >"$T/first.sh"
chmod +x "$T/first.sh"
for try in 1 2 3; do
    start_sized 80 24 -- "$T/first.sh"
    wait_for "FIRST-READY"
    screen | grep -q "TAIL700" || fail "the end of a 700-column line written at once is lost (try $try)"
done

# a program that asks its terminal where the cursor is gets the answer
cat >"$T/ask.sh" <<'JOB'
#!/usr/bin/env bash
stty -icanon -echo
printf 'abc\033[6n'
IFS= read -r -d R pos
stty sane
echo
echo "CURSOR AT ${pos#*[}"
while [ -d "$1" ]; do sleep 0.1; done # until the test is over (its console detaches it)
JOB
chmod +x "$T/ask.sh"
start_sized 80 24 -- "$T/ask.sh" "$T"
wait_for "CURSOR AT "
screen | grep -qE "^CURSOR AT [0-9]+;4$" || fail "the cursor position answer is wrong"

ENVS="$ENVS NO_COLOR=1"
start_sized 80 24 -- "$T/job.sh"
wait_for "READY"
tmux capture-pane -e -p -t "$S" | grep -q $'\e\[31m' && fail "NO_COLOR set, yet the job's red is drawn"
screen | grep -q "ok red plain" || fail "the text of the coloured line is lost under NO_COLOR"
echo "console terminal e2e ok"
