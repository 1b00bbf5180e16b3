#!/usr/bin/env bash
# The GPU machine's checks (tests/gpu/*.py) judged on hand-made inputs, so that each can
# fail: a ledger with no entries, culeak and compute-sanitizer disagreeing, a rank whose
# marks or allocations are missing are failures; the matching cases pass.
set -uo pipefail
export PYTHONDONTWRITEBYTECODE=1
. "$(dirname "$0")/lib.sh"
cd "$ROOT"
failures=0
# expect STATUS WHAT CMD...: CMD exits with STATUS
expect() {
    local want=$1 what=$2
    shift 2
    "$@" >"$T/out" 2>&1
    local rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL: $what: exit $rc, want $want"; sed 's/^/    /' "$T/out"; failures=$((failures + 1))
    fi
}

# ---- check.py: a program's ledger against culeak's dump
cat >"$T/dump.jsonl" <<'J'
{"type":"alloc","api":"cuMemAlloc_v2","kind":"device","size":4096,"addr":"0x1000","result":0}
{"type":"free","api":"cuMemFree_v2","kind":"device","size":0,"addr":"0x1000","result":0}
J
printf 'LEDGER alloc cuMemAlloc_v2 4096 0x1000\nLEDGER free 0x1000\n' >"$T/ledger"
expect 0 "check.py: every entry seen" python3 tests/gpu/check.py t "$T/ledger" "$T/dump.jsonl" --exact
printf 'torch: done\n' >"$T/noledger"
expect 1 "check.py: no LEDGER lines" python3 tests/gpu/check.py t "$T/noledger" "$T/dump.jsonl"
printf 'LEDGER alloc cuMemAlloc_v2 8192 0x1000\n' >"$T/ledger2"
expect 1 "check.py: an entry not seen" python3 tests/gpu/check.py t "$T/ledger2" "$T/dump.jsonl"

# ---- compare_leaks.py: culeak check against compute-sanitizer
echo "LEAK SUMMARY: 79691776 bytes leaked in 19 allocations from 1 call sites" >"$T/culeak"
printf '========= LEAK SUMMARY: 79691776 bytes leaked in 19 allocations\n========= ERROR SUMMARY: 19 errors\n' >"$T/cs"
expect 0 "compare_leaks.py: the same" python3 tests/gpu/compare_leaks.py p "$T/culeak" 1 "$T/cs"
printf '========= LEAK SUMMARY: 79691776 bytes leaked in 20 allocations\n' >"$T/cs-count"
expect 1 "compare_leaks.py: allocations differ" python3 tests/gpu/compare_leaks.py p "$T/culeak" 1 "$T/cs-count"
printf '========= LEAK SUMMARY: 75497472 bytes leaked in 19 allocations\n' >"$T/cs-bytes"
expect 1 "compare_leaks.py: bytes differ" python3 tests/gpu/compare_leaks.py p "$T/culeak" 1 "$T/cs-bytes"
expect 1 "compare_leaks.py: culeak exit 0 with leaks" python3 tests/gpu/compare_leaks.py p "$T/culeak" 0 "$T/cs"
echo "LEAK SUMMARY: 0 bytes leaked in 0 allocations from 0 call sites" >"$T/culeak0"
echo "========= ERROR SUMMARY: 0 errors" >"$T/cs0"
expect 0 "compare_leaks.py: no leaks on either side" python3 tests/gpu/compare_leaks.py p "$T/culeak0" 0 "$T/cs0"
echo "compute-sanitizer: not found" >"$T/cs-none"
expect 1 "compare_leaks.py: no sanitizer summary" python3 tests/gpu/compare_leaks.py p "$T/culeak0" 0 "$T/cs-none"

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
printf 'LEDGER rank 0 100 0 gloo\nLEDGER rank 1 101 1 gloo\n' >"$T/ddp.err"
echo '{"processes":[{"pid":100,"rank":0},{"pid":101,"rank":1}]}' >"$T/report.json"
rank 101 1 7 >"$T/r1.jsonl"
rank 100 0 0 >"$T/r0.jsonl"
expect 0 "check_ddp.py: rank 1 grows, rank 0 does not" \
    python3 tests/gpu/check_ddp.py "$T/ddp.err" "$T/report.json" "$T/r0.jsonl" "$T/r1.jsonl"
rank 100 0 7 >"$T/r0-leaks.jsonl"
expect 1 "check_ddp.py: rank 0 grows too" \
    python3 tests/gpu/check_ddp.py "$T/ddp.err" "$T/report.json" "$T/r0-leaks.jsonl" "$T/r1.jsonl"
rank 100 0 0 nomarks >"$T/r0-nomarks.jsonl"
expect 1 "check_ddp.py: rank 0 without its marks" \
    python3 tests/gpu/check_ddp.py "$T/ddp.err" "$T/report.json" "$T/r0-nomarks.jsonl" "$T/r1.jsonl"
rank 100 0 0 noallocs >"$T/r0-idle.jsonl"
expect 1 "check_ddp.py: rank 0 with no allocation between its marks" \
    python3 tests/gpu/check_ddp.py "$T/ddp.err" "$T/report.json" "$T/r0-idle.jsonl" "$T/r1.jsonl"
expect 1 "check_ddp.py: rank 0 not recorded" \
    python3 tests/gpu/check_ddp.py "$T/ddp.err" "$T/report.json" "$T/r1.jsonl"
# --blocks: the growth is read from the tensors' blocks, never from device memory
rank 101 1 7 blocks >"$T/b1.jsonl"
rank 100 0 0 blocks >"$T/b0.jsonl"
expect 0 "check_ddp.py --blocks: rank 1's tensors grow, rank 0's do not" \
    python3 tests/gpu/check_ddp.py --blocks "$T/ddp.err" "$T/report.json" "$T/b0.jsonl" "$T/b1.jsonl"
expect 1 "check_ddp.py --blocks: only device memory grew (tensor tracking off)" \
    python3 tests/gpu/check_ddp.py --blocks "$T/ddp.err" "$T/report.json" "$T/r0.jsonl" "$T/r1.jsonl"
expect 1 "check_ddp.py: only blocks grew, device memory read" \
    python3 tests/gpu/check_ddp.py "$T/ddp.err" "$T/report.json" "$T/b0.jsonl" "$T/b1.jsonl"

[ "$failures" -eq 0 ] || { echo "$failures checks misjudged"; exit 1; }
echo "gpu checkers: ok"
