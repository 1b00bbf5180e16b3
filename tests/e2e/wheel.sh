#!/usr/bin/env bash
# The wheel as a user gets culeak: `make wheel`, then `pip install --no-index` of it into a
# fresh venv under a fresh HOME, run from there with a PATH and LD_LIBRARY_PATH that lead
# nowhere near the build tree (the simulated driver and the jobs are copied out of it):
# - every ELF file installed needs nothing outside the wheel but the manylinux base set,
#   and ldd resolves each need into the wheel; a vendored library's SONAME is its hashed
#   file name;
# - culeak and python -m culeak give the VERSION file's version, as do pip, culeak.pc and
#   the JSON report; culeak starts from inside a job under culeak;
# - check, record and report on the simulated loop-leak demo; blocks of the fake caching
#   allocator (the torch bridge); `import culeak` in the job's own Python finds the
#   helpers, which that Python cannot import without culeak;
# - the console in tmux on the demo, with an LD_LIBRARY_PATH holding impostors of every
#   vendored library (their SONAMEs, no code): /proc/PID/maps of the console and of the
#   job show no library outside the base set from anywhere but the wheel and the job's
#   own directory;
# - a job with a libunwind.so.8 and a libncursesw of its own (the libunwind another one:
#   the same symbols, other answers): its calls reach its own, and the shim's stacks stay
#   right (the wheel's libunwind is loaded privately, under a name of its own);
# - the job gets the environment and signal dispositions culeak was given (no locale
#   Python set, no SIGPIPE ignored);
# - the header and pkg-config file in the venv's prefix build a program; the man pages
#   lie in the venv's share/man, where man finds them from PATH.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
export TMUX_TMPDIR=$T
at_exit 'tmux kill-server 2>/dev/null'
version=$(cat VERSION)
# the manylinux base set: glibc's libraries, libgcc_s, libstdc++
base='^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libutil\.so\.1|libresolv\.so\.2|libanl\.so\.1|ld-linux-x86-64\.so\.2|libgcc_s\.so\.1|libstdc\+\+\.so\.6)$'

# Built once, as `make wheel` builds it, into a folder of this test's own.
# (a release build, without sanitizers, whatever build the suite runs on)
make -s SAN=0 BUILD=build DIST="$T/dist" wheel demo-sim >"$T/make.out" 2>&1 || { cat "$T/make.out"; fail "make wheel failed"; }
whl=$(ls "$T"/dist/culeak-"$version"-py3-none-manylinux_2_*_x86_64.whl) || fail "no wheel named for version $version"
glibc=$(basename "$whl" | sed 's/.*manylinux_2_\([0-9]*\)_x86_64.whl/\1/')

# A new user: a fresh HOME, a venv, pip with no index.
home=$T/home venv=$T/venv
mkdir -p "$home"
env -i HOME="$home" PATH=/usr/bin:/bin python3 -m venv "$venv" || fail "python3 -m venv failed"
env -i HOME="$home" PATH="$venv/bin:/usr/bin:/bin" "$venv/bin/pip" install -q --no-index "$whl" >"$T/pip.out" 2>&1 ||
    { cat "$T/pip.out"; fail "pip install failed"; }
site=$("$venv/bin/python" -c 'import culeak, os; print(os.path.dirname(os.path.dirname(culeak.__file__)))')
pkg=$site/culeak libs=$site/culeak.libs
[ -x "$venv/bin/culeak" ] || fail "no culeak in the venv's bin"
[ -d "$libs" ] || fail "no culeak.libs beside the package"

