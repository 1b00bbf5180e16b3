# A PyTorch job that leaks nothing (caching allocator on): a small conv net (cuDNN) and a
# matmul (cuBLAS) trained a few steps; each step reads scalars back with .item() and
# float(x.sum()), which go through the pinned-host caching allocator. Everything it
# allocates is freed or held by PyTorch's allocators and handle pools at exit: tests/gpu/run.sh
# (section clean) expects `culeak check` to exit 0 and say nothing leaked.
import torch

torch.manual_seed(0)
net = torch.nn.Sequential(
    torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(16 * 32 * 32, 10)
).cuda()
opt = torch.optim.SGD(net.parameters(), lr=0.01)
total = 0.0
for step in range(5):
    x = torch.randn(8, 3, 32, 32, device="cuda")
    y = torch.randint(0, 10, (8,), device="cuda")
    loss = torch.nn.functional.cross_entropy(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    total += loss.item()
    total += float(x.sum())
a = torch.randn(256, 256, device="cuda")
total += float((a @ a).sum())
torch.cuda.synchronize()
print("clean_job: done %.3f" % total)
