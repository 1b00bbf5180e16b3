#!/usr/bin/env python3
"""Checks a JSON report (culeak report --format json --at MARK) of tests/gpu/backward_site.py:
the gradients made on autograd's threads are at the BACKWARD line, marked autograd_backward,
and no site is an allocator's or runtime's frame. Prints what it found; exit 1 on failure.

    check_backward_site.py REPORT.json BACKWARD_LINE
"""
import json
import sys

ALLOCATOR = ("record_trace", "CUDACachingAllocator", "empty_generic", "at::detail::", "setWorkspace",
             "at::empty", "libcudart", "libcuda.so")

report = json.load(open(sys.argv[1]))
line = int(sys.argv[2])
rows = report["sites"]
ok = True
backward = [r for r in rows if r["site"].get("autograd_backward") and r["site"].get("line") == line]
if backward:
    r = backward[0]
    print("backward_site: ok: %d bytes in %d blocks at %s" % (r["bytes"], r["count"], r["site"]["text"]))
else:
    ok = False
    print("backward_site: FAIL: no row at backward_site.py:%d marked autograd_backward" % line)
bad = [r["site"]["text"] for r in rows if any(a in (r["site"]["text"] or "") for a in ALLOCATOR)]
if bad:
    ok = False
    print("backward_site: FAIL: allocator frames as sites: %s" % "; ".join(bad[:4]))
for r in sorted(rows, key=lambda r: -r["bytes"])[:6]:  # for the record
    print("  %10d bytes  %s" % (r["bytes"], r["site"]["text"]))
sys.exit(0 if ok else 1)
