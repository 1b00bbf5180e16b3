# A PyTorch training job busy in its loop (caching allocator on, no sleep between steps),
# started WITHOUT culeak, keeping one 1 MiB tensor every iteration; tests/gpu/run.sh
# attaches `culeak record --pid` to it 10 times mid-iteration and detaches each time
# (SIGINT), and checks that the job survives every attach, ends with exit 0 and its own
# output, and that each recording's diff between its first and last marks names the KEEP
# line. Usage: attach_busy.py PREFIX: writes PREFIX.ready once the loop runs, stops when
# PREFIX.end exists. It allows any tracer of its user (prctl PR_SET_PTRACER_ANY).
import ctypes
import os
import sys

import torch

import culeak  # the wheel's module: its marks reach the shim once culeak has attached

PR_SET_PTRACER, PR_SET_PTRACER_ANY = 0x59616D61, ctypes.c_ulong(-1).value
ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PTRACER, ctypes.c_ulong(PR_SET_PTRACER_ANY), 0, 0, 0)

prefix = sys.argv[1]
torch.manual_seed(0)
model = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(256, 4, 512, batch_first=True), 2).cuda()
opt = torch.optim.AdamW(model.parameters())
x = torch.randn(8, 64, 256, device="cuda")
kept = []
i = 0
while not os.path.exists(prefix + ".end"):
    culeak.mark("iteration %d" % i)
    loss = model(x).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    kept.append(loss.detach() * torch.ones(1 << 18, device="cuda"))  # KEEP
    if len(kept) > 2000:  # bounded: the job must not fill the GPU over a long run
        kept = kept[1000:]
    if i == 20:
        open(prefix + ".ready", "w").close()
    i += 1
torch.cuda.synchronize()
print("attach_busy: %d iterations, final loss %.6f" % (i, loss.item()))
