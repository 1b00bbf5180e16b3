# A PyTorch training job (caching allocator on) started WITHOUT culeak, which keeps one
# 4 MiB tensor per iteration; tests/gpu/run.sh attaches `culeak record --pid` to it while
# it runs (culeak's Python side then attaches PyTorch's trace tracker at once and sends
# the allocator's snapshot as before-attach rows) and checks that the diff between two
# iterations after the attach names the KEEP line, from the first iteration on, and that
# the pool's totals at the mark "attached" are the allocator's own. Usage: attach_job.py
# PREFIX: writes PREFIX.ready after its first iterations (memory already held when culeak
# comes), waits for PREFIX.go, marks "attached" and writes the allocator's totals then to
# PREFIX.pool, runs 20 more marked iterations.
# It allows any process of its user to trace it (prctl PR_SET_PTRACER_ANY), so that the
# attach works under kernel.yama.ptrace_scope=1 without CAP_SYS_PTRACE.
import ctypes
import os
import sys
import time

import torch

import culeak  # the wheel's module: its marks find the shim once culeak has attached

PR_SET_PTRACER, PR_SET_PTRACER_ANY = 0x59616D61, ctypes.c_ulong(-1).value
ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PTRACER, ctypes.c_ulong(PR_SET_PTRACER_ANY), 0, 0, 0)

prefix = sys.argv[1]
model = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(256, 4, 512, batch_first=True), 2).cuda()
opt = torch.optim.AdamW(model.parameters())
x = torch.randn(8, 64, 256, device="cuda")
history = []


def step():
    loss = model(x).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    history.append(loss.detach() * torch.ones(1 << 20, device="cuda"))  # KEEP


for _ in range(5):
    step()
torch.cuda.synchronize()
open(prefix + ".ready", "w").close()
while not os.path.exists(prefix + ".go"):
    time.sleep(0.05)
time.sleep(1.1)  # culeak.mark looks for the shim at most once a second
torch.cuda.synchronize()
culeak.mark("attached")
segments = torch.cuda.memory_snapshot()
blocks = [b["size"] for s in segments for b in s["blocks"] if b["state"] in ("active_allocated", "active_pending_free")]
with open(prefix + ".pool", "w") as f:
    f.write("allocated %d bytes in %d blocks, reserved %d bytes in %d segments\n"
            % (sum(blocks), len(blocks), sum(s["total_size"] for s in segments), len(segments)))
for i in range(20):
    culeak.mark("iteration %d" % i)
    step()
    time.sleep(0.05)
torch.cuda.synchronize()
print("attach_job: %d tensors kept" % len(history))
