#!/usr/bin/env python3
"""Checks a two-rank recording of ddp_leak.py: both ranks present with their rank, every
allocation on the rank's device, the planted leak (ITERATIONS blocks of 1 MiB) on rank 1
only, and `culeak report` merging the ranks' files.

usage: check_ddp.py LEDGER REPORT.json ITERATIONS DUMP.jsonl..."""
import collections
import json
import sys

ledger_path, report_path, iterations = sys.argv[1], sys.argv[2], int(sys.argv[3])
ranks = {}  # pid -> (rank, device)
for line in open(ledger_path):
    w = line.split()
    if w[:2] == ["LEDGER", "rank"]:
        ranks[int(w[3])] = (int(w[2]), int(w[4]))
problems = []
devices = collections.defaultdict(collections.Counter)
for path in sys.argv[4:]:
    pid = None
    for line in open(path):
        r = json.loads(line)
        if r["type"] == "hello":
            pid = r["pid"]
        elif r["type"] == "alloc" and r["result"] == 0 and r["kind"] == "device":
            devices[pid][r["device"]] += 1
for pid, (rank, dev) in ranks.items():
    if pid not in devices:
        problems.append(f"rank {rank} (pid {pid}) not recorded")
    elif set(devices[pid]) != {dev}:
        problems.append(f"rank {rank} allocations on devices {dict(devices[pid])}, expected {dev}")
report = json.load(open(report_path))
procs = {p["pid"]: p for p in report["processes"]}
for pid, (rank, dev) in ranks.items():
    if pid not in procs:
        problems.append(f"report lacks rank {rank} (pid {pid})")
    elif procs[pid].get("rank") != rank:
        problems.append(f"pid {pid}: report says rank {procs[pid].get('rank')}, expected {rank}")
leaked_mib = collections.Counter()
for leak in report["leaks"]:
    if leak["kind"] == "device" and leak["bytes"] == leak["count"] * (1 << 20):
        leaked_mib[leak["pid"]] += leak["count"]
by_rank = {rank: leaked_mib.get(pid, 0) for pid, (rank, _) in ranks.items()}
if by_rank.get(1, 0) < iterations:
    problems.append(f"planted leak not found on rank 1: {by_rank}")
if by_rank.get(0, 0) >= iterations:
    problems.append(f"rank 0 shows the leak planted on rank 1: {by_rank}")
print(json.dumps({"check": "ddp-2-ranks", "ok": not problems, "ranks": {str(k): v for k, v in ranks.items()},
                  "leaked_1MiB_blocks_by_rank": by_rank, "problems": problems}))
sys.exit(1 if problems else 0)
