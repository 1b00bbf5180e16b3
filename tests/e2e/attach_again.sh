#!/usr/bin/env bash
# A job attached a second time, as one attaches again to the same training run: record
# --pid, then that culeak is killed (its ring's reader dies without a word) and a new
# record --pid comes at once, before the shim's flush thread could notice. The second
# attach is taken (not "traced by culeak already"); its recording names Python frames
# again (they were announced in the first stream only: "python+0x0"); and the diff between
# two of its marks holds only what the loop made between them: the tensors that were live
# before the second attach (the inventory's, sent after the first mark) were live at both
# marks, so they are no growth and nothing "made after" the first mark.
set -u
. "$(dirname "$0")/attach/job.sh"
attach_test_setup
src=tests/e2e/python/attach_again.py
line=$(grep -n '# SITE-KEEP$' "$ROOT/$src" | cut -d: -f1)

export LD_LIBRARY_PATH=$B/fakecuda FAKE_C10=$B/fakecuda/torch/lib/libc10_cuda.so PYTHONPATH=$ROOT/python
python3 "$ROOT/$src" "$T" >"$T/out" 2>"$T/err" &
job=$!
wait_file_exists "$T/ready"
# attach_python_side REC: waits until culeak's Python side ran in the job (its NOTE)
attach_python_side() {
    local end=$((SECONDS + WAIT_S))
    until grep -aqs "caching allocator tracked from now on" "$1"; do
        job_alive || fail "the job died: $(cat "$T/err")"
        [ "$SECONDS" -lt "$end" ] || fail "culeak's Python side never ran in the job ($1)"
        sleep 0.05
    done
}

"$B/culeak" record --pid "$job" -o "$T/one.culeak" 2>"$T/one.err" &
rec=$!
wait_attached "$T/one.err" "$job"
wait_inventory "$T/one.culeak"
attach_python_side "$T/one.culeak"
touch "$T/go1"
wait_file_exists "$T/done1"
{ kill -9 "$rec" && wait "$rec"; } 2>/dev/null

"$B/culeak" record --pid "$job" -o "$T/two.culeak" 2>"$T/two.err" &
rec=$!
end=$((SECONDS + WAIT_S))
until grep -qs "attached to pid $job" "$T/two.err"; do
    kill -0 "$rec" 2>/dev/null || fail "the second attach was refused: $(cat "$T/two.err")"
    [ "$SECONDS" -lt "$end" ] || fail "record never attached: $(cat "$T/two.err")"
    sleep 0.05
done
wait_inventory "$T/two.culeak"
attach_python_side "$T/two.culeak"
touch "$T/go2"
wait_file_exists "$T/done2"
kill -INT "$rec"
wait "$rec" || fail "the second record exited $?: $(cat "$T/two.err")"
touch "$T/end"
job_rc=0
wait "$job" || job_rc=$?
job=
[ "$job_rc" -eq 0 ] || fail "the job exited $job_rc: $(cat "$T/err")"
grep -qx "attach_again: 9 tensors kept" "$T/out" || fail "the job's output: $(cat "$T/out")"
[ ! -s "$T/err" ] || fail "the job's stderr got: $(cat "$T/err")"

"$B/culeak" report --diff 'round 2 iteration 0' 'round 2 iteration 3' "$T/two.culeak" >"$T/diff" 2>&1 ||
    fail "report --diff exited $?: $(cat "$T/diff")"
rows=$(grep -E '^  [-+][0-9]+ bytes' "$T/diff")
[ "$(echo "$rows" | wc -l)" -eq 1 ] || fail "the diff has other rows than the loop's line: $(cat "$T/diff")"
echo "$rows" | grep -q "+9437184 bytes .*attach_again.py:$line\b" ||
    fail "the diff's row is not +9437184 bytes at attach_again.py:$line: $(cat "$T/diff")"
grep -q 'made after round 2 iteration 0 and still live at round 2 iteration 3: 0 bytes in 0 allocations, 9.0 MiB (9437184 bytes) in 3 pool blocks,' "$T/diff" ||
    fail "what was made after the first mark is not the loop's three tensors: $(cat "$T/diff")"
echo "attach_again: ok"
