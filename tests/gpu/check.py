#!/usr/bin/env python3
"""Matches a program's ledger (LEDGER lines on its stderr) against what culeak recorded
(`culeak dump` JSON Lines). Exit 0 when the ledger has entries and every one was seen,
1 otherwise.

usage: check.py NAME LEDGER DUMP.jsonl [--exact]
  --exact  also require that culeak saw no successful allocation beyond the ledger
"""
import collections
import json
import sys


def load_events(path):
    events = []
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r["type"] in ("alloc", "free", "free_all"):
                r["addr"] = int(r["addr"], 16)
                events.append(r)
    return events


def main():
    name, ledger_path, dump_path = sys.argv[1:4]
    exact = "--exact" in sys.argv
    events = load_events(dump_path)
    allocs = [e for e in events if e["type"] == "alloc"]
    frees = [e for e in events if e["type"] == "free" and e["result"] == 0]
    used = set()
    problems, seen = [], collections.Counter()

    def find(pred):
        for i, e in enumerate(allocs):
            if i not in used and pred(e):
                used.add(i)
                return e
        return None

    entries = [l.split()[1:] for l in open(ledger_path) if l.startswith("LEDGER ")]
    if not entries:  # the program wrote no ledger: nothing was checked
        problems.append("no LEDGER lines in %s" % ledger_path)
    for w in entries:
        what = w[0]
        if what == "alloc":
            api, size, addr = w[1], int(w[2]), int(w[3], 16)
            e = find(lambda e: e["addr"] == addr and e["size"] == size and e["result"] == 0)
            ok = e is not None
        elif what == "free":
            addr = int(w[1], 16)
            ok = any(f["addr"] == addr for f in frees)
        elif what == "fail":
            size = int(w[2])
            ok = find(lambda e: e["result"] != 0 and e["size"] == size) is not None
        elif what == "tensor":  # a framework's block: at least the tensor's bytes
            size, addr = int(w[1]), int(w[2], 16)
            ok = find(lambda e: e["addr"] == addr and e["size"] >= size and e["result"] == 0) is not None
        elif what == "segment":  # a caching allocator segment: one block, or VMM mappings covering it
            size, addr = int(w[1]), int(w[2], 16)
            e = find(lambda e: e["addr"] == addr and e["size"] == size and e["result"] == 0)
            if e is None:
                mapped = sum(m["size"] for m in allocs
                             if m["kind"] == "vmm-mapped" and addr <= m["addr"] < addr + size)
                ok = mapped >= size
            else:
                ok = True
        elif what == "inside":  # an array inside some allocation or mapping
            size, addr = int(w[1]), int(w[2], 16)
            ok = any(a["result"] == 0 and a["kind"] not in ("va-reserve", "vmm-physical", "pool")
                     and a["addr"] <= addr and addr + size <= a["addr"] + a["size"] for a in allocs)
        else:
            ok = False
        seen[what] += 1
        if not ok:
            problems.append("not seen: " + " ".join(w))
    # one allocation must count once: no address allocated twice while live (same kind)
    live = {}
    for e in events:
        key = (e["kind"], e["addr"])
        if e["type"] == "alloc" and e["result"] == 0:
            if key in live and e["kind"] != "vmm-physical":
                problems.append("counted twice: %s %s 0x%x" % (e["api"], e["size"], e["addr"]))
            live[key] = e
        elif e["type"] == "free" and e["result"] == 0:
            live.pop(key, None)
    if exact:
        extra = [a for i, a in enumerate(allocs) if i not in used and a["result"] == 0]
        for a in extra:
            problems.append("unexpected: %s %s %d 0x%x" % (a["api"], a["kind"], a["size"], a["addr"]))
    apis = collections.Counter(e["api"] for e in events)
    print(json.dumps({"check": name, "ok": not problems, "ledger": dict(seen),
                      "events": len(events), "apis": dict(apis), "problems": problems[:20]}))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
