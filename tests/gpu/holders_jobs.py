#!/usr/bin/env python3
"""Three jobs that keep GPU memory alive through Python references, for the holders check
on a real GPU (tests/gpu/holders.sh): `hook` keeps each gradient in a global list from a
tensor hook, `total` does `total_loss += loss` (the graph of every step stays alive, with
what it saved for backward), `lru` caches a tensor in an lru_cache of a helper module.
Marks "iteration N" at the end of each step (culeak record --holders walks there) and
"end" before it exits.

    holders_jobs.py hook|total|lru [STEPS]"""
import ctypes
import functools
import sys

import torch

mode = sys.argv[1]
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
dev = torch.device("cuda")
w = torch.randn(256, 256, device=dev, requires_grad=True)
grads = []
total_loss = 0


@functools.lru_cache(maxsize=None)
def table(n):
    return torch.randn(n, n, device=dev)


mark = getattr(ctypes.CDLL(None), "culeak_mark_label", None)
if mode == "hook":
    w.register_hook(lambda g: grads.append(g.clone()))
for i in range(steps):
    x = torch.randn(64, 256, device=dev)
    loss = (torch.tanh(x @ w) * 3).sum()
    if mode == "total":
        total_loss += loss
    elif mode == "hook":
        loss.backward()
    elif mode == "lru":
        table(128 + i)
    if mark:
        mark(b"iteration %d" % i)
torch.cuda.synchronize()
if mark:
    mark(b"end")
print("holders_jobs %s: %d steps" % (mode, steps))
