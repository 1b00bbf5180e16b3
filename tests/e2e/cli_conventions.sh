#!/usr/bin/env bash
# The command line as users of valgrind and compute-sanitizer expect it, on the fake
# driver: --opt=value, %p in output paths, --log-file, a missing directory failing before
# the job starts, suppressions (generated from a report and fed back, hand-written for one
# site of several, malformed), report --error-exitcode, the JSON version, the error style.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
export LD_LIBRARY_PATH=$B/fakecuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; for f in $(grep -Il . "$tmp"/* 2>/dev/null); do echo "== $f"; head -c 3000 "$f"; done; exit 1; }
C=$B/culeak
prog="$B/fakecuda/client_static"

# --opt=value forms and %p in check --output: the file is named after the program's pid
set +e
"$C" check --error-exitcode=3 --format=json --output="$tmp/check.%p.json" -- "$prog" leak 2 100 >/dev/null 2>&1
rc=$?
set -e
[ "$rc" -eq 3 ] || fail "check --error-exitcode=3: exit $rc"
ls "$tmp"/check.[0-9]*.json >/dev/null 2>&1 || fail "check --output=FILE.%p.json wrote no FILE.PID.json"
[ -e "$tmp/check.%p.json" ] && fail "check --output kept a literal %p"
python3 - "$tmp"/check.[0-9]*.json <<'PY' || fail "check json: version, pid in the name"
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
"$C" -ex >/dev/null 2>"$tmp/ex.err"; rc_ex=$?
"$C" -x "$tmp/none" -- "$prog" >/dev/null 2>"$tmp/x.err"; rc_x=$?
set -e
[ "$rc_ex" -eq 2 ] && grep -qxF "culeak: option '-ex' needs an argument (COMMAND)" "$tmp/ex.err" ||
    fail "culeak -ex without its command: exit $rc_ex"
[ "$rc_x" -eq 2 ] && grep -qxF "culeak: --command: $tmp/none: No such file or directory" "$tmp/x.err" ||
    fail "culeak -x with no such file: exit $rc_x"

# a recording with two leaking call sites (2 x 1000 bytes at one, 2000 at the other)
"$C" record --output="$tmp/sites.%p.culeak" -- "$prog" sites >/dev/null
rec=$(ls "$tmp"/sites.[0-9]*.culeak)
pid=${rec##*sites.}; pid=${pid%.culeak}

# report --output and --log-file expand %p, %r (the first process's)
"$C" report "$rec" -f json -o "$tmp/rep.%p.%r.json" --log-file "$tmp/rep.%p.txt"
[ -f "$tmp/rep.$pid.0.json" ] || fail "report -o rep.%p.%r.json: no rep.$pid.0.json"
grep -q "^LEAK SUMMARY: 4000 bytes leaked in 3 allocations from 2 call sites$" "$tmp/rep.$pid.txt" ||
    fail "report --log-file: no text report"
python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['version'] == 1" "$tmp/rep.$pid.0.json" ||
    fail "report json version"

# report --error-exitcode: N with leaks, 0 without (a recording with none)
set +e
"$C" report "$rec" --error-exitcode 5 >/dev/null; rc=$?
set -e
[ "$rc" -eq 5 ] || fail "report --error-exitcode 5 on leaks: exit $rc"
"$C" record -o "$tmp/clean.culeak" -- "$prog" mark 1 >/dev/null
"$C" report "$tmp/clean.culeak" --error-exitcode=5 >/dev/null || fail "report --error-exitcode on no leaks"

# --diff takes two arguments, in either order with the files, and --diff=A B
"$C" record -o "$tmp/marks.culeak" -- "$prog" mark 3 >/dev/null
for args in "FILE --diff A B" "--diff A B FILE" "--diff=A B FILE"; do
    set -- ${args}
    argv=()
    for w in "$@"; do
        case $w in FILE) argv+=("$tmp/marks.culeak") ;; A) argv+=("iteration 0") ;; B) argv+=("iteration 2") ;;
        --diff=A) argv+=("--diff=iteration 0") ;; *) argv+=("$w") ;; esac
    done
    "$C" report "${argv[@]}" | grep -q "^culeak: iteration 0 -> iteration 2: +0 bytes live$" || fail "report $args"
done

# suppressions generated from the report, then fed back: nothing left, all counted
"$C" report "$rec" --format suppressions -o "$tmp/all.supp"
[ "$(grep -c '^{$' "$tmp/all.supp")" -eq 2 ] || fail "one block per leak site"
"$C" report "$rec" --suppressions "$tmp/all.supp" --error-exitcode 5 >"$tmp/suppressed.txt" ||
    fail "report with every site suppressed: exit $?"
grep -q "^LEAK SUMMARY: 0 bytes leaked in 0 allocations from 0 call sites$" "$tmp/suppressed.txt" ||
    fail "suppressed leaks still reported"
grep -q "^suppressed: 4000 bytes in 3 allocations from 2 sites$" "$tmp/suppressed.txt" || fail "suppressed count"
grep -q "^  used suppression 'leak_site_b at .*' (.*all.supp:[0-9]*): 2000 bytes in 1 allocations$" \
    "$tmp/suppressed.txt" || fail "used suppression line"
# the same with check: --gen-suppressions, then the blocks fed back make it pass
set +e
"$C" check --gen-suppressions -- "$prog" sites >/dev/null 2>"$tmp/gen.txt"; rc=$?
set -e
[ "$rc" -eq 1 ] || fail "check --gen-suppressions on leaks: exit $rc"
sed -n '/^{$/,/^}$/p' "$tmp/gen.txt" >"$tmp/gen.supp"
[ "$(grep -c '^   culeak:Leak$' "$tmp/gen.supp")" -eq 2 ] || fail "check --gen-suppressions blocks"
"$C" check --suppressions="$tmp/gen.supp" -- "$prog" sites >/dev/null 2>"$tmp/check_supp.txt" ||
    fail "check with generated suppressions: exit $?"
grep -q "^suppressed: 4000 bytes in 3 allocations from 2 sites$" "$tmp/check_supp.txt" || fail "check suppressed count"

# a hand-written block suppresses one site of several (valgrind's syntax, wildcards, ...)
cat >"$tmp/one.supp" <<'S'
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
"$C" check --suppressions "$tmp/one.supp" -- "$prog" sites >/dev/null 2>"$tmp/one.txt"; rc=$?
set -e
[ "$rc" -eq 1 ] || fail "one site of two suppressed: exit $rc"
grep -q "^LEAK SUMMARY: 2000 bytes leaked in 2 allocations from 1 call sites$" "$tmp/one.txt" || fail "one site left"
grep -q "from leak_site_a at" "$tmp/one.txt" || fail "site a reported"
grep -q "from leak_site_b at" "$tmp/one.txt" && fail "site b reported though suppressed"
grep -q "^suppressed: 2000 bytes in 1 allocations from 1 sites$" "$tmp/one.txt" || fail "one site counted"
grep -q "used suppression 'site b is expected' (.*one.supp:2)" "$tmp/one.txt" || fail "one site named"
# --suppressions is repeatable: a block per file, each site suppressed by its own; the
# text report also goes to --log-file (its %p the program's pid)
sed -n '1,/^}$/p' "$tmp/all.supp" >"$tmp/first.supp"
sed -n '/^}$/,$p' "$tmp/all.supp" | tail -n +2 >"$tmp/second.supp"
[ "$(grep -c '^{$' "$tmp/first.supp")" -eq 1 ] && [ "$(grep -c '^{$' "$tmp/second.supp")" -eq 1 ] ||
    fail "splitting the generated blocks"
"$C" check --suppressions "$tmp/first.supp" --suppressions="$tmp/second.supp" --log-file "$tmp/two.%p.log" \
    -- "$prog" sites >/dev/null 2>"$tmp/two.stderr" || fail "two suppression files: exit $?"
log=$(ls "$tmp"/two.[0-9]*.log) || fail "check --log-file FILE.%p.log wrote no FILE.PID.log"
[ -s "$tmp/two.stderr" ] && grep -q "LEAK SUMMARY" "$tmp/two.stderr" && fail "check --log-file: the report went to stderr too"
grep -q "^suppressed: 4000 bytes in 3 allocations from 2 sites$" "$log" || fail "two files: suppressed count"
grep -q "used suppression .*(.*first.supp:1)" "$log" && grep -q "used suppression .*(.*second.supp:1)" "$log" ||
    fail "two files: each block named with its file"
# the kinds of a block limit it
sed 's/device,managed/pinned/' "$tmp/one.supp" >"$tmp/pinned.supp"
"$C" report "$rec" --suppressions "$tmp/pinned.supp" | grep -q "^suppressed: 0 bytes" || fail "match-leak-kinds"

# a malformed file: file:line, exit 2, and the job does not start
printf '{\n   name\n   culeak:Leak\n   fun:x\n   frob:y\n}\n' >"$tmp/bad.supp"
set +e
"$C" check --suppressions "$tmp/bad.supp" -- sh -c "touch '$tmp/ran'" 2>"$tmp/bad.txt"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "malformed suppressions: exit $rc"
grep -q "^culeak check: .*bad.supp:5: expected a frame line" "$tmp/bad.txt" || fail "malformed: no file:line"
[ -e "$tmp/ran" ] && fail "the job ran despite a malformed suppressions file"
"$C" report "$rec" --suppressions "$tmp/bad.supp" 2>/dev/null && fail "report took a malformed file"

# an output directory that does not exist fails before the job starts
for args in "check --output $tmp/no/such/dir/x.json" "check --log-file $tmp/no/dir/x.txt"; do
    set +e
    # shellcheck disable=SC2086
    "$C" $args -- sh -c "touch '$tmp/ran'" 2>"$tmp/nodir.txt"; rc=$?
    set -e
    [ "$rc" -ne 0 ] || fail "$args: exit 0"
    [ -e "$tmp/ran" ] && fail "$args: the job ran"
    grep -q "No such file or directory" "$tmp/nodir.txt" || fail "$args: no reason given"
done
# record makes a recording's missing directories, but not under a file
touch "$tmp/afile"
set +e
"$C" record -o "$tmp/afile/dir/r.culeak" -- sh -c "touch '$tmp/ran'" 2>"$tmp/nodir.txt"; rc=$?
set -e
[ "$rc" -ne 0 ] || fail "record under a file: exit 0"
[ -e "$tmp/ran" ] && fail "record under a file: the job ran"
grep -q "cannot write $tmp/afile/dir/r.culeak: Not a directory" "$tmp/nodir.txt" ||
    fail "record under a file: no reason given: $(cat "$tmp/nodir.txt")"

# one error style, and every command's --help
set +e
"$C" check --x -- true 2>"$tmp/err.txt"; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "unknown option: exit $rc"
[ "$(cat "$tmp/err.txt")" = "culeak check: unknown option '--x'
Try 'culeak check --help'." ] || fail "unknown option message"
set +e
"$C" record -- true 2>"$tmp/err.txt"; rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "^culeak record: missing -o FILE$" "$tmp/err.txt" || fail "record without -o"
# the help read whole: grep -q leaving a pipe early would end a long help with SIGPIPE
for cmd in record check report open dump; do
    "$C" "$cmd" --help >"$tmp/help.txt" && grep -q "^usage: culeak $cmd " "$tmp/help.txt" || fail "culeak $cmd --help"
done
"$C" --help >"$tmp/help.txt" && grep -q -- "--snapshot-at-marks" "$tmp/help.txt" || fail "culeak --help lacks the console's options"
"$C" --version | grep -q "^culeak [0-9]" || fail "culeak --version"
echo "cli_conventions: ok"
