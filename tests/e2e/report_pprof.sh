#!/usr/bin/env bash
# report --format pprof read by the real reader, go tool pprof (Debian's golang-go, which
# `make test` installs): two ranks of a Python job (the fake driver by ctypes) recorded as
# a launcher would, then pprof's bytes per function (-top -sample_index=inuse_space) must
# be the text report's, for the leaks and for a --diff that goes down; alloc_space holds
# what was allocated and freed; the labels name rank, host, device, allocator and kind;
# the locations carry Python's and C's file:line.
set -u
. "$(dirname "$0")/lib.sh"
export FAKE_LIBCUDA=$B/fakecuda/libcuda.so.1
GO=$(command -v go || ls /usr/lib/go*/bin/go 2>/dev/null | tail -n 1)
if [ -z "$GO" ]; then
    echo "SKIP: no go tool here (golang-go could not be installed; tools/deps.sh installs it)"
    exit 0
fi
export HOME=$T GOCACHE=$T/gocache PPROF_TMPDIR=$T # pprof keeps nothing of the user's
pprof() { "$GO" tool pprof "$@" 2>"$T/pprof.err" || fail "go tool pprof $*: $(cat "$T/pprof.err")"; }
H=$(hostname)
N=4
unset RANK LOCAL_RANK OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK MV2_COMM_WORLD_RANK SLURM_PROCID
for r in 0 1; do
    RANK=$r "$B/culeak" record -o "$T/run/%h/%r.culeak" -- python3 "$ROOT/tests/e2e/python/pprof_ranks.py" $N \
        >"$T/out" 2>&1 || fail "record of rank $r: $(cat "$T/out")"
done
REC=("$T/run/$H/0.culeak" "$T/run/$H/1.culeak")

# "function bytes" lines, sorted: from the text report's rows, and from pprof's flat column
text_rows() {
    "$B/culeak" report --merge-processes --group function "$@" "${REC[@]}" 2>/dev/null |
        sed -nE 's/^LEAKED .*\(([0-9]+) bytes\) in .* from (.*)$/\2 \1/p; s/^LEAKED ([0-9]+) bytes in .* from (.*)$/\2 \1/p' |
        sort
}
pprof_rows() { # FILE SAMPLE_INDEX
    pprof -top -nodefraction=0 -unit=B -sample_index="$2" "$1" |
        awk '$1 ~ /^-?[0-9]+B$/ && $1 != "0" { b = $1; sub(/B$/, "", b); print $6, b }' | sort
}

"$B/culeak" report --format pprof -o "$T/leaks.pb.gz" "${REC[@]}" 2>"$T/err" || fail "report: $(cat "$T/err")"
gzip -t "$T/leaks.pb.gz" || fail "not gzip"
text_rows >"$T/text"
pprof_rows "$T/leaks.pb.gz" inuse_space >"$T/pprof"
echo "text report:"; sed 's/^/  /' "$T/text"
echo "go tool pprof -top -sample_index=inuse_space:"; sed 's/^/  /' "$T/pprof"
[ "$(wc -l <"$T/text")" -ge 2 ] || fail "the text report has too few rows: $(cat "$T/text")"
diff "$T/text" "$T/pprof" >/dev/null || fail "bytes per function differ (text, then pprof): $(diff "$T/text" "$T/pprof")"

# alloc_space: every allocation, the ones freed at once too (scratch: N of 3000 + 1000 *
# rank bytes, and one of 777 + rank kept)
want=$(( N * 3000 + 777 + N * 4000 + 778 ))
got=$(pprof_rows "$T/leaks.pb.gz" alloc_space | awk '$1 == "scratch" { print $2 }')
[ "$got" = "$want" ] || fail "alloc_space of scratch: $got, not $want"

# the labels: a process's rank, host and device; the allocator and kind of each sample
pprof -tags -sample_index=inuse_space "$T/leaks.pb.gz" >"$T/tags"
for want in "rank: Total" ": 0$" ": 1$" "host: Total" ": $H$" "device: Total" "allocator: Total" ": cuda$" \
    "kind: Total" ": device$"; do
    grep -Eq "$want" "$T/tags" || fail "no '$want' among the labels: $(cat "$T/tags")"
done
one=$(pprof -top -unit=B -sample_index=inuse_space -tagfocus='rank=^1$' "$T/leaks.pb.gz" |
    awk '$NF == "load_batch" { print $1 }')
whole=$(awk '$1 == "load_batch" { print $2 }' "$T/pprof")
[ "${one%B}" -gt 0 ] && [ "$(( ${one%B} * 2 ))" = "$whole" ] || fail "rank 1's part is $one of $whole"

# the Python frames' file:line, the call site's line among them
site=$(grep -n "kept: 1 MiB an iteration" "$ROOT/tests/e2e/python/pprof_ranks.py" | cut -d: -f1)
pprof -top -lines -nodefraction=0 -sample_index=inuse_space "$T/leaks.pb.gz" >"$T/lines"
grep -q "load_batch .*pprof_ranks.py:$site\$" "$T/lines" || fail "no load_batch at pprof_ranks.py:$site: $(cat "$T/lines")"

# a diff that goes down: two batches given back at the last iteration
"$B/culeak" report --diff "iter 3" done --format pprof -o "$T/diff.pb.gz" "${REC[@]}" 2>"$T/err" ||
    fail "report --diff: $(cat "$T/err")"
"$B/culeak" report --diff "iter 3" done --merge-processes --group function "${REC[@]}" 2>/dev/null |
    sed -nE 's/^  ([-+][0-9]+) bytes \(.*\) (.*)$/\2 \1/p' | sed 's/ +/ /' | sort >"$T/text_diff"
pprof_rows "$T/diff.pb.gz" inuse_space >"$T/pprof_diff"
echo "text --diff:"; sed 's/^/  /' "$T/text_diff"
echo "go tool pprof (diff):"; sed 's/^/  /' "$T/pprof_diff"
grep -q "^load_batch -" "$T/text_diff" || fail "the diff does not go down at load_batch: $(cat "$T/text_diff")"
diff "$T/text_diff" "$T/pprof_diff" >/dev/null ||
    fail "the diff's bytes per function differ (text, then pprof): $(diff "$T/text_diff" "$T/pprof_diff")"

# a C program's native frames keep their file:line too
LD_LIBRARY_PATH=$B/fakecuda "$B/culeak" record -o "$T/c.culeak" -- "$B/fakecuda/client_static" leak 2 4096 >/dev/null 2>&1 ||
    fail "record of client_static"
"$B/culeak" report --format pprof -o "$T/c.pb.gz" "$T/c.culeak" 2>/dev/null || fail "report of client_static"
pprof -top -lines -nodefraction=0 -unit=B -sample_index=inuse_space "$T/c.pb.gz" >"$T/clines"
grep -Eq '^ +8192B .* [a-z_]+ .*\.c:[0-9]+$' "$T/clines" || fail "no C frame with its file:line: $(cat "$T/clines")"

# binary data never goes to a terminal, and a bad combination is said so
"$B/culeak" report --format pprof --suspects "${REC[@]}" >/dev/null 2>"$T/err" && fail "--suspects taken"
grep -q "suspects prints text or json" "$T/err" || fail "no clear refusal of --suspects: $(cat "$T/err")"
echo "report_pprof: ok"
