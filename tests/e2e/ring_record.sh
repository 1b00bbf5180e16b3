#!/usr/bin/env bash
# record and check read the job's events from rings in shared memory (culeak-stream(5),
# The ring): a job killed right after allocating (SIGKILL, SIGUSR1, SIGALRM, a real-time
# signal, a crash reporter's re-raise) has every event in its recording and check exits
# with the job's own status; the shim holds no descriptor in the job after its start; a
# job that closes its descriptors and makes pipes runs to its end with every event; a
# forked child hands its own ring over and gets its own recording; a reader stopped while
# the job floods its ring stalls the job only for the bounded wait, and the events it
# dropped are counted in the recording and said by report, dump and check.
set -u
. "$(dirname "$0")/lib.sh"
export LD_LIBRARY_PATH=$B/fakecuda
H=$B/fakecuda/client_hostile

# allocations of 4096 bytes (client_hostile's) in recording $1
allocs() { "$B/culeak" dump "$1" 2>/dev/null | grep -c '"type":"alloc".*"size":4096,'; }

# killed at once after 3 allocations: all 3 recorded, the job's status kept
for how in "9" "10" "14" "$(( $(kill -l RTMIN) + 3 ))" "11 reraise"; do
    # shellcheck disable=SC2086 # split on purpose: SIGNAL [reraise]
    set -- $how
    "$B/culeak" record -o "$T/k.culeak" -- "$H" killnow 3 "$@" >"$T/out" 2>"$T/err"
    rc=$?
    [ "$rc" -eq $((128 + $1)) ] || fail "record, signal $how: status $rc, want $((128 + $1)): $(cat "$T/err")"
    n=$(allocs "$T/k.culeak")
    [ "$n" = 3 ] || fail "signal $how: $n of 3 allocations recorded: $(cat "$T/err")"
    "$B/culeak" check -- "$H" killnow 3 "$@" >"$T/out" 2>"$T/err"
    rc=$?
    [ "$rc" -eq $((128 + $1)) ] || fail "check, signal $how: status $rc, want $((128 + $1)): $(cat "$T/err")"
    grep -q "LEAK SUMMARY: 12288 bytes leaked in 3 allocations" "$T/err" ||
        fail "check, signal $how: the 3 allocations are not reported: $(cat "$T/err")"
done

# no descriptor of the shim's in the job after its start (the same numbers as untraced)
"$H" fds >"$T/plain" 2>&1 || fail "fds untraced: $(cat "$T/plain")"
"$B/culeak" record -o "$T/f.culeak" -- "$H" fds >"$T/traced" 2>"$T/err" || fail "fds traced: $(cat "$T/err")"
numbers() { sed -n 's/^fd \([0-9]*\) ->.*/\1/p' "$1" | tr '\n' ' '; }
[ "$(numbers "$T/plain")" = "$(numbers "$T/traced")" ] ||
    fail "descriptors open in the traced job: $(cat "$T/traced"), untraced: $(cat "$T/plain")"
[ "$(allocs "$T/f.culeak")" = 1 ] || fail "fds: the allocation is not recorded"

# a job that closes every descriptor, then makes pipes on the low numbers: runs to its
# end, its files its own, every event recorded
mkdir "$T/pipes"
"$B/culeak" record -o "$T/p.culeak" -- "$H" closepipe "$T/pipes" 100 >"$T/out" 2>"$T/err" ||
    fail "closepipe: status $?: $(cat "$T/err")"
[ "$(cat "$T/pipes/f0")" = "program data 0" ] || fail "closepipe: its file holds $(od -c "$T/pipes/f0" | head -3)"
[ "$(allocs "$T/p.culeak")" = 101 ] || fail "closepipe: $(allocs "$T/p.culeak") of 101 allocations recorded"

# a forked child: its own ring, handed over, its own recording
"$B/culeak" record -o "$T/c.culeak" -- "$H" forkexit >"$T/out" 2>"$T/err" || fail "forkexit: $(cat "$T/err")"
child=$(ls "$T"/c.culeak.[0-9]* 2>/dev/null)
[ -n "$child" ] || fail "forkexit: no recording of the child: $(ls "$T") $(cat "$T/err")"
[ "$(allocs "$child")" = 1 ] || fail "forkexit: the child's allocation is not in $child"
"$B/culeak" dump "$child" | grep -q '"type":"exit"' || fail "forkexit: the child's recording has no exit"

# the reader stopped (SIGSTOP) while the job floods a small ring: the job runs to its end
# meanwhile, and the gap is counted and said
# (python waits for the reader: a shell that sees its child stopped may stop itself)
CULEAK_RING_SIZE=65536 python3 - "$B/culeak" "$T" "$H" <<'PY' || fail "the stopped reader's run: see above"
import os, signal, subprocess, sys, time
culeak, t, h = sys.argv[1:]
os.mkfifo(t + "/go")
err = open(t + "/err", "w")
rec = subprocess.Popen([culeak, "record", "-o", t + "/g.culeak", "--", "bash", "-c",
                        "read _ <'%s/go'; '%s' churn 20000 && touch '%s/done'" % (t, h, t)], stderr=err)
with open(t + "/go", "w") as go:  # opened once the job runs (it opens the other end)
    rec.send_signal(signal.SIGSTOP)
    go.write("go\n")
for _ in range(600):  # a guard against a hang, not a measure
    if os.path.exists(t + "/done"):
        break
    time.sleep(0.1)
done = os.path.exists(t + "/done")
rec.send_signal(signal.SIGCONT)
rc = rec.wait()
if not done:
    sys.exit("FAIL: the job did not end while its reader was stopped (it waits on the reader)")
if rc != 0:
    sys.exit("FAIL: record with a stopped reader: status %d: %s" % (rc, open(t + "/err").read()))
PY
"$B/culeak" dump "$T/g.culeak" >"$T/dump" 2>/dev/null
grep -q '"type":"lost"' "$T/dump" || fail "no lost record in the recording of a flooded ring"
lost=$(sed -n 's/.*"type":"lost","count":\([0-9]*\).*/\1/p' "$T/dump" | awk "{ s += \$1 } END { print s + 0 }")
got=$(grep -c '"type":"\(alloc\|free\)"' "$T/dump")
[ $((lost + got)) -eq 40001 ] || fail "$got events recorded and $lost counted lost, not the job's 40001"
# sequence numbers: the events' and the gaps' together are 1.. without a hole or a number
# given twice (an event after a gap follows its last lost number)
python3 - "$T/dump" <<'PY' || fail "sequence numbers around the gaps: see above"
import json, sys
seqs = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["type"] in ("alloc", "free", "mark", "exit", "event"):
        seqs.append(r["seq"])
    elif r["type"] == "lost":
        seqs.extend(range(r["first_seq"], r["last_seq"] + 1))
if sorted(seqs) != list(range(1, len(seqs) + 1)):
    dup = len(seqs) - len(set(seqs))
    sys.exit("FAIL: %d numbers, %d given twice, highest %d" % (len(seqs), dup, max(seqs)))
PY
"$B/culeak" report "$T/g.culeak" >"$T/report" 2>&1
grep -q "$lost events lost while the reader was stopped" "$T/report" || fail "report does not say the gap: $(head -5 "$T/report")"
echo "ring_record: ok"
