"""A small PyTorch training loop with the classic Python-side leak.

Every iteration trains a tiny MLP on a synthetic batch, then adds the loss on a held-out
batch to a running total for the progress line. That validation forward runs with autograd
on (no torch.no_grad()) and the total is kept as a tensor: `total_loss += ...` keeps each
iteration's graph alive, and with it every activation the forward saved for a backward
that never comes. GPU memory grows by those activations each iteration; culeak shows them
allocated at the `total_loss +=` line (the framework's own frames are looked through).
--fixed accumulates `.item()`, a Python float, and memory stays flat.

    culeak record --no-pool -o train.culeak -- python3 demo/train_leak.py
    culeak report train.culeak --diff "iteration 2" "iteration 18"

Each iteration is an NVTX range "iteration N" (torch.cuda.nvtx), which culeak records as
marks, so snapshots and diffs can be taken at iterations.
"""
import argparse
import time

import torch
from torch import nn


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--delay", type=float, default=0.0, help="seconds to sleep per iteration")
    ap.add_argument("--fixed", action="store_true", help="accumulate loss.item(): no leak")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=1024)
    args = ap.parse_args()

    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = nn.Sequential(
        nn.Linear(64, args.hidden), nn.ReLU(),
        nn.Linear(args.hidden, args.hidden), nn.ReLU(),
        nn.Linear(args.hidden, 1),
    ).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    loss_fn = nn.MSELoss()
    x_val = torch.randn(args.batch, 64, device=dev)
    y_val = x_val.sum(dim=1, keepdim=True)

    total_loss = 0.0
    for i in range(args.iterations):
        torch.cuda.nvtx.range_push(f"iteration {i}")
        x = torch.randn(args.batch, 64, device=dev)
        y = x.sum(dim=1, keepdim=True)
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        if args.fixed:
            total_loss += loss_fn(model(x_val), y_val).item()
        else:
            total_loss += loss_fn(model(x_val), y_val)  # LEAK: keeps every validation graph
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        print(f"iteration {i}: train loss {loss.item():.4f}, "
              f"allocated {torch.cuda.memory_allocated() / 2**20:.1f} MiB", flush=True)
        if args.delay:
            time.sleep(args.delay)
    print(f"mean validation loss {float(total_loss) / args.iterations:.4f}")


if __name__ == "__main__":
    main()
