#!/usr/bin/env python3
"""Checks culeak's view of demo/train_leak.py (run by tests/gpu/run.sh).

usage: check_train_leak.py LEAKY_DUMP.jsonl FIXED_DUMP.jsonl

Between the NVTX ranges "iteration 5" and "iteration 15" of the leaky run, the site that
grows most is the line of demo/train_leak.py marked "# LEAK" (a Python line, not a frame
of libtorch), with at least one new live allocation per iteration; the fixed run (--fixed)
does not grow there. Prints one line per check; exit 1 if any failed."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from growth import growth  # noqa: E402

leaky, fixed = sys.argv[1], sys.argv[2]
src = os.path.join(os.path.dirname(__file__), "..", "..", "demo", "train_leak.py")
leak_site = "train_leak.py:%d" % next(i for i, l in enumerate(open(src), 1) if "# LEAK" in l)
failed = 0


def check(ok, what, detail=""):
    global failed
    failed += not ok
    print("train_leak: %s %s%s" % ("ok  " if ok else "FAIL", what, (": " + detail) if detail and not ok else ""))


_, _, grown = growth(leaky, "iteration 5", "iteration 15")
check(grown is not None, "NVTX ranges 'iteration N' recorded as marks")
grown = grown or {}
top = sorted(grown.items(), key=lambda kv: -kv[1][1])
print("train_leak: growth from iteration 5 to iteration 15, by site:")
for s, (n, b) in top[:5]:
    print("train_leak:   %10d bytes in %4d allocations at %s" % (b, n, s))
check(bool(top) and top[0][0] == leak_site, "the site that grows most is %s" % leak_site,
      top[0][0] if top else "no growth")
check(grown.get(leak_site, [0])[0] >= 10, "one new live allocation per iteration there",
      str(grown.get(leak_site)))
_, _, fixed_growth = growth(fixed, "iteration 5", "iteration 15")
check(fixed_growth is not None and leak_site not in fixed_growth, "--fixed does not grow there",
      str((fixed_growth or {}).get(leak_site)))
sys.exit(1 if failed else 0)