# Every ELF file: its needs are the base set or files of culeak.libs; ldd, with no
# LD_LIBRARY_PATH, finds each of them there; the newest GLIBC_ version is the tag's.
elves=0 newest=0
while IFS= read -r -d '' f; do
    [ "$(head -c 4 "$f")" = $'\x7fELF' ] || continue
    elves=$((elves + 1))
    for need in $(readelf -dW "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
        [[ $need =~ $base ]] || [ -f "$libs/$need" ] || fail "${f#"$site"/} needs $need, which is neither in the wheel nor in the base set"
    done
    # shellcheck disable=SC2016 # $ORIGIN is the dynamic loader's
    readelf -dW "$f" | grep -E '\((RPATH|RUNPATH)\)' | grep -v '\[\$ORIGIN' && fail "${f#"$site"/} has a search path outside the wheel"
    while read -r name _ path _; do
        [[ $name =~ $base ]] && continue
        path=$(realpath -m "$path")
        case $path in
        "$libs"/*) ;;
        *) fail "${f#"$site"/}: ldd finds $name at $path, outside the wheel" ;;
        esac
    done < <(env -u LD_LIBRARY_PATH ldd "$f" | grep '=>')
    n=$(readelf -VW "$f" | sed -n 's/.*Name: GLIBC_2\.\([0-9]*\).*/\1/p' | sort -n | tail -n 1)
    [ "${n:-0}" -le "$newest" ] || newest=$n
done < <(find "$pkg" "$libs" -type f -print0)
[ "$elves" -ge 14 ] || fail "only $elves ELF files installed"
[ "$newest" = "$glibc" ] || fail "the wheel is tagged manylinux_2_$glibc, its files need GLIBC_2.$newest"
for lib in libunwind libdw libelf libvterm libncursesw libtinfo libreadline; do
    ls "$libs/$lib"-[0-9a-f]*.so.* >/dev/null 2>&1 || fail "$lib is not vendored with a hashed name"
done
# a vendored library is known by its hashed name (its SONAME): a job's own copy of the
# library is never taken for it, nor it for the job's
for f in "$libs"/*; do
    soname=$(readelf -dW "$f" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [ "$soname" = "$(basename "$f")" ] || fail "${f#"$site"/} keeps the SONAME ${soname:-(none)}"
done
for f in LICENSE libunwind8.copyright libreadline8.copyright; do
    [ -f "$site/culeak-$version.dist-info/licenses/$f" ] || fail "no licenses/$f in the dist-info"
done

# The job side, out of the build tree: the simulated driver (and torch) and the demo; and
# impostors of every vendored library (their SONAMEs, no code) first on LD_LIBRARY_PATH.
job=$T/job imp=$T/impostors
mkdir -p "$job" "$imp"
cp -r build/fakecuda/. "$job/"
cp build/demo/loop_leak_sim "$job/"
# (not of those the venv's Python needs itself: LD_LIBRARY_PATH would break the Python
# that runs the culeak command, whatever culeak is)
python_needs=$(ldd "$(realpath "$venv/bin/python")" | awk '{ print $1 }')
echo 'int culeak_impostor;' >"$T/impostor.c"
for f in "$libs"/*; do
    soname=$(basename "$f" | sed 's/-[0-9a-f]\{8\}\.so/.so/')
    grep -qxF "$soname" <<<"$python_needs" && continue
    cc -shared -fPIC -Wl,-soname,"$soname" -o "$imp/$soname" "$T/impostor.c"
done
[ -f "$imp/libunwind.so.8" ] || fail "no impostor of libunwind: $(ls "$imp")"
# the user's environment: nothing of the build tree, no locale
U=(env -i HOME="$home" PATH="$venv/bin:/usr/bin:/bin" LD_LIBRARY_PATH="$imp:$job" TERM=xterm-256color
   XDG_RUNTIME_DIR="$T/run")
mkdir -m 700 "$T/run"

got=$("${U[@]}" culeak --version) || fail "culeak --version failed"
[ "$got" = "culeak $version" ] || fail "culeak --version: '$got', VERSION says $version"
got=$("${U[@]}" python -m culeak --version) || fail "python -m culeak --version failed"
[ "$got" = "culeak $version" ] || fail "python -m culeak --version: '$got'"
# culeak from inside a job under culeak, whose PYTHONPATH holds the helpers' culeak.py
got=$("${U[@]}" culeak record -o "$T/nested.culeak" -- culeak --version 2>/dev/null) || fail "culeak inside culeak failed"
[ "$got" = "culeak $version" ] || fail "culeak inside culeak: '$got'"
got=$("${U[@]}" pip show culeak 2>&1) || fail "pip show culeak failed: $got"
grep -qx "Version: $version" <<<"$got" || fail "pip show: not version $version: $got"

cd "$T"
# check, record, report on the demo
"${U[@]}" culeak check --error-exitcode 3 -- "$job/loop_leak_sim" >/dev/null 2>"$T/check" && rc=0 || rc=$?
[ "$rc" = 3 ] || { cat "$T/check"; fail "culeak check exited $rc, expected 3"; }
grep -q '^LEAKED 76.0 MiB .* in 19 allocations .*loop_leak_sim\.c:39$' "$T/check" || { cat "$T/check"; fail "check: no leak at loop_leak_sim.c:39"; }
"${U[@]}" culeak record -o "$T/rec.culeak" -- "$job/loop_leak_sim" >/dev/null 2>&1 || fail "culeak record failed"
"${U[@]}" culeak report "$T/rec.culeak" 2>&1 | grep -q '^LEAK SUMMARY: 79691776 bytes leaked in 19 allocations' ||
    fail "culeak report does not find the leak"
"${U[@]}" culeak report --format json "$T/rec.culeak" | grep -q "^{\"version\":1,\"culeak\":\"$version\"," ||
    fail "the JSON report does not carry culeak $version"
# the default suppressions shipped in the wheel are read: a clean job whose libraries keep
# their handles until exit passes check
"${U[@]}" culeak check -- "$job/client_libs" clean \
    >/dev/null 2>"$T/libs" || { cat "$T/libs"; fail "check of a clean job with library handles failed"; }
grep -q "^  used default suppression 'xla-stream-executor-init' ($venv/.*/site-packages/culeak/share/culeak/default.supp:[0-9]*):" \
    "$T/libs" || { cat "$T/libs"; fail "the wheel's default suppressions are not read from the wheel"; }

