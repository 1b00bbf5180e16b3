# Caching allocator ON: a loop that keeps a 6 MiB tensor per step in a list (new segments
# as it grows) and churns a matmul. At each mark it prints what PyTorch itself says,
# "MEM <label> <memory_allocated> <memory_reserved>", for tests/gpu/check_rows.py to put
# beside culeak's allocated and reserved at that mark. Sizes are multiples of 512 bytes, so
# the allocator's rounding leaves memory_allocated() equal to the blocks' bytes.
import sys

import torch

import culeak

iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 12
a = torch.randn(1024, 1024, device="cuda")
kept = []
for i in range(iterations):
    label = "iteration %d" % i
    torch.cuda.synchronize()
    culeak.mark(label)
    print("MEM %s %d %d" % (label, torch.cuda.memory_allocated(), torch.cuda.memory_reserved()), flush=True)
    kept.append(torch.empty(6 << 20, dtype=torch.uint8, device="cuda"))  # KEEP
    scratch = a @ a
    del scratch
torch.cuda.synchronize()
print("pool_rows: %d tensors kept" % len(kept))
