#!/usr/bin/env python3
"""One training step of a 4-layer transformer encoder (batch 32x128x512, AdamW), caching
allocator on: untraced, under culeak with tensor tracking (`culeak record`), and under
PyTorch's memory history with Python stacks. The three run interleaved, each in its own
process, REPS times; each process times STEPS steps after a warm-up and reports its
median. Prints, per configuration, the median of those medians, their spread (min-max)
and the ratio to untraced. Needs a GPU and torch: a benchmark, not a test.

    bench/train_step.py [--reps 5] [--steps 40] [--culeak build/culeak]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def child(mode, steps):
    import torch

    if mode == "history":
        torch.cuda.memory._record_memory_history(stacks="python", max_entries=1000000)
    layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, 4).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(32, 128, 512, device="cuda")

    def step():
        loss = model(x).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    for _ in range(10):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    print("median_ms %.4f" % (statistics.median(times) * 1e3))


def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    for line in out.stdout.splitlines():
        if line.startswith("median_ms"):
            return float(line.split()[1])
    raise SystemExit("no timing from %s:\n%s" % (" ".join(cmd), out.stderr[-2000:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--child")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--culeak", default=os.path.join(os.path.dirname(__file__), "..", "build", "culeak"))
    a = ap.parse_args()
    if a.child:
        return child(a.child, a.steps)
    me = [sys.executable, os.path.abspath(__file__), "--steps", str(a.steps), "--child"]
    rec = os.path.join(tempfile.mkdtemp(), "bench.culeak")
    configs = {
        "untraced": me + ["plain"],
        "culeak (tensor tracking)": [a.culeak, "record", "-o", rec, "--"] + me + ["plain"],
        "torch memory history, stacks='python'": me + ["history"],
    }
    res = {k: [] for k in configs}
    names = list(configs)
    for r in range(a.reps):
        for k in names[r % 3:] + names[:r % 3]:  # a different order each repetition
            res[k].append(run(configs[k]))
            # each process's figure as it comes, so a run cut short still says what it measured
            print("repetition %d: %-40s %7.3f ms" % (r + 1, k, res[k][-1]), flush=True)
    base = statistics.median(res["untraced"])
    print("one training step, %d processes per configuration, %d timed steps each" % (a.reps, a.steps))
    for k in names:
        m = statistics.median(res[k])
        print("%-40s median %7.3f ms  (min %.3f, max %.3f)  %.3fx untraced"
              % (k, m, min(res[k]), max(res[k]), m / base))
    if os.path.exists(rec):
        # the figure means something only if the tensors were tracked: count their events
        dump = subprocess.run([a.culeak, "dump", rec], capture_output=True, text=True).stdout
        blocks = sum(1 for line in dump.splitlines() if '"kind":"block"' in line)
        print("culeak recording of the last run: %d bytes, %d block events%s"
              % (os.path.getsize(rec), blocks, "" if blocks else " (tensor tracking was off)"))


if __name__ == "__main__":
    main()
