"""PyTorch under culeak: prints a ledger of the memory PyTorch's own allocator reports, so
check.py can assert culeak saw it. Mode comes from the environment the caller set:
caching (default), PYTORCH_NO_CUDA_MEMORY_CACHING=1, or expandable_segments:True."""
import os
import sys

import torch


def ledger(*words):
    print("LEDGER", *words, file=sys.stderr, flush=True)


no_cache = os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING") == "1"
keep = []
for i in range(6):
    t = torch.randn(256 * (i + 1), 1024, device="cuda")
    y = (t @ t.T).sum()
    keep.append(t)
    if no_cache:
        ledger("tensor", t.untyped_storage().nbytes(), hex(t.data_ptr()))
torch.cuda.synchronize()
float(y)
if not no_cache:
    for seg in torch.cuda.memory_snapshot():
        ledger("segment", seg["total_size"], hex(seg["address"]))
print("torch: done", torch.cuda.memory_reserved())
