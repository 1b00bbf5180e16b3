#!/usr/bin/env python3
"""Checks a two-rank recording of ddp_leak.py (run by tests/gpu/run.sh).

usage: check_ddp.py [--blocks] LEDGER REPORT.json DUMP.jsonl...

With --blocks (the caching allocator left on) the growth is read from the tensors' block
events; without (PYTORCH_NO_CUDA_MEMORY_CACHING=1), from device memory.

Both ranks were recorded, each file carries its rank, every allocation of a rank is on
that rank's device, the leak planted on rank 1 (one 1 MiB block per iteration, at the
`kept.append` line) grows on rank 1 between iterations 2 and 8 and not on rank 0, and
`culeak report` over the two files lists both processes with their ranks. "Did not grow"
needs evidence: the rank's recording has both marks and allocations between them."""
import collections
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
from growth import DEVICE_KINDS, growth  # noqa: E402

args = sys.argv[1:]
blocks_only = args[:1] == ["--blocks"]
if blocks_only:
    args = args[1:]
kinds = ("block",) if blocks_only else DEVICE_KINDS
ledger_path, report_path, dumps = args[0], args[1], args[2:]
src = os.path.join(os.path.dirname(__file__), "ddp_leak.py")
leak_site = "ddp_leak.py:%d" % next(i for i, l in enumerate(open(src), 1) if "planted leak" in l)
ranks = {}  # pid -> (rank, device), as each rank printed it
for rank, pid, dev in re.findall(r"LEDGER rank (\d+) (\d+) (\d+)", open(ledger_path).read()):
    ranks[int(pid)] = (int(rank), int(dev))
problems, seen, grew, between = [], {}, {}, {}


def allocations_between(path, mark_a, mark_b):
    """Successful allocations between the first marks A and B of a dump (None: a mark is missing)."""
    seq, n, recs = {}, 0, [json.loads(l) for l in open(path)]
    for r in recs:
        if r["type"] == "mark" and r["label"] in (mark_a, mark_b):
            seq.setdefault(r["label"], r["seq"])
    if len(seq) < 2:
        return None
    for r in recs:
        n += r["type"] == "alloc" and r["result"] == 0 and seq[mark_a] < r["seq"] < seq[mark_b]
    return n


if sorted(r for r, _ in ranks.values()) != [0, 1]:
    problems.append("the job's ledger names ranks %s, expected 0 and 1" % sorted(ranks.values()))
for path in dumps:
    pid, env, sites = growth(path, "iteration 2", "iteration 8", kinds)
    seen[pid] = env.get("RANK")
    grew[pid] = None if sites is None else sites.get(leak_site, [0, 0])
    between[pid] = allocations_between(path, "iteration 2", "iteration 8")
    devices = collections.Counter(json.loads(l)["device"] for l in open(path)
                                  if '"type":"alloc"' in l and '"kind":"%s"' % kinds[0] in l)
    if pid in ranks and set(devices) - {ranks[pid][1]}:
        problems.append("rank %d allocated on devices %s" % (ranks[pid][0], dict(devices)))
for pid, (rank, _) in ranks.items():
    if pid not in seen:
        problems.append("rank %d (pid %d) not recorded" % (rank, pid))
        continue
    if seen[pid] != str(rank):
        problems.append("pid %d recorded with RANK=%s, expected %d" % (pid, seen[pid], rank))
    if grew[pid] is None:
        problems.append("rank %d: no marks 'iteration 2' and 'iteration 8' in its recording" % rank)
        continue
    if not between[pid]:
        problems.append("rank %d: no allocation recorded between 'iteration 2' and 'iteration 8'" % rank)
        continue
    blocks = grew[pid][0]
    if rank == 1 and blocks < 6:
        problems.append("rank 1 did not grow at %s: %s" % (leak_site, grew[pid]))
    if rank == 0 and blocks:
        problems.append("rank 0 grew at %s, where only rank 1 leaks: %s" % (leak_site, grew[pid]))
report = json.load(open(report_path))
procs = {p["pid"]: p.get("rank") for p in report.get("processes", [])}
for pid, (rank, _) in ranks.items():
    if procs.get(pid) != rank:
        problems.append("merged report: pid %d has rank %s, expected %d" % (pid, procs.get(pid), rank))
print(json.dumps({"check": "ddp-2-ranks" + ("-blocks" if blocks_only else ""), "ok": not problems,
                  "growth_at_leak_line_iter2_to_8": {str(ranks.get(p, ("?",))[0]): g for p, g in grew.items()},
                  "problems": problems}))
sys.exit(1 if problems else 0)
