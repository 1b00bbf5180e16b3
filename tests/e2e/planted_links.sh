#!/usr/bin/env bash
# No file culeak writes follows a symbolic link planted at its path (fake driver, tmux):
# check --output and --log-file, report --output (text and HTML) and --log-file, the
# console's --log-file, save, save breakpoints and export (CSV, JSON, HTML). Each target
# is a link to a file the test owns: that file is left as it was, and the link is
# replaced by the complete output (culeak writes a temporary file beside the target and
# renames it over; see culeak(1), FILES). In a directory the test owns, so the kernel's
# fs.protected_symlinks (sticky world-writable directories only) plays no part.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static
mkdir -m 700 "$T/d"
D=$T/d
echo precious >"$D/victim"
plant() { ln -sfn "$D/victim" "$D/$1"; }
# kept NAME TEXT: the victim is untouched and NAME is a regular file holding TEXT
kept() {
    [ "$(cat "$D/victim")" = precious ] || fail "$1: the link's target was written: $(head -c 200 "$D/victim")"
    [ -f "$D/$1" ] && [ ! -L "$D/$1" ] || fail "$1: not replaced by a regular file"
    grep -q -- "$2" "$D/$1" || fail "$1 does not hold '$2': $(head -c 300 "$D/$1")"
}
export LD_LIBRARY_PATH=$FAKE

for f in check_out check_log; do plant $f; done
"$B/culeak" check --output "$D/check_out" --log-file "$D/check_log" --format json -- \
    "$FAKE/client_static" leak 1 4096 >/dev/null 2>"$T/err"
[ $? -eq 1 ] || fail "check did not exit 1: $(cat "$T/err")"
kept check_out '"leaks"'
kept check_log "LEAK SUMMARY"

"$B/culeak" record -o "$T/rec.culeak" -- "$FAKE/client_static" leak 1 4096 >/dev/null 2>&1 || fail "record failed"
for f in rep_out rep_log rep_html; do plant $f; done
"$B/culeak" report --output "$D/rep_out" --log-file "$D/rep_log" --format json "$T/rec.culeak" 2>/dev/null ||
    fail "report failed"
kept rep_out '"leaks"'
kept rep_log "LEAK SUMMARY"
"$B/culeak" report -o "$D/rep_html" --format html "$T/rec.culeak" || fail "report --format html failed"
kept rep_html "<html"

# a device is written in place: /dev/stdout is a link, and no file to replace
"$B/culeak" report --output /dev/stdout "$T/rec.culeak" | grep -q "LEAK SUMMARY" || fail "report to /dev/stdout"
# but not through a link to one in a directory others can write (as /tmp): replaced too
mkdir -m 1777 "$D/pub"
ln -s /dev/null "$D/pub/devlink"
"$B/culeak" report --output "$D/pub/devlink" "$T/rec.culeak" || fail "report to a link in a shared directory"
[ -f "$D/pub/devlink" ] && [ ! -L "$D/pub/devlink" ] && grep -q "LEAK SUMMARY" "$D/pub/devlink" ||
    fail "a link to a device in a shared directory was followed"

for f in con_log save bps export.csv export.json export.html; do plant $f; done
# the job waits for $T/go while a breakpoint is set and saved, then leaks and exits
cp "$(dirname "$0")/c/gated_leak.c" "$T/job.c"
cc -g -O0 -o "$T/job" "$T/job.c" -ldl || fail "cannot build the job"
LEAK=job.c:$(grep -n "LEAK" "$T/job.c" | cut -d: -f1)
start --log-file "$D/con_log" -- "$T/job" "$T/go"
wait_for "1 proc (1 live)"
type_expect "break $LEAK grows 100MiB" "breakpoint 1 at"
type_expect "save breakpoints $D/bps" "saved 1 breakpoint"
kept bps "break"
touch "$T/go"
wait_for "EXITED (status 0)"
wait_file "$D/con_log" "LEAK SUMMARY"
kept con_log "LEAK SUMMARY"
type_expect "save $D/save" "saved the recording to $D/save"
kept save "CULEAK"
type_expect "export $D/export.csv" "to $D/export.csv"
kept export.csv "live"
type_expect "export $D/export.json" "to $D/export.json"
kept export.json "{"
type_expect "export $D/export.html" "wrote $D/export.html"
kept export.html "<html"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
leftover=$(find "$D" -name '.*' -type f)
[ -z "$leftover" ] || fail "temporary files left: $leftover"
echo "planted_links: ok"
