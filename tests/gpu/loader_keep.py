# A training loop fed by a DataLoader with worker processes (forked, as on Linux by
# default) and pinned memory, with torch imported late (after the process has run a
# while), the caching allocator on, and one tensor per step kept (the KEEP line).
# tests/gpu/run.sh checks the diff between two iteration marks names the KEEP line.
import importlib
import sys
import time

import culeak


def main(iterations):
    time.sleep(0.2)  # the shim is long initialised when torch arrives
    torch = importlib.import_module("torch")
    from torch.utils.data import DataLoader, TensorDataset

    data = TensorDataset(torch.randn(iterations * 16, 128), torch.randint(0, 10, (iterations * 16,)))
    loader = DataLoader(data, batch_size=16, num_workers=2, pin_memory=True)
    model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    kept = []
    for i, (x, y) in enumerate(loader):
        culeak.mark("iteration %d" % i)
        x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        kept.append(model(x).detach())  # KEEP
    torch.cuda.synchronize()
    print("loader_keep: %d tensors kept, %d batches" % (len(kept), i + 1))


main(int(sys.argv[1]) if len(sys.argv) > 1 else 12)
