#!/usr/bin/env bash
# tools/deps.sh (the set-up `make run` and `make test` do) with stand-ins for dpkg-query,
# apt-get, apt-cache, sudo, id and pkg-config on PATH: the exact apt-get commands for
# missing packages as root and through sudo, nothing when all are installed, a package the
# archives lack left out (and not asked for again), the command to run by hand without
# root or sudo, and `make test` stopping before it builds anything then.
set -euo pipefail
. "$(dirname "$0")/../e2e/lib.sh"
cd "$ROOT"
show_failure() { [ -f "$T/err" ] && sed 's/^/    stderr: /' "$T/err"; }

bin=$T/bin log=$T/log
mkdir "$bin"
for tool in dirname env mkdir; do ln -s "$(command -v $tool)" "$bin/$tool"; done
stub() { printf '#!%s\n%s\n' "$BASH" "$2" >"$bin/$1"; chmod +x "$bin/$1"; }
stub dpkg-query 'echo "dpkg-query $*" >>"$LOG"
for a in "$@"; do
    case $a in -*) continue ;; esac
    if [[ " $INSTALLED " == *" $a "* ]]; then echo "ii  $a"; else echo "dpkg-query: no packages found matching $a" >&2; fi
done'
stub apt-get 'echo "apt-get $* [DEBIAN_FRONTEND=${DEBIAN_FRONTEND:-}]" >>"$LOG"; exit "${APT_RC:-0}"'
stub apt-cache 'echo "apt-cache $*" >>"$LOG"
shift
for p in "$@"; do
    [ "$AVAILABLE" = all ] || [[ " $AVAILABLE " == *" $p "* ]] || continue
    printf "%s:\n  Installed: (none)\n  Candidate: 1.0-1\n  Version table:\n" "$p"
done'
stub id '[ "$1" = -u ] && echo "$UID_IS"'
stub pkg-config 'echo "pkg-config $*" >>"$LOG"; [[ " $INSTALLED " == *" ${@: -1} "* ]]'
sudo_stub='echo "sudo $*" >>"$LOG"; [ "$*" = "-n true" ] && exit "${SUDO_RC:-0}"; exec "$@"'

# The package names, read here independently of tools/deps.sh.
all=$(sed 's/#.*//' tools/packages.deb | awk 'NF { print $1 }' | paste -sd ' ')
[ "$(wc -w <<<"$all")" -ge 10 ] || fail "tools/packages.deb lists only: $all"
case " $all " in *" libunwind-dev "*" tmux "*) ;; *) fail "libunwind-dev and tmux not in the list" ;; esac
some=$(sed 's/ libunwind-dev / /; s/ tmux / /' <<<" $all ")

deps() { : >"$log"; env -i PATH="$bin" LOG="$log" INSTALLED="$1" UID_IS="$2" APT_RC="${APT_RC:-0}" SUDO_RC="${SUDO_RC:-0}" \
    AVAILABLE="${AVAILABLE:-all}" XDG_CACHE_HOME="$T/cache" \
    "$BASH" "$ROOT/tools/deps.sh" </dev/null >"$T/out" 2>"$T/err"; }
want_log() { diff <(printf '%s\n' "$@") "$log" >"$T/diff" || { cat "$T/diff"; fail "$case: commands run differ (want < > got)"; }; }
install_line="install -y -qq --no-install-recommends libunwind-dev tmux"

case="all installed"
deps "$all" 0 || fail "$case: exit status $?"
want_log "dpkg-query -W -f=\${db:Status-Abbrev} \${Package}\n $all"
[ ! -s "$T/out" ] && [ ! -s "$T/err" ] || fail "$case: said something"

case="root, two missing"
deps "$some" 0 || fail "$case: exit status $?"
want_log "dpkg-query -W -f=\${db:Status-Abbrev} \${Package}\n $all" \
    "apt-get update -qq [DEBIAN_FRONTEND=]" "apt-cache policy libunwind-dev tmux" \
    "apt-get $install_line [DEBIAN_FRONTEND=noninteractive]"
[ "$(wc -l <"$T/err")" = 1 ] || fail "$case: not one line"
grep -q '^culeak set-up: installing libunwind-dev (the shim captures stacks with libunwind), tmux (.*tmux.*) with apt-get$' \
    "$T/err" || fail "$case: the line does not say what and why"

