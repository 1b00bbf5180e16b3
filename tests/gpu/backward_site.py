# Caching allocator ON: a 4-layer transformer training loop. Its gradients are made on
# autograd's threads, which have no Python frames: culeak charges them to the backward()
# line (BACKWARD), marked "(autograd backward)". Each step also keeps the input gradient
# torch.autograd.grad returns (KEEP), made on those threads too: the diff between two
# marks must put that growth at the KEEP line. tests/gpu/run.sh (section blocks) checks
# both, and that no site is an allocator's frame (record_trace, empty_generic, ...).
import sys

import torch

import culeak

iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 20
layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True)
model = torch.nn.TransformerEncoder(layer, 4).cuda()
opt = torch.optim.AdamW(model.parameters())
x = torch.randn(8, 64, 256, device="cuda")
kept = []
for i in range(iterations):
    culeak.mark("iteration %d" % i)
    opt.zero_grad(set_to_none=True)
    loss = model(x).square().mean()
    loss.backward()  # BACKWARD
    opt.step()
    y = x.detach().requires_grad_()
    kept.append(torch.autograd.grad(model(y).sum(), y)[0])  # KEEP
torch.cuda.synchronize()
print("backward_site: %d gradients kept" % len(kept))
