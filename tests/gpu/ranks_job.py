"""A data-parallel job for tests/gpu/ranks.sh: two ranks under torchrun on one GPU (gloo;
NCCL when each rank has a GPU of its own), rank LEAK_RANK (1) keeping 4 MiB an iteration
at the line marked "the planted leak". Each iteration is an NVTX range "iteration N" (the
marks of the growth suspects) and lasts at least PAUSE seconds (0.1), so that the job runs
long enough for its /metrics to be read."""
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
ngpu = torch.cuda.device_count()
device = rank % ngpu
torch.cuda.set_device(device)
backend = "nccl" if ngpu >= world else "gloo"
dist.init_process_group(backend)
model = DDP(torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 10)).cuda(device),
            device_ids=[device] if backend == "nccl" else None)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
leaker = int(os.environ.get("LEAK_RANK", "1"))
pause = float(os.environ.get("PAUSE", "0.1"))
kept = []
for it in range(int(os.environ.get("ITERATIONS", "30"))):
    start = time.monotonic()
    torch.cuda.nvtx.range_push(f"iteration {it}")
    x = torch.randn(256, 512, device=device)
    loss = model(x).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == leaker:
        kept.append(torch.empty(4 << 20, dtype=torch.uint8, device=device))  # the planted leak
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    time.sleep(max(0.0, pause - (time.monotonic() - start)))
dist.barrier()
dist.destroy_process_group()
print(f"rank {rank}: done, kept {len(kept)} blocks", flush=True)
