#!/usr/bin/env bash
# The GPU machine's checks (tests/gpu/*.py) judged on hand-made inputs, so that each can
# fail: a ledger with no entries, culeak and compute-sanitizer disagreeing, a rank whose
# marks or allocations are missing are failures; the matching cases pass.
set -uo pipefail
export PYTHONDONTWRITEBYTECODE=1
cd "$(dirname "$0")/../.." || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
# expect STATUS WHAT CMD...: CMD exits with STATUS
expect() {
    local want=$1 what=$2
    shift 2
    "$@" >"$tmp/out" 2>&1
    local rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL: $what: exit $rc, want $want"; sed 's/^/    /' "$tmp/out"; failures=$((failures + 1))
    fi
}

# ---- check.py: a program's ledger against culeak's dump
cat >"$tmp/dump.jsonl" <<'J'
{"type":"alloc","api":"cuMemAlloc_v2","kind":"device","size":4096,"addr":"0x1000","result":0}
{"type":"free","api":"cuMemFree_v2","kind":"device","size":0,"addr":"0x1000","result":0}
J
printf 'LEDGER alloc cuMemAlloc_v2 4096 0x1000\nLEDGER free 0x1000\n' >"$tmp/ledger"
expect 0 "check.py: every entry seen" python3 tests/gpu/check.py t "$tmp/ledger" "$tmp/dump.jsonl" --exact
printf 'torch: done\n' >"$tmp/noledger"
expect 1 "check.py: no LEDGER lines" python3 tests/gpu/check.py t "$tmp/noledger" "$tmp/dump.jsonl"
printf 'LEDGER alloc cuMemAlloc_v2 8192 0x1000\n' >"$tmp/ledger2"
expect 1 "check.py: an entry not seen" python3 tests/gpu/check.py t "$tmp/ledger2" "$tmp/dump.jsonl"

# ---- compare_leaks.py: culeak check against compute-sanitizer
echo "LEAK SUMMARY: 79691776 bytes leaked in 19 allocations from 1 call sites" >"$tmp/culeak"
printf '========= LEAK SUMMARY: 79691776 bytes leaked in 19 allocations\n========= ERROR SUMMARY: 19 errors\n' >"$tmp/cs"
expect 0 "compare_leaks.py: the same" python3 tests/gpu/compare_leaks.py p "$tmp/culeak" 1 "$tmp/cs"
printf '========= LEAK SUMMARY: 79691776 bytes leaked in 20 allocations\n' >"$tmp/cs-count"
expect 1 "compare_leaks.py: allocations differ" python3 tests/gpu/compare_leaks.py p "$tmp/culeak" 1 "$tmp/cs-count"
printf '========= LEAK SUMMARY: 75497472 bytes leaked in 19 allocations\n' >"$tmp/cs-bytes"
expect 1 "compare_leaks.py: bytes differ" python3 tests/gpu/compare_leaks.py p "$tmp/culeak" 1 "$tmp/cs-bytes"
expect 1 "compare_leaks.py: culeak exit 0 with leaks" python3 tests/gpu/compare_leaks.py p "$tmp/culeak" 0 "$tmp/cs"
echo "LEAK SUMMARY: 0 bytes leaked in 0 allocations from 0 call sites" >"$tmp/culeak0"
echo "========= ERROR SUMMARY: 0 errors" >"$tmp/cs0"
expect 0 "compare_leaks.py: no leaks on either side" python3 tests/gpu/compare_leaks.py p "$tmp/culeak0" 0 "$tmp/cs0"
echo "compute-sanitizer: not found" >"$tmp/cs-none"
expect 1 "compare_leaks.py: no sanitizer summary" python3 tests/gpu/compare_leaks.py p "$tmp/culeak0" 0 "$tmp/cs-none"

# ---- check_ddp.py: two ranks; rank 1 leaks 7 blocks at the planted line between the marks
leak_line=$(grep -n "planted leak" tests/gpu/ddp_leak.py | cut -d: -f1)
# rank PID RANK LEAKS [nomarks] [noallocs] [blocks]: a dump of one rank (blocks: the
# tensors of a caching allocator, kind "block", rather than device memory)
rank() {
    python3 - "$@" "$leak_line" <<'PY'
import json, sys
pid, rank, leaks, flags, line = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4:-1], int(sys.argv[-1])
tag, seq, out = 1 << 63, 0, []
kind = "block" if "blocks" in flags else "device"
def rec(**r):
    global seq
    seq += 1
    out.append(dict(r, seq=seq))
