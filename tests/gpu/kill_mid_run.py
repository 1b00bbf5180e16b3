"""A PyTorch job killed by SIGKILL mid-run: allocates a 4 MiB tensor every 10 ms and keeps
it, printing "allocated K" once the K-th is made (after its cudaMalloc, under --no-pool);
tests/gpu/run.sh kills it from outside after some of them. Prints "pid N" first."""
import os
import sys
import time

import torch

print("pid", os.getpid(), flush=True)
kept = []
for k in range(1, 2001):
    kept.append(torch.empty(1 << 20, dtype=torch.float32, device="cuda"))
    torch.cuda.synchronize()
    print("allocated", k, flush=True)
    time.sleep(0.01)
sys.exit(3)  # never reached when killed
