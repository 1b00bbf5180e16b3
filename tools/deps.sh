#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages of tools/packages.deb that are missing, saying in one
# line what and why: with apt-get as root, through sudo otherwise; with neither, it stops
# and prints the command to run. A name the system's archives lack is left out with a note
# (and remembered, so not asked for again). When everything is there it does nothing but
# one dpkg-query call. Without dpkg-query and apt-get (another distribution) it installs
# nothing and, when pkg-config misses a library, points at README.md's package names.
# `make run`, `make test` and `make deps` run it. Environment: CULEAK_PACKAGES (the list).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
list=${CULEAK_PACKAGES:-$here/packages.deb}

say() { echo "culeak set-up: $*" >&2; }

# "package  # why" lines; blank lines and comment lines skipped.
names=() whys=()
while IFS= read -r line || [ -n "$line" ]; do
    why=
    [[ $line == *"#"* ]] && why=${line#*#}
    read -r name _ <<<"${line%%#*}"
    [ -n "$name" ] || continue
    read -r why <<<"$why"
    names+=("$name") whys+=("$why")
done <"$list"

if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
    absent=()
    for m in libunwind libdw ncursesw vterm cmocka; do
        pkg-config --exists "$m" 2>/dev/null || absent+=("$m")
    done
    [ ${#absent[@]} -eq 0 ] ||
        say "no apt-get here, and pkg-config finds no ${absent[*]}: install the packages that README.md (Set-up) names for this system"
    exit 0
fi

# One dpkg-query call for all; "ii" is installed, unknown names print nothing.
declare -A have=()
while read -r status name; do
    [ "$status" = ii ] && have[$name]=1
done < <(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' "${names[@]}" 2>/dev/null)

# Names that an earlier run found in none of this system's package archives (another
# release may name the package otherwise) are not asked for again until this file goes.
cache=${XDG_CACHE_HOME:-${HOME:+$HOME/.cache}}
unavailable=${cache:-/nonexistent}/culeak/unavailable-packages
{ skip=$(<"$unavailable"); } 2>/dev/null || skip=
skip=" ${skip//$'\n'/ } "

missing=() reasons=
for i in "${!names[@]}"; do
    [ -n "${have[${names[i]}]:-}" ] && continue
    [[ $skip == *" ${names[i]} "* ]] && continue
    missing+=("${names[i]}")
    reasons+="${reasons:+, }${names[i]}${whys[i]:+ (${whys[i]})}"
done
[ ${#missing[@]} -eq 0 ] && exit 0

by_hand="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" = 0 ]; then
    sudo=()
elif command -v sudo >/dev/null && { sudo -n true 2>/dev/null || [ -t 0 ]; }; then
    sudo=(sudo)
else
    say "missing ${missing[*]}; not root and no sudo: as root, run"
    echo "    $by_hand" >&2
    say "then run make again"
    exit 1
fi

failed() {
    say "the installation failed; as root, run"
    echo "    $by_hand" >&2
    exit 1
}
say "installing ${reasons} with ${sudo[*]}${sudo:+ }apt-get"
"${sudo[@]}" apt-get update -qq >&2 || failed

# A name the archives do not have (Ubuntu has no chromium deb; older releases have no
# libclang-rt-dev) is left out with a note instead of failing the whole installation.
declare -A known=()
while IFS= read -r line; do
    case $line in
    [!\ ]*:) name=${line%:} ;;
    *"Candidate: (none)"*) ;;
    *"Candidate: "*) known[$name]=1 ;;
    esac
done < <(apt-cache policy "${missing[@]}" 2>/dev/null)
install=() absent=()
for p in "${missing[@]}"; do
    if [ -n "${known[$p]:-}" ]; then install+=("$p"); else absent+=("$p"); fi
done
if [ ${#absent[@]} -gt 0 ]; then
    say "not in this system's package archives, left out: ${absent[*]} (the tests that need them will fail; $unavailable remembers them)"
    [ -z "$cache" ] || { mkdir -p "${unavailable%/*}" && printf '%s\n' "${absent[@]}" >>"$unavailable"; }
fi
[ ${#install[@]} -eq 0 ] ||
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${install[@]}" >&2 ||
    failed