jobpy=$(PATH=/usr/bin:/bin command -v python3)
# the torch bridge: blocks of the fake caching allocator, from the job's own python3
"${U[@]}" FAKE_LIBCUDA="$job/libcuda.so.1" FAKE_C10="$job/torch/lib/libc10_cuda.so" \
    culeak record -o "$T/blocks.culeak" -- "$jobpy" "$ROOT/tests/e2e/python/blocks_train.py" 8 >/dev/null 2>"$T/blocks.err" ||
    { cat "$T/blocks.err"; fail "recording the fake torch job failed"; }
grep -q 'tracking off' "$T/blocks.err" && { cat "$T/blocks.err"; fail "tensor tracking off"; }
[ "$("${U[@]}" culeak dump "$T/blocks.culeak" | grep -c '"api":"torch.alloc","kind":"block"')" = 17 ] ||
    fail "the bridge did not report the 17 blocks"

# the helpers: the job's own Python (the system's, not the venv's) imports them under
# culeak, and not without
out=$("${U[@]}" culeak record -o "$T/py.culeak" -- "$jobpy" -c 'import culeak; print(culeak.__file__, culeak.active())' 2>/dev/null)
[ "$out" = "$pkg/share/culeak/python/culeak.py True" ] || fail "import culeak under culeak: '$out'"
"${U[@]}" "$jobpy" -c 'import culeak' 2>/dev/null && fail "$jobpy imports culeak without culeak: it was touched"

# the job's environment and signals are the ones culeak was given
"${U[@]}" culeak record -o "$T/env.culeak" -- env >"$T/env" 2>/dev/null || fail "culeak record -- env failed"
grep -E '^(LC_|LANG)' "$T/env" && fail "the job got a locale no one set"
want=$("${U[@]}" grep SigIgn /proc/self/status)
got=$("${U[@]}" culeak record -o "$T/sig.culeak" -- grep SigIgn /proc/self/status 2>/dev/null)
[ "$got" = "$want" ] || fail "signals ignored in the job: $got, without culeak: $want"

# a job with its own libunwind.so.8 (another: the same names, other answers) and libncursesw
mkdir "$T/own"
cat >"$T/own/unwind.c" <<'C'
int unw_backtrace(void **buf, int n) { (void)buf; (void)n; return 4242; }
int _ULx86_64_init_local(void *c, void *u) { (void)c; (void)u; return -1; }
int _ULx86_64_step(void *c) { (void)c; return -1; }
int _ULx86_64_get_reg(void *c, int r, void *v) { (void)c; (void)r; (void)v; return -1; }
int _Ux86_64_getcontext(void *u) { (void)u; return -1; }
int _ULx86_64_set_caching_policy(void *a, int p) { (void)a; (void)p; return -1; }
void *_ULx86_64_local_addr_space;
C
cat >"$T/own/job.c" <<'C'
#include <curses.h>
#include <stdio.h>
#include <string.h>
int unw_backtrace(void **buf, int n);
int cuInit(unsigned flags);
int cuDeviceGet(int *dev, int ordinal);
int cuDevicePrimaryCtxRetain(void **ctx, int dev);
int cuCtxSetCurrent(void *ctx);
int cuMemAlloc_v2(unsigned long long *p, size_t size);
int main(void)
{
    void *buf[8];
    int dev;
    void *ctx;
    unsigned long long p;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx))
        return 1;
    if (cuMemAlloc_v2(&p, 12345)) /* OWN-LEAK */
        return 1;
    printf("own unw_backtrace %d, own %s\n", unw_backtrace(buf, 8), strstr(curses_version(), "ncurses") ? "ncurses" : "?");
    fflush(stdout);
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    while (maps && fgets(line, sizeof line, maps))
        fputs(line, stderr);
    return 0;
}
C
cc -shared -fPIC -Wl,-soname,libunwind.so.8 -o "$T/own/libunwind.so.8" "$T/own/unwind.c"
cc -g -o "$T/own/job" "$T/own/job.c" "$T/own/libunwind.so.8" -L"$job" -lcuda -lncursesw -Wl,-rpath,"$T/own"
leak_line=$(grep -n 'OWN-LEAK' "$T/own/job.c" | cut -d: -f1)
# (no impostors here: the job's own libncursesw needs the real libtinfo)
"${U[@]}" LD_LIBRARY_PATH="$job" culeak check -- "$T/own/job" >"$T/own/out" 2>"$T/own/err" && rc=0 || rc=$?
[ "$rc" = 1 ] || { cat "$T/own/err"; fail "check of the job with its own libunwind exited $rc, expected 1"; }
grep -qx 'own unw_backtrace 4242, own ncurses' "$T/own/out" || fail "the job's own libraries did not answer it: $(cat "$T/own/out")"
grep -q "^LEAKED .* in 1 allocation .*job\.c:$leak_line$" "$T/own/err" ||
    { cat "$T/own/err"; fail "the shim's stack of the leak is not job.c:$leak_line beside the job's own libunwind"; }
