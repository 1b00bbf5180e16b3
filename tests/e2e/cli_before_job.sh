#!/usr/bin/env bash
# What culeak settles before the job starts: a program that does not exist or cannot be
# run fails as a shell fails (127, 126; no console, no report, no recording); a recording
# whose directory does not exist or cannot be written fails before the job runs; a relative -o is the path in
# culeak's own directory even when the job changes directory; recordings are private (0600).
set -u
. "$(dirname "$0")/lib.sh"
export LD_LIBRARY_PATH=$B/fakecuda
cd "$T"

# expect STATUS MESSAGE culeak ARGS...: exit status and the whole of stderr
expect() {
    local want=$1 msg=$2
    shift 2
    "$B/culeak" "$@" >"$T/out" 2>"$T/err" </dev/null
    local rc=$?
    [ "$rc" -eq "$want" ] || fail "culeak $*: status $rc, want $want: $(cat "$T/err")"
    [ "$(cat "$T/err")" = "$msg" ] || fail "culeak $*: stderr '$(cat "$T/err")', want '$msg'"
    [ -s "$T/out" ] && fail "culeak $*: printed $(cat "$T/out")"
    return 0
}
mkdir "$T/adir"
printf 'no exec bit\n' >"$T/plain"
for cmd in "" "check" "record -o $T/r.culeak"; do
    # shellcheck disable=SC2086
    expect 127 "culeak: cannot run ./nonexistent: No such file or directory" $cmd -- ./nonexistent
    # shellcheck disable=SC2086
    expect 127 "culeak: cannot run no-such-command-here: No such file or directory" $cmd -- no-such-command-here
    # shellcheck disable=SC2086
    expect 126 "culeak: cannot run ./plain: Permission denied" $cmd -- ./plain
    # shellcheck disable=SC2086
    expect 126 "culeak: cannot run ./adir: Is a directory" $cmd -- ./adir
done
[ -e "$T/r.culeak" ] && fail "a recording was made for a program that does not exist"

# a recording that cannot be created (its directory would be under a file; a missing
# directory is made): culeak fails and the job never runs
touch "$T/afile"
expect 1 "culeak record: cannot write $T/afile/dir/x: Not a directory" \
    record -o "$T/afile/dir/x" -- sh -c "touch $T/ran"
[ -e "$T/ran" ] && fail "the job ran though its recording could not be written"

# a directory this user cannot write (root runs it without its power to override that)
mkdir "$T/ro"
chmod 555 "$T/ro"
as_user=()
[ "$(id -u)" -eq 0 ] && as_user=(setpriv --bounding-set=-dac_override,-dac_read_search --)
"${as_user[@]}" "$B/culeak" record -o "$T/ro/x" -- sh -c "touch $T/ran" >"$T/out" 2>"$T/err" </dev/null
rc=$?
[ "$rc" -eq 1 ] || fail "record into an unwritable directory: status $rc, want 1: $(cat "$T/err")"
[ "$(cat "$T/err")" = "culeak record: cannot write $T/ro/x: Permission denied" ] ||
    fail "record into an unwritable directory said: $(cat "$T/err")"
[ -e "$T/ran" ] && fail "the job ran though its recording could not be written"

# a relative -o, a job that changes directory before its first CUDA call
mkdir "$T/elsewhere"
"$B/culeak" record -o rel.culeak -- sh -c "cd $T/elsewhere && exec $B/fakecuda/client_static leak 1 64" \
    >/dev/null 2>"$T/err" || fail "record exited $?: $(cat "$T/err")"
[ -e "$T/rel.culeak" ] || fail "the recording is not where -o named it: $(ls -R "$T")"
[ -e "$T/elsewhere/rel.culeak" ] && fail "the recording went into the job's new directory"
[ "$(stat -c %a "$T/rel.culeak")" = 600 ] || fail "the recording is not private: $(stat -c %a "$T/rel.culeak")"
"$B/culeak" dump "$T/rel.culeak" | grep -q '"type":"alloc"' || fail "the recording lacks the allocation"
# a statically linked program: the shim cannot reach it, and check says so
printf 'int main(void) { return 0; }\n' >"$T/st.c"
cc -static -o "$T/static_prog" "$T/st.c" || fail "cannot build a static program (cc -static)"
"$B/culeak" check -- "$T/static_prog" >/dev/null 2>"$T/err" || fail "check on a static program: $(cat "$T/err")"
grep -q "static_prog is statically linked, out of a preloaded library's reach" "$T/err" ||
    fail "check does not say the program is static: $(cat "$T/err")"
echo "cli_before_job: ok"
