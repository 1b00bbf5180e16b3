#!/usr/bin/env bash
# culeak record --pid on a process started without culeak (fake driver): it allocated 4
# blocks of 8192 bytes and 4096 bytes of pinned host memory, is attached, frees the pinned
# memory (an inventory's allocation ended in host memory, where it was found) and leaks 3
# blocks of 12288 at one line. The report has the leak at that line, and the 4 earlier
# blocks as (before attach): not judged (no stack), apart from the leaks, and not failing
# check; leaks and before-attach sum to the fake driver's own count (69632). The job ends
# with its own status (7) and output, its stderr untouched. For the three ways a program
# reaches the driver: a table filled through cuGetProcAddress (client_static), the driver
# API through its GOT (client_driver), the shared cudart through its GOT (client_runtime),
# whose functions first called after the attach (lazy PLT slots, not yet bound) are traced
# too; culeak never says that nothing will be traced.
set -u
. "$(dirname "$0")/attach/job.sh"
attach_test_setup

for client in client_static client_driver client_runtime; do
    D=$T/$client
    mkdir "$D"
    start_job "$client" "$D"
    "$B/culeak" record --pid "$job" -o "$D/rec.culeak" 2>"$D/rec.err" &
    rec=$!
    end=$((SECONDS + WAIT_S))
    until grep -qs "attached to pid $job" "$D/rec.err"; do
        kill -0 "$rec" 2>/dev/null || fail "$client: record ended: $(cat "$D/rec.err")"
        [ "$SECONDS" -lt "$end" ] || fail "$client: record never attached: $(cat "$D/rec.err")"
        sleep 0.05
    done
    wait_inventory "$D/rec.culeak"
    finish_job "$D"
    rc=0
    wait "$rec" || rc=$?
    [ "$rc" -eq 0 ] || fail "$client: record exited $rc: $(cat "$D/rec.err")"
    grep -q "culeak record: pid $job ended" "$D/rec.err" || fail "$client: record did not see the end: $(cat "$D/rec.err")"
    check_job_output "$client" "$D"
    src=tests/fakecuda/client_scenarios.c
    [ "$client" = client_runtime ] && src=tests/fakecuda/client_runtime.c
    line=$(leak_line "$src")
    "$B/culeak" report "$D/rec.culeak" >"$D/report" 2>&1 || fail "$client: report exited $?"
    grep -q "^LEAKED 36.0 KiB (36864 bytes) in 3 allocations (device) from attach_scenario at $src:$line\$" "$D/report" ||
        fail "$client: the leak is not at $src:$line: $(cat "$D/report")"
    grep -q "^NOT JUDGED 32.0 KiB (32768 bytes) in 4 allocations (device+pinned) from (before attach)\$" "$D/report" ||
        fail "$client: no before-attach row of 4 blocks: $(cat "$D/report")"
    ! grep -q "^LEAKED.*(before attach)" "$D/report" || fail "$client: before-attach memory judged a leak"
    grep -q "^LEAK SUMMARY: 36864 bytes leaked in 3 allocations from 1 call sites\$" "$D/report" ||
        fail "$client: the leaks are not the 3 blocks made after the attach: $(cat "$D/report")"
    grep -q "^ATTACH SUMMARY: 32768 bytes in 4 allocations live since before culeak attached" "$D/report" ||
        fail "$client: no attach summary (with the leaks, the fake driver's 69632): $(cat "$D/report")"
    "$B/culeak" report -f json "$D/rec.culeak" >"$D/report.json" || fail "$client: report -f json exited $?"
    python3 - "$D/report.json" <<'EOF' || fail "$client: JSON report: $(cat "$D/report.json")"
import json, sys
r = json.load(open(sys.argv[1]))
s = r["summary"]
assert (s["bytes"], s["allocations"]) == (36864, 3), s
assert (s["before_attach_bytes"], s["before_attach_allocations"]) == (32768, 4), s
assert [x["bytes"] for x in r["before_attach"]] == [32768], r["before_attach"]
assert all("before attach" not in x["site"]["text"] for x in r["leaks"]), r["leaks"]
EOF
    "$B/culeak" dump "$D/rec.culeak" >"$D/dump" || fail "$client: dump exited $?"
    grep -q '"api":"before-attach"' "$D/dump" || fail "$client: no before-attach event in the dump"
    grep -q 'before attach: 5 allocations, 36864 bytes' "$D/dump" || fail "$client: no before-attach note: $(grep note "$D/dump")"
    grep -q 'no CUDA entry point was found' "$D/dump" && fail "$client: told that nothing will be traced: $(grep note "$D/dump")"
    if [ "$client" = client_runtime ]; then # functions first called after the attach (lazy PLT slots)
        grep -q '"type":"alloc".*"api":"cudaMallocHost"' "$D/dump" || fail "$client: cudaMallocHost after the attach not recorded"
        grep -q '"type":"free".*"api":"cudaFreeHost"' "$D/dump" || fail "$client: cudaFreeHost after the attach not recorded"
    fi
done
echo "attach_record: ok"
