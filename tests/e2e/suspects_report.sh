#!/usr/bin/env bash
# Growth suspects from a recording: a C program with marks (on the fake driver) where one
# site grows every iteration, one allocates and frees, one goes up and down in a sawtooth;
# `culeak report --suspects` names only the first, with its growth per iteration, since
# when, a forecast from the device's free memory that the marks carry (in the past
# conditional: the job has ended) and its stack, folded as the leak report folds it (a
# Python job's interpreter frames in one line); the JSON report carries the same in
# "suspects", with every frame; with too few marks there is no verdict, and says so.
set -u
. "$(dirname "$0")/lib.sh"
src=$ROOT/tests/fakecuda/client_scenarios.c
grow_line=$(grep -n 'SZ_GROW)); /\* kept: the leak' "$src" | cut -d: -f1)
[ -n "$grow_line" ] || fail "no grow_step allocation in $src"

# 1 GiB device: 16 KiB per iteration fills the ~1 GiB left in ~66,000 iterations (65,512)
LD_LIBRARY_PATH=$B/fakecuda FAKECUDA_MEM_BYTES=1073741824 \
    "$B/culeak" record -o "$T/g.culeak" -- "$B/fakecuda/client_driver" growth 20 2000 >"$T/out" 2>&1 ||
    fail "record exited $?: $(cat "$T/out")"
grep -q "client_driver growth ok" "$T/out" || fail "the program did not finish: $(cat "$T/out")"
"$B/culeak" dump "$T/g.culeak" | grep '"type":"mark"' | head -1 | grep -q '"mem_total":1073741824' ||
    fail "marks do not carry the device's memory: $("$B/culeak" dump "$T/g.culeak" | grep mark | head -1)"

"$B/culeak" report --suspects "$T/g.culeak" >"$T/rep" 2>&1 || fail "report --suspects exited $?: $(cat "$T/rep")"
[ "$(grep -c '^GROWS ' "$T/rep")" -eq 1 ] || fail "want exactly one suspect: $(cat "$T/rep")"
grep -q "^GROWS +16.0 KiB per iteration (device memory) at grow_step at .*client_scenarios.c:$grow_line " "$T/rep" ||
    fail "the suspect is not grow_step (line $grow_line) at +16 KiB: $(cat "$T/rep")"
grep -q "churn_step\|sawtooth_step" "$T/rep" && fail "a churning or sawtooth site is reported: $(cat "$T/rep")"
grep -q "320 KiB live at mark 'iteration 19'; rose at 10 of the last 10 marks \"iteration #\"" "$T/rep" ||
    fail "live bytes / rises: $(cat "$T/rep")"
grep -q "growing since mark 'iteration 0' (19 marks ago, 16.0 KiB then)" "$T/rep" || fail "since: $(cat "$T/rep")"
# the job has ended: the forecast says what would have come
grep -Eq "at \+16.0 KiB per iteration \([0-9.]+ (m|µ)?s each\), this site would have filled device 0 in ~66,000 more iterations \((~[0-9.]+ (s|min|h)|under a second)\)" "$T/rep" ||
    fail "forecast: $(cat "$T/rep")"
grep -q "^SUSPECT SUMMARY: 1 call site grows, +16.0 KiB per iteration in all" "$T/rep" || fail "summary: $(cat "$T/rep")"

"$B/culeak" report --format json "$T/g.culeak" >"$T/j" || fail "json report exited $?"
python3 - "$T/j" "$grow_line" <<'PY' || fail "json suspects: $(cat "$T/j")"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["suspects"]
assert len(s) == 1, s
x = s[0]
assert x["text"].startswith("grow_step at ") and x["text"].endswith(":" + sys.argv[2]), x
assert x["bytes_per_iteration"] == 16384 and x["rises"] == 10 and x["intervals"] == 10, x
assert x["since_mark"] == "iteration 0" and x["last_mark"] == "iteration 19", x
f = x["forecast"]
assert f["device"] == 0 and f["total_bytes"] == 1 << 30, f
assert f["iterations_to_full"] == -(-f["free_bytes"] // 16384), f
assert x["running"] is False, x
assert x["stack"][0]["function"] == "grow_step" and x["stack"][0]["line"] == int(sys.argv[2]), x["stack"]
PY

# a Python job: the suspect's stack reads as the leak report's, the interpreter's frames
# after the user's folded into one line (PyEval_EvalCode, _PyRun_SimpleFileObject, ...)
py=$ROOT/tests/e2e/python/grow_loop.py
py_line=$(grep -n '# SITE-GROW$' "$py" | cut -d: -f1)
# (a sanitizer build's shim brings its runtime into python3, whose own leaks are not ours)
ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS} \
    FAKE_LIBCUDA=$B/fakecuda/libcuda.so.1 CULEAK_PYTHON_DIR=$ROOT/python \
    "$B/culeak" record -o "$T/py.culeak" -- python3 "$py" 12 0 >"$T/out" 2>&1 || fail "python record: $(cat "$T/out")"
"$B/culeak" report --suspects "$T/py.culeak" >"$T/rep" 2>&1 || fail "python report --suspects exited $?"
"$B/culeak" report "$T/py.culeak" >"$T/leaks" 2>&1
grep -q "^GROWS +1.00 MiB per iteration (device memory) at step at .*grow_loop.py:$py_line " "$T/rep" ||
    fail "python: the suspect is not step at grow_loop.py:$py_line: $(cat "$T/rep")"
fold=$(grep -E '^    \.\.\. [0-9]+ frames in .*python.* \(looked through\)$' "$T/rep") ||
    fail "python: the interpreter's frames are not folded: $(cat "$T/rep")"
grep -Eq "PyEval_EvalCode|_PyRun_SimpleFileObject|Py_RunMain" "$T/rep" && fail "python: interpreter frames listed: $(cat "$T/rep")"
grep -qxF "$fold" "$T/leaks" || fail "python: the leak report folds the same stack otherwise: $(cat "$T/leaks")"

# four marks: no verdict yet, and the report says why
LD_LIBRARY_PATH=$B/fakecuda "$B/culeak" record -o "$T/s.culeak" -- "$B/fakecuda/client_driver" growth 4 0 \
    >"$T/out" 2>&1 || fail "short record exited $?"
"$B/culeak" report --suspects "$T/s.culeak" >"$T/rep" 2>&1 || fail "short report exited $?"
grep -q "^GROWS" "$T/rep" && fail "a verdict from 4 marks: $(cat "$T/rep")"
grep -q "a verdict needs 5 marks with one label pattern.*the recordings have 4" "$T/rep" ||
    fail "no word on too few marks: $(cat "$T/rep")"
"$B/culeak" report --suspects --format folded "$T/s.culeak" >/dev/null 2>&1 && fail "--suspects --format folded accepted"
echo "suspects_report: ok"
