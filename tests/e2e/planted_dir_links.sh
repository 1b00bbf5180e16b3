#!/usr/bin/env bash
# No file culeak writes goes through a directory link another user planted on its way
# (fake driver): in a directory everyone may write (as /tmp), `run` is another user's
# link to a directory of the test's; check --output, report --output and --log-file,
# report -o (HTML) and record -o to run/NAME each refuse, say why, and leave the files
# there as they were (before, only a link at the last name was refused). planted_links.sh
# covers a link at the last name.
set -u
. "$(dirname "$0")/lib.sh"
export LD_LIBRARY_PATH=$B/fakecuda
JOB="$B/fakecuda/client_static leak 1 4096"
mkdir -m 700 "$T/victims"
mkdir -m 1777 "$T/pub"
ln -s "$T/victims" "$T/pub/run"
if ! chown -h nobody "$T/pub/run" 2>/dev/null; then
    echo "planted_dir_links: SKIP (another user's link needs root to be made here)"
    exit 0
fi
for f in out log html rec.culeak; do echo precious >"$T/victims/$f"; done
R=$T/pub/run
# refused NAME: the victim is untouched, the refusal said in $T/err
refused() {
    [ "$(cat "$T/victims/$1")" = precious ] || fail "$1 was written through the planted link"
    grep -q "Too many levels of symbolic links" "$T/err" || fail "$1: no refusal said: $(cat "$T/err")"
}
"$B/culeak" check --output "$R/out" -- $JOB >/dev/null 2>"$T/err"
refused out
"$B/culeak" check --log-file "$R/log" -- $JOB >/dev/null 2>"$T/err"
refused log
"$B/culeak" record -o "$T/rec.culeak" -- $JOB >/dev/null 2>&1 || fail "record failed"
"$B/culeak" report --output "$R/out" "$T/rec.culeak" >/dev/null 2>"$T/err"
refused out
"$B/culeak" report -o "$R/html" --format html "$T/rec.culeak" >/dev/null 2>"$T/err"
refused html
"$B/culeak" record -o "$R/rec.culeak" -- $JOB >/dev/null 2>"$T/err"
refused rec.culeak
"$B/culeak" record -o "$R/r.%p.culeak" -- $JOB >/dev/null 2>"$T/err"
[ -z "$(ls "$T/victims" | grep '^r\.')" ] || fail "a recording was made through the planted link"
echo "planted_dir_links: ok"
