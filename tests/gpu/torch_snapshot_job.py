# A leaking training loop for tests/gpu/torch_snapshot.sh: each iteration keeps one 4 MiB
# tensor (LEAK) and calls backward() (BACKWARD), marked "iteration N"; PyTorch's own memory
# history is on, and the job dumps its own snapshot to argv[1] before it ends.
import sys

import torch

import culeak

iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 16
torch.cuda.memory._record_memory_history(max_entries=100000)
model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 512)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
kept = []
for i in range(iterations):
    culeak.mark("iteration %d" % i)
    x = torch.randn(64, 512, device="cuda")
    loss = model(x).square().mean()
    opt.zero_grad()
    loss.backward()  # BACKWARD
    opt.step()
    kept.append(torch.empty(1 << 20, device="cuda"))  # LEAK
torch.cuda.synchronize()
torch.cuda.memory._dump_snapshot(sys.argv[1])
print("torch_snapshot_job: %d tensors kept" % len(kept))
