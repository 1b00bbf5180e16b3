#!/usr/bin/env bash
# The console with --suppressions: the exit leak report leaves the suppressed site out and
# counts it, and what the default suppressions match apart, and goes to --log-file FILE.%p too; export FILE.json writes the table as the JSON reports do (version, processes,
# each row's pid and stack).
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static

cat >"$T/b.supp" <<'S'
{
   site b
   culeak:Leak
   fun:leak_site_b
}
S
start --suppressions="$T/b.supp" --log-file "$T/exit.%p.txt" -- "$FAKE/client_static" sites
wait_for "EXITED (status 0)"
wait_for "suppressed: 2000 bytes in 1 allocations from 1 sites"
wait_for "leak report written to $T/exit."
log=$(ls "$T"/exit.[0-9]*.txt) || fail "--log-file exit.%p.txt: no exit.PID.txt"
grep -q "^LEAK SUMMARY: 2000 bytes leaked in 2 allocations from 1 call sites$" "$log" || fail "--log-file: no report"
grep -q "^suppressed: 2000 bytes in 1 allocations from 1 sites$" "$log" || fail "--log-file: no suppressed count"
screen | grep -q "LEAK SUMMARY: 2000 bytes leaked in 2 allocations from 1 call sites" || fail "leak summary"
type_line "export $T/table.json"
wait_for "exported"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
python3 - "$T/table.json" <<'PY' || fail "export JSON"
import json, sys
t = json.load(open(sys.argv[1]))
assert t["version"] == 1 and t["source"] == "console", t
pids = [p["pid"] for p in t["processes"]]
sites = {r["site"].split(" ")[0]: r for r in t["sites"]}
assert set(sites) >= {"leak_site_a", "leak_site_b"}, sites.keys()
a = sites["leak_site_a"]
assert a["live_bytes"] == 2000 and a["pid"] in pids, a
assert a["stack"][0]["function"] == "leak_site_a", a["stack"][0]
assert any(f["function"] == "main" for f in a["stack"]), a["stack"]
PY
# a malformed file stops the console before the job starts
printf '{\n  x\n  culeak:Leak\n}\n' >"$T/bad.supp"
start --suppressions "$T/bad.supp" -- "$FAKE/client_static" sites
wait_for "CONSOLE-DONE rc=2"
screen | grep -q "bad.supp:4: the block 'x' has no frame lines" || fail "malformed file message"
# a log file in a directory that does not exist: an error before the job starts
start --log-file "$T/no/such/dir/x.txt" -- sh -c "touch '$T/ran'"
wait_for "CONSOLE-DONE rc=2"
screen | grep -q "cannot write $T/no/such/dir/x.txt: No such file or directory" || fail "missing directory message"
[ -e "$T/ran" ] && fail "the job ran though its log file cannot be written"
# culeak's default suppressions: the exit report counts what the libraries hold until exit
# apart, not as leaks; --no-default-suppressions reports it as leaks
start -- "$FAKE/client_libs" clean
wait_for "EXITED (status 0)"
wait_for "LIBRARY SUMMARY: 15616 bytes in 5 allocations from 4 sites held by a library until exit"
screen | grep -q "LEAK SUMMARY: 0 bytes leaked in 0 allocations" || fail "the libraries' memory is leaked in the exit report"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
start --no-default-suppressions -- "$FAKE/client_libs" clean
wait_for "EXITED (status 0)"
wait_for "LEAK SUMMARY: 15616 bytes leaked in 5 allocations"
screen | grep -q "LIBRARY SUMMARY" && fail "a LIBRARY SUMMARY with --no-default-suppressions"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
echo "console_suppress: ok"
