#!/usr/bin/env bash
# The command line as users of valgrind and compute-sanitizer expect it, on the fake
# driver: --opt=value, %p in output paths, --log-file, a missing directory failing before
# the job starts, suppressions (generated from a report and fed back, hand-written for one
# site of several, malformed), report --error-exitcode, the JSON version, the error style.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
export LD_LIBRARY_PATH=$B/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
show_failure() { for f in $(grep -Il . "$T"/* 2>/dev/null); do echo "== $f"; head -c 3000 "$f"; done; }
C=$B/culeak
prog="$B/fakecuda/client_static"

# --opt=value forms and %p in check --output: the file is named after the program's pid
set +e
"$C" check --error-exitcode=3 --format=json --output="$T/check.%p.json" -- "$prog" leak 2 100 >/dev/null 2>&1
rc=$?
set -e
[ "$rc" -eq 3 ] || fail "check --error-exitcode=3: exit $rc"
ls "$T"/check.[0-9]*.json >/dev/null 2>&1 || fail "check --output=FILE.%p.json wrote no FILE.PID.json"
[ -e "$T/check.%p.json" ] && fail "check --output kept a literal %p"
python3 - "$T"/check.[0-9]*.json <<'PY' || fail "check json: version, pid in the name"
import json, sys, re
path = sys.argv[1]
r = json.load(open(path))
assert r["version"] == 1, r.get("version")
assert r["summary"]["bytes"] == 200, r["summary"]
pid = int(re.search(r"check\.(\d+)\.json$", path).group(1))
assert r["processes"][0]["pid"] == pid, (pid, r["processes"])
assert r["summary"]["suppressed"] == {"bytes": 0, "allocations": 0, "sites": 0, "used": []}
PY

# the console's gdb-style -ex and -x: errors before anything starts, as gdb's own
set +e
"$C" -ex >/dev/null 2>"$T/ex.err"; rc_ex=$?
"$C" -x "$T/none" -- "$prog" >/dev/null 2>"$T/x.err"; rc_x=$?
set -e
[ "$rc_ex" -eq 2 ] && grep -qxF "culeak: option '-ex' needs an argument (COMMAND)" "$T/ex.err" ||
    fail "culeak -ex without its command: exit $rc_ex"
[ "$rc_x" -eq 2 ] && grep -qxF "culeak: --command: $T/none: No such file or directory" "$T/x.err" ||
    fail "culeak -x with no such file: exit $rc_x"

# a recording with two leaking call sites (2 x 1000 bytes at one, 2000 at the other)
"$C" record --output="$T/sites.%p.culeak" -- "$prog" sites >/dev/null
rec=$(ls "$T"/sites.[0-9]*.culeak)
pid=${rec##*sites.}; pid=${pid%.culeak}

# report --output and --log-file expand %p, %r (the first process's)
"$C" report "$rec" -f json -o "$T/rep.%p.%r.json" --log-file "$T/rep.%p.txt"
[ -f "$T/rep.$pid.0.json" ] || fail "report -o rep.%p.%r.json: no rep.$pid.0.json"
grep -q "^LEAK SUMMARY: 4000 bytes leaked in 3 allocations from 2 call sites$" "$T/rep.$pid.txt" ||
    fail "report --log-file: no text report"
python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['version'] == 1" "$T/rep.$pid.0.json" ||
    fail "report json version"

# report --error-exitcode: N with leaks, 0 without (a recording with none)
set +e
"$C" report "$rec" --error-exitcode 5 >/dev/null; rc=$?
set -e
[ "$rc" -eq 5 ] || fail "report --error-exitcode 5 on leaks: exit $rc"
"$C" record -o "$T/clean.culeak" -- "$prog" mark 1 >/dev/null
"$C" report "$T/clean.culeak" --error-exitcode=5 >/dev/null || fail "report --error-exitcode on no leaks"

# --diff takes two arguments, in either order with the files, and --diff=A B
"$C" record -o "$T/marks.culeak" -- "$prog" mark 3 >/dev/null
for args in "FILE --diff A B" "--diff A B FILE" "--diff=A B FILE"; do
    set -- ${args}
    argv=()
    for w in "$@"; do
        case $w in FILE) argv+=("$T/marks.culeak") ;; A) argv+=("iteration 0") ;; B) argv+=("iteration 2") ;;
        --diff=A) argv+=("--diff=iteration 0") ;; *) argv+=("$w") ;; esac
    done
    "$C" report "${argv[@]}" | grep -q "^culeak: iteration 0 -> iteration 2: +0 bytes live$" || fail "report $args"
done

# suppressions generated from the report, then fed back: nothing left, all counted
"$C" report "$rec" --format suppressions -o "$T/all.supp"
[ "$(grep -c '^{$' "$T/all.supp")" -eq 2 ] || fail "one block per leak site"
"$C" report "$rec" --suppressions "$T/all.supp" --error-exitcode 5 >"$T/suppressed.txt" ||
    fail "report with every site suppressed: exit $?"
grep -q "^LEAK SUMMARY: 0 bytes leaked in 0 allocations from 0 call sites$" "$T/suppressed.txt" ||
    fail "suppressed leaks still reported"
grep -q "^suppressed: 4000 bytes in 3 allocations from 2 sites$" "$T/suppressed.txt" || fail "suppressed count"
grep -q "^  used suppression 'leak_site_b at .*' (.*all.supp:[0-9]*): 2000 bytes in 1 allocations$" \
    "$T/suppressed.txt" || fail "used suppression line"
# the same with check: --gen-suppressions, then the blocks fed back make it pass
set +e
"$C" check --gen-suppressions -- "$prog" sites >/dev/null 2>"$T/gen.txt"; rc=$?
set -e
[ "$rc" -eq 1 ] || fail "check --gen-suppressions on leaks: exit $rc"
sed -n '/^{$/,/^}$/p' "$T/gen.txt" >"$T/gen.supp"
[ "$(grep -c '^   culeak:Leak$' "$T/gen.supp")" -eq 2 ] || fail "check --gen-suppressions blocks"
"$C" check --suppressions="$T/gen.supp" -- "$prog" sites >/dev/null 2>"$T/check_supp.txt" ||
    fail "check with generated suppressions: exit $?"
grep -q "^suppressed: 4000 bytes in 3 allocations from 2 sites$" "$T/check_supp.txt" || fail "check suppressed count"

# a hand-written block suppresses one site of several (valgrind's syntax, wildcards, ...)
cat >"$T/one.supp" <<'S'
# the second buffer is the cache's: known and accepted
{
   site b is expected
   culeak:Leak
   match-leak-kinds: device,managed
   fun:leak_s?te_b
   src:client_scenarios.c
   ...
   fun:main
}
{
   a Memcheck block in the same file is left to valgrind
   Memcheck:Leak
   match-leak-kinds: definite
   fun:malloc
}
S
set +e
"$C" check --suppressions "$T/one.supp" -- "$prog" sites >/dev/null 2>"$T/one.txt"; rc=$?
set -e
[ "$rc" -eq 1 ] || fail "one site of two suppressed: exit $rc"
grep -q "^LEAK SUMMARY: 2000 bytes leaked in 2 allocations from 1 call sites$" "$T/one.txt" || fail "one site left"
grep -q "from leak_site_a at" "$T/one.txt" || fail "site a reported"
grep -q "from leak_site_b at" "$T/one.txt" && fail "site b reported though suppressed"
grep -q "^suppressed: 2000 bytes in 1 allocations from 1 sites$" "$T/one.txt" || fail "one site counted"
grep -q "used suppression 'site b is expected' (.*one.supp:2)" "$T/one.txt" || fail "one site named"
# --suppressions is repeatable: a block per file, each site suppressed by its own; the
# text report also goes to --log-file (its %p the program's pid)
sed -n '1,/^}$/p' "$T/all.supp" >"$T/first.supp"
sed -n '/^}$/,$p' "$T/all.supp" | tail -n +2 >"$T/second.supp"
[ "$(grep -c '^{$' "$T/first.supp")" -eq 1 ] && [ "$(grep -c '^{$' "$T/second.supp")" -eq 1 ] ||
    fail "splitting the generated blocks"
"$C" check --suppressions "$T/first.supp" --suppressions="$T/second.supp" --log-file "$T/two.%p.log" \
    -- "$prog" sites >/dev/null 2>"$T/two.stderr" || fail "two suppression files: exit $?"
log=$(ls "$T"/two.[0-9]*.log) || fail "check --log-file FILE.%p.log wrote no FILE.PID.log"
[ -s "$T/two.stderr" ] && grep -q "LEAK SUMMARY" "$T/two.stderr" && fail "check --log-file: the report went to stderr too"
grep -q "^suppressed: 4000 bytes in 3 allocations from 2 sites$" "$log" || fail "two files: suppressed count"
grep -q "used suppression .*(.*first.supp:1)" "$log" && grep -q "used suppression .*(.*second.supp:1)" "$log" ||
    fail "two files: each block named with its file"
# the kinds of a block limit it
sed 's/device,managed/pinned/' "$T/one.supp" >"$T/pinned.supp"
"$C" report "$rec" --suppressions "$T/pinned.supp" | grep -q "^suppressed: 0 bytes" || fail "match-leak-kinds"

# a malformed file: file:line, exit 2, and the job does not start
printf '{\n   name\n   culeak:Leak\n   fun:x\n   frob:y\n}\n' >"$T/bad.supp"
set +e
"$C" check --suppressions "$T/bad.supp" -- sh -c "touch '$T/ran'" 2>"$T/bad.txt"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "malformed suppressions: exit $rc"
grep -q "^culeak check: .*bad.supp:5: expected a frame line" "$T/bad.txt" || fail "malformed: no file:line"
[ -e "$T/ran" ] && fail "the job ran despite a malformed suppressions file"
"$C" report "$rec" --suppressions "$T/bad.supp" 2>/dev/null && fail "report took a malformed file"

# an output directory that does not exist fails before the job starts
for args in "check --output $T/no/such/dir/x.json" "check --log-file $T/no/dir/x.txt"; do
    set +e
    # shellcheck disable=SC2086
    "$C" $args -- sh -c "touch '$T/ran'" 2>"$T/nodir.txt"; rc=$?
    set -e
    [ "$rc" -ne 0 ] || fail "$args: exit 0"
    [ -e "$T/ran" ] && fail "$args: the job ran"
    grep -q "No such file or directory" "$T/nodir.txt" || fail "$args: no reason given"
done
# record makes a recording's missing directories, but not under a file
touch "$T/afile"
set +e
"$C" record -o "$T/afile/dir/r.culeak" -- sh -c "touch '$T/ran'" 2>"$T/nodir.txt"; rc=$?
set -e
[ "$rc" -ne 0 ] || fail "record under a file: exit 0"
[ -e "$T/ran" ] && fail "record under a file: the job ran"
grep -q "cannot write $T/afile/dir/r.culeak: Not a directory" "$T/nodir.txt" ||
    fail "record under a file: no reason given: $(cat "$T/nodir.txt")"

# one error style, and every command's --help
set +e
"$C" check --x -- true 2>"$T/err.txt"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "unknown option: exit $rc"
[ "$(cat "$T/err.txt")" = "culeak check: unknown option '--x'
Try 'culeak check --help'." ] || fail "unknown option message"
set +e
"$C" record -- true 2>"$T/err.txt"; rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "^culeak record: missing -o FILE$" "$T/err.txt" || fail "record without -o"
# the help read whole: grep -q leaving a pipe early would end a long help with SIGPIPE
for cmd in record check report open dump; do
    "$C" "$cmd" --help >"$T/help.txt" && grep -q "^usage: culeak $cmd " "$T/help.txt" || fail "culeak $cmd --help"
done
"$C" --help >"$T/help.txt" && grep -q -- "--snapshot-at-marks" "$T/help.txt" || fail "culeak --help lacks the console's options"
"$C" --version | grep -q "^culeak [0-9]" || fail "culeak --version"
echo "cli_conventions: ok"