grep -q "$libs/libunwind-" "$T/own/err" || fail "the job has not the wheel's libunwind"
grep -q "$T/own/libunwind.so.8" "$T/own/err" ||
    fail "the job does not hold both libunwinds: $(grep -i unwind "$T/own/err")"

# maps_ok WHO PID: every library mapped is the base set's, the wheel's, or the job's own
maps_ok() {
    local who=$1 pid=$2 path
    [ -r "/proc/$pid/maps" ] || fail "cannot read the maps of the $who (pid $pid)"
    while read -r path; do
        [[ $(basename "$path") =~ $base ]] && continue
        case $path in
        "$site"/culeak/* | "$libs"/* | "$job"/* | */gconv/*) ;;
        *) fail "the $who (pid $pid) has $path loaded: not the base set's, nor the wheel's" ;;
        esac
    done < <(awk '$6 ~ /\.so(\.|$)/ { print $6 }' "/proc/$pid/maps" | sort -u)
}
# the console on the demo, paced so that it runs while its maps are read
tmux new-session -d -s keepalive -x 20 -y 5 "sleep 600"
tmux new-session -d -s wheel -x 120 -y 40 "exec ${U[*]} culeak -- $job/loop_leak_sim --delay-ms 500"
console=$(tmux display-message -p -t wheel '#{pane_pid}')
screen() { tmux capture-pane -p -t wheel; }
for _ in $(seq 1 600); do screen | grep -q 'started pid [0-9]*;' && break; sleep 0.1; done
jobpid=$(screen | sed -n 's/.*\[culeak\] started pid \([0-9]*\);.*/\1/p' | head -n 1)
[ -n "$jobpid" ] || { screen; fail "the console never started the job"; }
for _ in $(seq 1 600); do screen | grep -q 'loop_leak_sim.c:39' && break; sleep 0.1; done
screen | grep -q 'loop_leak_sim.c:39' || { screen; fail "the console never showed loop_leak_sim.c:39"; }
maps_ok console "$console"
maps_ok job "$jobpid"
grep -q "$pkg/lib/culeak/libculeak.so" "/proc/$jobpid/maps" || fail "the job has not the wheel's shim"
grep -q "$libs/libvterm-" "/proc/$console/maps" || fail "the console has not the wheel's libvterm"

# the header and pkg-config file in the venv's prefix; the man pages where man looks
export PKG_CONFIG_PATH=$venv/lib/pkgconfig
[ "$(pkg-config --modversion culeak)" = "$version" ] || fail "culeak.pc: version $(pkg-config --modversion culeak)"
cat >"$T/use.c" <<'C'
#include <culeak.h>
int main(void) { culeak_mark("start"); return culeak_active(); }
C
# shellcheck disable=SC2046 # flags are words
cc -Wall -Werror $(pkg-config --cflags culeak) -o "$T/use" "$T/use.c" $(pkg-config --libs culeak) ||
    fail "cannot build against the venv's culeak.h"
"$T/use" || fail "a program using culeak.h failed"
for page in "$ROOT"/man/*.[1-8]; do
    cmp -s "$page" "$venv/share/man/man${page##*.}/$(basename "$page")" || fail "$(basename "$page") not in the venv's share/man"
done
echo "wheel: ok: $(basename "$whl"), $(($(stat -c %s "$whl") / 1024)) KiB, $elves ELF files, GLIBC_2.$newest"