rec(type="hello", pid=pid, env={"RANK": rank})
out.append({"type": "pyframe", "ip": hex(tag | 1), "file": "/job/tests/gpu/ddp_leak.py", "line": line})
out.append({"type": "pyframe", "ip": hex(tag | 2), "file": "/job/tests/gpu/ddp_leak.py", "line": 33})
def alloc(addr, frame, size=1 << 20):
    rec(type="alloc", kind=kind, addr=hex(addr), size=size, result=0, device=int(rank), stack=[hex(tag | frame)])
if "nomarks" not in flags:
    rec(type="mark", label="iteration 2")
for i in range(3 if "noallocs" not in flags else 0):  # activations, freed in the iteration
    alloc(0x9000 + i, 2, 4096)
    rec(type="free", kind=kind, addr=hex(0x9000 + i), size=0, result=0)
for i in range(leaks):
    alloc(0x100000 * (i + 1), 1)
if "nomarks" not in flags:
    rec(type="mark", label="iteration 8")
print("\n".join(json.dumps(r) for r in out))
PY
}
printf 'LEDGER rank 0 100 0 gloo\nLEDGER rank 1 101 1 gloo\n' >"$tmp/ddp.err"
echo '{"processes":[{"pid":100,"rank":0},{"pid":101,"rank":1}]}' >"$tmp/report.json"
rank 101 1 7 >"$tmp/r1.jsonl"
rank 100 0 0 >"$tmp/r0.jsonl"
expect 0 "check_ddp.py: rank 1 grows, rank 0 does not" \
    python3 tests/gpu/check_ddp.py "$tmp/ddp.err" "$tmp/report.json" "$tmp/r0.jsonl" "$tmp/r1.jsonl"
rank 100 0 7 >"$tmp/r0-leaks.jsonl"
expect 1 "check_ddp.py: rank 0 grows too" \
    python3 tests/gpu/check_ddp.py "$tmp/ddp.err" "$tmp/report.json" "$tmp/r0-leaks.jsonl" "$tmp/r1.jsonl"
rank 100 0 0 nomarks >"$tmp/r0-nomarks.jsonl"
expect 1 "check_ddp.py: rank 0 without its marks" \
    python3 tests/gpu/check_ddp.py "$tmp/ddp.err" "$tmp/report.json" "$tmp/r0-nomarks.jsonl" "$tmp/r1.jsonl"
rank 100 0 0 noallocs >"$tmp/r0-idle.jsonl"
expect 1 "check_ddp.py: rank 0 with no allocation between its marks" \
    python3 tests/gpu/check_ddp.py "$tmp/ddp.err" "$tmp/report.json" "$tmp/r0-idle.jsonl" "$tmp/r1.jsonl"
expect 1 "check_ddp.py: rank 0 not recorded" \
    python3 tests/gpu/check_ddp.py "$tmp/ddp.err" "$tmp/report.json" "$tmp/r1.jsonl"
# --blocks: the growth is read from the tensors' blocks, never from device memory
rank 101 1 7 blocks >"$tmp/b1.jsonl"
rank 100 0 0 blocks >"$tmp/b0.jsonl"
expect 0 "check_ddp.py --blocks: rank 1's tensors grow, rank 0's do not" \
    python3 tests/gpu/check_ddp.py --blocks "$tmp/ddp.err" "$tmp/report.json" "$tmp/b0.jsonl" "$tmp/b1.jsonl"
expect 1 "check_ddp.py --blocks: only device memory grew (tensor tracking off)" \
    python3 tests/gpu/check_ddp.py --blocks "$tmp/ddp.err" "$tmp/report.json" "$tmp/r0.jsonl" "$tmp/r1.jsonl"
expect 1 "check_ddp.py: only blocks grew, device memory read" \
    python3 tests/gpu/check_ddp.py "$tmp/ddp.err" "$tmp/report.json" "$tmp/b0.jsonl" "$tmp/b1.jsonl"

[ "$failures" -eq 0 ] || { echo "$failures checks misjudged"; exit 1; }
echo "gpu checkers: ok"
