#!/usr/bin/env bash
# culeak record --roll: a recording rolled into parts at a size loses no event at a
# boundary (the sequence numbers of the parts' records go on without a gap), and report
# of the parts reads one run, equal to the report of the same program recorded whole; a
# missing middle part is named; a last part cut mid-write is read up to its last whole
# record; a part alone is refused with why; -o without %t or %n is refused.
set -u
. "$(dirname "$0")/lib.sh"
prog="$B/demo/loop_leak_sim --iterations 200 --delay-ms 3"
export LD_LIBRARY_PATH=$B/fakecuda
"$B/culeak" record -o "$T/run.%n.culeak" --roll 4K -- $prog >"$T/out" 2>&1 || fail "record --roll exited $?: $(cat "$T/out")"
"$B/culeak" record -o "$T/one.culeak" -- $prog >"$T/out1" 2>&1 || fail "record exited $?: $(cat "$T/out1")"
parts=$(ls "$T"/run.*.culeak | wc -l)
[ "$parts" -ge 3 ] || fail "$parts parts of a recording of about 16 KB rolled at 4K: $(ls -l "$T")"
[ -e "$T/run.0001.culeak" ] && [ -e "$T/run.0002.culeak" ] || fail "parts not named by %n: $(ls "$T")"
grep -q "culeak record: $parts recordings and parts were written" "$T/out" || fail "record's message: $(cat "$T/out")"
# no event lost at a boundary: one stream whose seqs go 1, 2, 3 ... with no gap
"$B/culeak" dump "$T"/run.*.culeak >"$T/dump" 2>"$T/err" || fail "dump of the parts exited $?: $(cat "$T/err")"
gaps=$(grep -o '"seq":[0-9]*' "$T/dump" | cut -d: -f2 | awk 'NR > 1 && $1 != p + 1 { print p "->" $1 } { p = $1 }')
[ -z "$gaps" ] || fail "sequence numbers jump across the parts: $gaps"
[ "$(grep -c '"type":"roll"' "$T/dump")" -eq $((parts - 1)) ] || fail "a ROLL per boundary: $(grep roll "$T/dump")"
[ "$(grep -c '"type":"hello"' "$T/dump")" -eq 1 ] || fail "the parts do not print as one stream"
grep -q '"type":"exit"' "$T/dump" || fail "the last part has no exit record"
"$B/culeak" dump "$T/one.culeak" >"$T/dump1"
[ "$(grep -c '"seq"' "$T/dump")" -eq "$(grep -c '"seq"' "$T/dump1")" ] || fail "the parts hold another number of records"
# the report of the parts is the report of the whole recording (but for the pid)
"$B/culeak" report "$T"/run.*.culeak >"$T/set" 2>"$T/err" || fail "report of the parts exited $?: $(cat "$T/err")"
[ ! -s "$T/err" ] || fail "report of the parts warns: $(cat "$T/err")"
"$B/culeak" report "$T/one.culeak" >"$T/whole" 2>&1 || fail "report of the whole exited $?"
grep -q "LEAK SUMMARY: 834666496 bytes leaked in 199 allocations" "$T/set" || fail "report of the parts: $(cat "$T/set")"
diff <(sed 1d "$T/set") <(sed 1d "$T/whole") >"$T/diff" || fail "the parts report otherwise than the whole: $(cat "$T/diff")"
"$B/culeak" report --format json "$T"/run.*.culeak | grep -q '"events":201,' || fail "report of the parts: events"
# a part alone is refused, saying whose and which
"$B/culeak" report "$T/run.0002.culeak" >/dev/null 2>"$T/err" && fail "report of a later part alone exited 0"
grep -q "part 2 of the recording of process [0-9]* goes on from run.0001.culeak" "$T/err" ||
    fail "report of a later part alone: $(cat "$T/err")"
# the first part alone: read, and said to go on in a part not given
"$B/culeak" report "$T/run.0001.culeak" >/dev/null 2>"$T/err"
grep -q "goes on in run.0002.culeak, which was not read" "$T/err" || fail "report of the first part: $(cat "$T/err")"
# a missing middle part is named
mkdir "$T/gap"
cp "$T"/run.*.culeak "$T/gap/" && rm "$T/gap/run.0002.culeak"
"$B/culeak" report "$T"/gap/run.*.culeak >"$T/gap.out" 2>"$T/err" && fail "report with a missing part exited 0"
grep -q "run.0002.culeak, part 2 of the recording of process [0-9]*, is missing: this part (3)" "$T/err" ||
    fail "report does not name the missing part: $(cat "$T/err")"
grep -q "NOT JUDGED" "$T/gap.out" || fail "report with a missing part does not report what it read: $(cat "$T/gap.out")"
# the last part cut mid-write: read up to its last whole record
mkdir "$T/cut"
cp "$T"/run.*.culeak "$T/cut/"
last=$(ls "$T"/cut/run.*.culeak | tail -1)
truncate -s -3 "$last"
"$B/culeak" report "$T"/cut/run.*.culeak >"$T/cut.out" 2>"$T/err"
grep -q "stream cut off at offset" "$T/err" || fail "a cut last part is not said: $(cat "$T/err")"
grep -q "recording cut off: read up to the cut" "$T/cut.out" &&
    grep -q "END SUMMARY: 834666496 bytes in 199 allocations live" "$T/cut.out" ||
    fail "a last part cut in its exit record: $(cat "$T/cut.out")"
# --roll needs the parts' names, and a time or a size
"$B/culeak" record -o "$T/x.culeak" --roll 1h -- true >/dev/null 2>"$T/err" && fail "--roll without %t or %n exited 0"
grep -q -- "--roll needs %t or %n in -o FILE" "$T/err" || fail "--roll without %t: $(cat "$T/err")"
"$B/culeak" record -o "$T/x.%t.culeak" --roll 12 -- true >/dev/null 2>"$T/err" && fail "--roll 12 exited 0"
grep -q -- "--roll takes a time" "$T/err" || fail "--roll 12: $(cat "$T/err")"
echo "record_roll: ok"
