"""A data-parallel training job with a leak planted on rank 1 only.

Run with torchrun (--nproc_per_node 2). With one GPU both ranks share device 0 and use
gloo; with two or more, each rank has its own device and NCCL. Rank 1 keeps every
iteration's activations alive (the leak); rank 0 does not. Prints a LEDGER line per rank
so check scripts know which pid is which rank."""
import os
import sys

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
# one write per line: the ranks share stderr
sys.stderr.write(f"LEDGER rank {rank} {os.getpid()} {device} {backend}\n")
sys.stderr.flush()

model = DDP(torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(),
                                torch.nn.Linear(1024, 10)).cuda(device),
            device_ids=[device] if backend == "nccl" else None)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
kept = []
for it in range(int(os.environ.get("ITERATIONS", "10"))):
    torch.cuda.nvtx.range_push(f"iteration {it}")
    x = torch.randn(256, 512, device=device)
    loss = model(x).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 1:
        kept.append(torch.empty(1 << 20, dtype=torch.uint8, device=device))  # the planted leak
    torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
dist.barrier()
dist.destroy_process_group()
print(f"rank {rank}: done, kept {len(kept)} blocks")
