#!/usr/bin/env bash
# The cross-rank view on a real GPU: tests/gpu/ranks_job.py under torchrun, two ranks on
# the one GPU (gloo), rank 1 keeping 4 MiB an iteration, recorded with the wheel's culeak
# as `culeak record --metrics 127.0.0.1:0 -o 'run/%h/%r.culeak' -- torchrun ...`:
#   - /metrics answers while the job runs, with the series of rank 1;
#   - `culeak report run/` opens with the ranks table, rank 1's row marked with the planted
#     line, and the sentence naming rank 1 and that line;
#   - `report --format json` says the same (cross_rank.differ);
#   - `report --at 'iteration 29' --format pprof`, read back by `go tool pprof` when Go is
#     there, else by python (gzip and a minimal profile.proto parse): rank 1's bytes at the
#     planted line are its 29 (28 to 30) blocks of 4 MiB.
# PASS/FAIL lines; exit status 1 when one failed. Needs dist/culeak-*.whl (make wheel),
# python3 with torch, torchrun, a GPU. Leaves its files in $OUT (default /tmp/culeak-gpu).
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
OUT=${OUT:-/tmp/culeak-gpu}
mkdir -p "$OUT"
W=$(mktemp -d)
fails=0
pass() { echo "PASS $*"; }
failed() { echo "FAIL $*"; fails=$((fails + 1)); }
python3 -m venv --system-site-packages "$W/venv" >/dev/null 2>&1 || { echo "FAIL no venv"; exit 1; }
"$W/venv/bin/python" -m pip install -q --no-index --no-deps dist/culeak-*.whl || { echo "FAIL the wheel"; exit 1; }
CULEAK=$W/venv/bin/culeak
TORCHRUN=$(command -v torchrun || echo "$W/venv/bin/torchrun")
LINE=$(grep -n "# the planted leak" tests/gpu/ranks_job.py | cut -d: -f1)
H=$(hostname)
cd "$W" || exit 1

# the job, its /metrics read while it runs
NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 ITERATIONS=30 PAUSE=0.2 \
    "$CULEAK" record --metrics 127.0.0.1:0 -o 'run/%h/%r.culeak' -- \
    "$TORCHRUN" --standalone --nproc_per_node 2 "$ROOT/tests/gpu/ranks_job.py" >job.out 2>job.err &
job=$!
addr=
for _ in $(seq 300); do
    addr=$(sed -n 's|^culeak record: metrics on http://\(.*\)/metrics$|\1|p' job.err)
    [ -n "$addr" ] && break
    kill -0 $job 2>/dev/null || break
    sleep 0.1
done
got=0
if [ -n "$addr" ]; then
    for _ in $(seq 600); do
        python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' \
            "http://$addr/metrics" >metrics.txt 2>/dev/null &&
            grep -q '^culeak_live_bytes{.*rank="1"' metrics.txt && { got=1; break; }
        kill -0 $job 2>/dev/null || break
        sleep 0.1
    done
fi
wait $job
rc=$?
[ $rc = 0 ] || failed "the job under culeak record exited $rc: $(tail -5 job.err)"
if [ $got = 1 ]; then
    pass "/metrics answered while the job ran: $(grep -c '^culeak_' metrics.txt) series, rank 1's: $(grep '^culeak_live_bytes{.*rank="1"' metrics.txt | head -1)"
else
    failed "/metrics at '${addr:-no address}' gave no series of rank 1 while the job ran: $(head -c 600 metrics.txt 2>/dev/null)"
fi
ls run/*/*.culeak >recordings.txt 2>&1 || failed "no recordings in run/*/: $(cat job.err | tail -5)"

# the ranks table
"$CULEAK" report run/ >report.txt 2>report.err || failed "culeak report run/ exited $?: $(tail -3 report.err)"
sed -n '1,/^CALL SITES ACROSS RANKS/p' report.txt | head -20
if grep -qE "^\* $H +1 .*ranks_job\.py:$LINE\$" report.txt; then
    pass "the ranks table marks rank 1 with ranks_job.py:$LINE"
else
    failed "the ranks table does not mark rank 1 with ranks_job.py:$LINE"
fi
if grep -qE "^rank 1 on $H grows \+[0-9.]+ MiB per iteration in .* at ranks_job\.py:$LINE; " report.txt; then
    pass "named: $(grep "^rank 1 on $H grows" report.txt)"
else
    failed "no sentence naming rank 1 and ranks_job.py:$LINE"
