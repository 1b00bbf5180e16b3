"""Checks culeak's view of demo/train_leak.py (run by tests/gpu/run.sh).

usage: check_train_leak.py LEAKY_REPORT.json LEAKY_DUMP.jsonl FIXED_REPORT.json ITERATIONS

Leaky run (leaks at exit, including those filed as caching-allocator memory): the leak site with the most bytes is demo/train_leak.py at the line marked
"# LEAK" (the Python line, not a frame of libtorch), it holds at least one allocation per
iteration, and the NVTX ranges "iteration 0".."iteration N-1" arrived as push marks.
Fixed run (--fixed): nothing leaks at that line. Prints one line per check; exit 1 if any
failed."""
import json
import os
import sys

report, dump, fixed, iterations = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
src = os.path.join(os.path.dirname(__file__), "..", "..", "demo", "train_leak.py")
leak_line = next(i for i, l in enumerate(open(src), 1) if "# LEAK" in l)
failed = 0


def check(ok, what, detail=""):
    global failed
    failed += not ok
    print("train_leak: %s %s%s" % ("ok  " if ok else "FAIL", what, (": " + detail) if detail and not ok else ""))


def site(row):
    s = row.get("site", {})
    return "%s:%s (%s, module %s)" % (s.get("file"), s.get("line"), s.get("function"), s.get("module"))


def leak_rows(path):
    """Leaks and memory held through a caching allocator's code (with PyTorch's caching
    off, its allocations still pass through libc10_cuda, so culeak may file them there)."""
    d = json.load(open(path))
    rows = list(d.get("leaks") or [])
    cache = d.get("cache")
    if isinstance(cache, list):
        rows += [r for r in cache if isinstance(r, dict) and "bytes" in r]
    elif isinstance(cache, dict):
        rows += [r for r in cache.get("rows", cache.get("leaks", [])) if isinstance(r, dict) and "bytes" in r]
    return sorted(rows, key=lambda r: -r["bytes"])


rows = leak_rows(report)
print("train_leak: top leak sites of the leaky run:")
for r in rows[:5]:
    print("train_leak:   %10d bytes in %5d allocations at %s" % (r["bytes"], r["count"], site(r)))
top = rows[0] if rows else {}
s = top.get("site", {})
check(os.path.basename(s.get("file") or "") == "train_leak.py" and s.get("line") == leak_line,
      "top leak site is train_leak.py:%d (total_loss += ...)" % leak_line, "it is " + site(top))
check(s.get("module") == "python", "the site is a Python frame", "module %s" % s.get("module"))
check(top.get("count", 0) >= iterations, "at least one leaked allocation per iteration at that site",
      "%s allocations for %d iterations" % (top.get("count"), iterations))

pushes = set()
for line in open(dump):
    r = json.loads(line)
    if r["type"] == "mark" and r["flags"] & 1:
        pushes.add(r["label"])
missing = [i for i in range(iterations) if "iteration %d" % i not in pushes]
check(not missing, "NVTX ranges 'iteration N' recorded as marks", "missing iterations %s" % missing[:5])

at_line = [r for r in leak_rows(fixed)
           if os.path.basename(r.get("site", {}).get("file") or "") == "train_leak.py"
           and r["site"].get("line") == leak_line]
check(not at_line or at_line[0]["bytes"] < 1 << 20, "--fixed leaks nothing at that line",
      "%s bytes" % (at_line[0]["bytes"] if at_line else 0))
sys.exit(1 if failed else 0)