case="root, tmux in no archive"
AVAILABLE=libunwind-dev deps "$some" 0 || fail "$case: exit status $?"
want_log "dpkg-query -W -f=\${db:Status-Abbrev} \${Package}\n $all" \
    "apt-get update -qq [DEBIAN_FRONTEND=]" "apt-cache policy libunwind-dev tmux" \
    "apt-get install -y -qq --no-install-recommends libunwind-dev [DEBIAN_FRONTEND=noninteractive]"
grep -q "^culeak set-up: not in this system's package archives, left out: tmux (" "$T/err" || fail "$case: no note"
case="root, tmux in no archive, again"
AVAILABLE=libunwind-dev deps "$some libunwind-dev" 0 || fail "$case: exit status $?"
want_log "dpkg-query -W -f=\${db:Status-Abbrev} \${Package}\n $all"
[ ! -s "$T/err" ] || fail "$case: said something"
rm -r "$T/cache"

stub sudo "$sudo_stub"
case="not root, sudo without a password"
deps "$some" 1000 || fail "$case: exit status $?"
want_log "dpkg-query -W -f=\${db:Status-Abbrev} \${Package}\n $all" "sudo -n true" \
    "sudo apt-get update -qq" "apt-get update -qq [DEBIAN_FRONTEND=]" "apt-cache policy libunwind-dev tmux" \
    "sudo env DEBIAN_FRONTEND=noninteractive apt-get $install_line" "apt-get $install_line [DEBIAN_FRONTEND=noninteractive]"
grep -q 'with sudo apt-get$' "$T/err" || fail "$case: does not say sudo"

by_hand="    apt-get update && apt-get install -y --no-install-recommends libunwind-dev tmux"
case="not root, sudo wants a password, no terminal"
SUDO_RC=1 deps "$some" 1000 && fail "$case: exit status 0"
want_log "dpkg-query -W -f=\${db:Status-Abbrev} \${Package}\n $all" "sudo -n true"
grep -qxF -- "$by_hand" "$T/err" || fail "$case: no command to run by hand"

rm "$bin/sudo"
case="not root, no sudo"
deps "$some" 1000 && fail "$case: exit status 0"
want_log "dpkg-query -W -f=\${db:Status-Abbrev} \${Package}\n $all"
grep -q '^culeak set-up: missing libunwind-dev tmux; not root and no sudo: as root, run$' "$T/err" || fail "$case: message"
grep -qxF -- "$by_hand" "$T/err" || fail "$case: no command to run by hand"

case="apt-get fails"
APT_RC=100 deps "$some" 0 && fail "$case: exit status 0"
grep -qxF -- "$by_hand" "$T/err" || fail "$case: no command to run by hand"

case="no apt-get (another distribution)"
mv "$bin/apt-get" "$bin/apt-get.off"
deps "libunwind libdw ncursesw vterm cmocka" 0 || fail "$case: exit status $?"
! grep -q '^dpkg-query\|^apt-get' "$log" && [ ! -s "$T/err" ] || fail "$case: ran or said something"
deps "libunwind ncursesw" 0 || fail "$case, libraries missing: exit status $?"
grep -q 'pkg-config finds no libdw vterm cmocka: install the packages that README.md (Set-up) names' "$T/err" ||
    fail "$case: no pointer to README"
mv "$bin/apt-get.off" "$bin/apt-get"

# make test with a package missing and no way to install it: stops before building. (A
# sudo that wants a password stands in front of any real one.)
case="make test"
stub sudo "$sudo_stub"
: >"$log"
make_out=$(env PATH="$bin:$PATH" LOG="$log" INSTALLED="$some" UID_IS=1000 SUDO_RC=1 make -n test BUILD="$T/build" \
    </dev/null 2>&1) && fail "$case: make succeeded"
grep -qxF -- "$by_hand" <<<"$make_out" || { echo "$make_out"; fail "$case: no command to run by hand"; }
grep -q 'the set-up stopped' <<<"$make_out" || { echo "$make_out"; fail "$case: make did not stop"; }
! grep -q '^cc \|^gcc ' <<<"$make_out" || fail "$case: compiled anyway"
! grep -q apt-get "$log" || fail "$case: ran apt-get"
echo "deps: ok (11 cases)"