fi
"$CULEAK" report --format json run/ >report.json 2>/dev/null || failed "culeak report --format json run/ exited $?"
python3 - report.json "$LINE" <<'PY' && pass "JSON: cross_rank.differ is rank 1 at ranks_job.py:$LINE" || failed "JSON's cross_rank"
import json, sys
c = json.load(open(sys.argv[1]))["cross_rank"]
d = [(x["rank"], x["site"]) for x in c["differ"]]
assert len(d) == 1 and d[0][0] == 1 and d[0][1].endswith("ranks_job.py:" + sys.argv[2]), d
print("  ranks:", [(r["rank"], r["growth_per_iteration"]) for r in c["ranks"]])
PY

# pprof, read back
"$CULEAK" report --at 'iteration 29' --format pprof -o at29.pb.gz run/ 2>pprof.err ||
    failed "report --format pprof exited $?: $(tail -3 pprof.err)"
if command -v go >/dev/null; then
    export HOME=$W GOCACHE=$W/gocache PPROF_TMPDIR=$W
    go tool pprof -top -lines -nodefraction=0 -unit=B -sample_index=inuse_space -tagfocus='rank=^1$' at29.pb.gz \
        >pprof.txt 2>pprof.err || failed "go tool pprof: $(tail -3 pprof.err)"
    bytes=$(awk -v l="ranks_job.py:$LINE" '$0 ~ l"$" { sub(/B$/, "", $1); s += $1 } END { print s + 0 }' pprof.txt)
    reader="go tool pprof"
else
    bytes=$(python3 - at29.pb.gz "$LINE" <<'PY'
import gzip, sys
def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i
def fields(b):
    i = 0
    while i < len(b):
        k, i = varint(b, i)
        f, t = k >> 3, k & 7
        if t == 0: v, i = varint(b, i)
        elif t == 2:
            n, i = varint(b, i); v = b[i:i + n]; i += n
        elif t == 1: v = b[i:i + 8]; i += 8
        elif t == 5: v = b[i:i + 4]; i += 4
        else: raise ValueError("wire type %d" % t)
        yield f, t, v
def ints(t, v):  # a repeated integer field, packed or not
    if t == 0: return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i); out.append(x)
    return out
p = gzip.decompress(open(sys.argv[1], "rb").read())
strings, types, samples, locs, funcs = [], [], [], {}, {}
for f, t, v in fields(p):
    if f == 6: strings.append(v.decode())
    elif f == 1: types.append(dict((g, x) for g, _, x in fields(v)))
    elif f == 2: samples.append(v)
    elif f == 4:
        loc, lines = None, []
        for g, tt, x in fields(v):
            if g == 1: loc = x
            elif g == 4: lines.append(dict((h, y) for h, _, y in fields(x)))
        locs[loc] = lines
    elif f == 5:
        d = dict((g, x) for g, _, x in fields(v)); funcs[d[1]] = d
inuse = [strings[t[1]] for t in types].index("inuse_space")
total = 0
for s in samples:
    ids, vals, rank = [], [], None
    for g, t, v in fields(s):
        if g == 1: ids += ints(t, v)
        elif g == 2: vals += ints(t, v)
        elif g == 3:
            d = dict((h, y) for h, _, y in fields(v))
            if strings[d[1]] == "rank": rank = strings[d[2]] if 2 in d else str(d.get(3))
    if rank != "1" or not ids: continue
    first = locs[ids[0]][0]
    fn = funcs[first[1]]
    if strings[fn.get(4, 0)].endswith("ranks_job.py") and first.get(2) == int(sys.argv[2]):
        total += vals[inuse] - (1 << 64 if vals[inuse] >= 1 << 63 else 0)
print(total)
PY
)
    reader="python's gzip and profile.proto parse"
fi
mib=$(( ${bytes:-0} / 4194304 ))
if [ "${bytes:-0}" -gt 0 ] && [ $(( ${bytes:-0} % 4194304 )) = 0 ] && [ $mib -ge 28 ] && [ $mib -le 30 ]; then
    pass "pprof ($reader): rank 1 holds $bytes bytes ($mib blocks of 4 MiB) at ranks_job.py:$LINE at 'iteration 29'"
else
    failed "pprof ($reader): rank 1 holds ${bytes:-?} bytes at ranks_job.py:$LINE at 'iteration 29', not 28 to 30 blocks of 4 MiB"
fi
tar -C "$W" -czf "$OUT/ranks.tar.gz" report.txt report.json job.err metrics.txt at29.pb.gz 2>/dev/null
echo "ranks: $fails failed"
exit $((fails > 0))
