# Caching allocator ON (the default): a small training loop that keeps one tensor per
# step in a list. tests/gpu/run.sh checks the diff between two iteration marks names the
# KEEP line. Marks through culeak.mark (on PYTHONPATH under culeak).
import sys
import time

import torch

import culeak

iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 20
delay = float(sys.argv[2]) if len(sys.argv) > 2 else 0
model = torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(256, 4, 512, batch_first=True), 2).cuda()
opt = torch.optim.AdamW(model.parameters())
x = torch.randn(8, 64, 256, device="cuda")
history = []
for i in range(iterations):
    culeak.mark("iteration %d" % i)
    loss = model(x).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    history.append(loss.detach() * 1.0)  # KEEP
    time.sleep(delay)
torch.cuda.synchronize()
print("keep_tensor: %d tensors kept" % len(history))
