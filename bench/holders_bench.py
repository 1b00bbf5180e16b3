#!/usr/bin/env python3
"""What the holders walk (python/culeak_holders.py) costs in a process of about 1M Python
objects: 450k instances with a dict each, lists and strings around them, and 64 tensors of
the stand-in torch kept in a global list; prints the objects, the seconds the walk took
for one block and for all 64 (wall clock, and the process's CPU time, which a loaded
machine does not stretch), and the limit (1 s). Needs the fake caching allocator
($FAKE_C10, as `make bench` gives it): a benchmark, not a test."""
import ctypes
import gc
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "e2e", "python", "site-packages"))
sys.path.insert(0, os.path.join(here, "..", "python"))
import culeak_holders  # noqa: E402
import torch  # noqa: E402


class Record:
    def __init__(self, i):
        self.name, self.values, self.more = "r%d" % i, [i, str(i)], {"k": (i,)}


ctypes.CDLL("libcudart.so.13").cudaFree(None)
ctypes.CDLL(os.environ["FAKE_C10"]).fake_c10_init(1)
world = [Record(i) for i in range(450000)]
kept = [torch.empty(4096) for _ in range(64)]
n = len(gc.get_objects())
for label, ranges in (("one block", [(kept[7].data_ptr(), kept[7].data_ptr() + 1)]), ("64 blocks", None)):
    t0, c0 = time.monotonic(), time.process_time()
    got = culeak_holders.find_holders(ranges)
    dt, dc = time.monotonic() - t0, time.process_time() - c0
    print("holders walk, %s, %d gc objects: %.3f s (cpu %.3f s; limit 1 s), %d answers, first: %s" %
          (label, n, dt, dc, len(got), got[0][1] if got else "-"))
