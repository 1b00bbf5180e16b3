#!/usr/bin/env bash
# A FIFO at the path of a recording never holds culeak up (fake driver): record -o with
# %p, where the job plants a FIFO at its own recording's name before its first call, and
# record --pid -o on a FIFO. Nobody reads either FIFO: culeak refuses it, says so and
# ends (before, its open waited for a reader for ever). A hard link to a file is refused
# as well: truncating it would truncate the file it names.
set -u
. "$(dirname "$0")/lib.sh"
export LD_LIBRARY_PATH=$B/fakecuda
JOB="$B/fakecuda/client_static leak 1 4096"
mkdir "$T/f"
# (timeout only keeps a hung culeak from hanging the suite)
timeout 300 "$B/culeak" record -o "$T/f/r.%p.culeak" -- \
    bash -c "mkfifo '$T/f/r.'\$\$.culeak && exec $JOB" >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" -ne 124 ] || fail "record waited for a reader of the FIFO"
[ "$rc" -eq 0 ] || fail "record: status $rc: $(cat "$T/err")"
grep -q "cannot create $T/f/r\.[0-9]*\.culeak (Operation not permitted): process [0-9]* is not recorded" "$T/err" ||
    fail "the FIFO's refusal is not said: $(cat "$T/err")"
[ -p "$(ls "$T"/f/r.*.culeak)" ] || fail "the FIFO was replaced"

mkfifo "$T/f/p.culeak"
sleep 300 &
spid=$!
at_exit "kill $spid"
timeout 300 "$B/culeak" record --pid $spid -o "$T/f/p.culeak" >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" -ne 124 ] || fail "record --pid waited for a reader of the FIFO"
[ "$rc" -eq 1 ] || fail "record --pid: status $rc: $(cat "$T/err")"
grep -q "cannot write $T/f/p.culeak" "$T/err" || fail "record --pid: no refusal said: $(cat "$T/err")"

# a hard link planted at the recording's name: the file it names keeps its content
echo precious >"$T/victim"
ln "$T/victim" "$T/f/h.culeak"
"$B/culeak" record --pid $spid -o "$T/f/h.culeak" >"$T/out" 2>"$T/err"
[ "$(cat "$T/victim")" = precious ] || fail "record --pid truncated a hard link's file"
grep -q "cannot write $T/f/h.culeak" "$T/err" || fail "record --pid: no refusal said: $(cat "$T/err")"
echo "planted_fifos: ok"
