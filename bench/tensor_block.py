#!/usr/bin/env python3
"""The tensor (block) path's cost: one allocation and free of a 16 KiB CUDA tensor from a
Python stack 6 deep, caching allocator on (so no cudaMalloc: a block of the pool each
time). Untraced, under `culeak record` (tensor tracking: a block event per allocation and
free, with the Python stack) and under PyTorch's memory history with Python stacks, each
in its own process, REPS processes per configuration, interleaved (a different order each
repetition). Each process times BATCHES batches of PAIRS pairs after a warm-up and reports
the median batch's ns per pair. Prints, per configuration, the median of the processes'
figures and their spread, what each adds to untraced, and culeak's addition over the
memory history's, from the medians and repetition by repetition. Needs a GPU and torch: a benchmark, not a test.

    bench/tensor_block.py [--reps 15] [--pairs 20000] [--culeak build/culeak] [--cpus 2,3] [--fixed-layout]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

DEPTH = 6
BATCHES = 7


def child(mode, pairs):
    import torch

    if mode == "history":
        torch.cuda.memory._record_memory_history(stacks="python", max_entries=10000000)
    torch.empty(1, device="cuda")  # the context and the pool's first segment

    def batch(n):
        for _ in range(n):
            t = torch.empty(4096, dtype=torch.float32, device="cuda")  # 16 KiB
            del t

    def at(d, n):  # the Python stack: at() DEPTH-1 times, then batch()
        if d > 1:
            return at(d - 1, n)
        batch(n)

    at(DEPTH - 1, pairs // 4)  # warm-up: the pool's block, culeak's stack nodes
    times = []
    for _ in range(BATCHES):
        t = time.perf_counter()
        at(DEPTH - 1, pairs)
        times.append((time.perf_counter() - t) / pairs * 1e9)
    print("ns_per_pair %.1f" % statistics.median(times))


ADDR_NO_RANDOMIZE = 0x0040000


def run(cmd, cpus=None, fixed=False):
    # cpus: the processors every process of the run is kept on (the job's and culeak's);
    # fixed: the same memory layout in every process (no address randomization, one hash
    # seed): a process's figure otherwise falls in one of two modes far apart (about 2.3
    # and 4.2 us untraced on the H200), whichever configuration it runs
    def setup():
        if cpus:
            os.sched_setaffinity(0, cpus)
        if fixed:
            import ctypes
            ctypes.CDLL(None).personality(ADDR_NO_RANDOMIZE)
    env = dict(os.environ, PYTHONHASHSEED="0") if fixed else None
    out = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=setup, env=env)
    for line in out.stdout.splitlines():
        if line.startswith("ns_per_pair"):
            return float(line.split()[1])
    raise SystemExit("no timing from %s:\n%s" % (" ".join(cmd), out.stderr[-2000:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--child")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--pairs", type=int, default=20000)
    ap.add_argument("--culeak", default=os.path.join(os.path.dirname(__file__), "..", "build", "culeak"))
    ap.add_argument("--cpus", help="keep every process on these processors (e.g. 2,3): less spread between "
                    "processes that land on different cores")
    ap.add_argument("--fixed-layout", action="store_true",
                    help="no address randomization and one hash seed in every process")
    a = ap.parse_args()
    cpus = {int(c) for c in a.cpus.split(",")} if a.cpus else None
    if a.child:
        return child(a.child, a.pairs)
    me = [sys.executable, os.path.abspath(__file__), "--pairs", str(a.pairs), "--child"]
    rec = os.path.join(tempfile.mkdtemp(), "bench.culeak")
    configs = {
        "untraced": me + ["plain"],
        "culeak (tensor tracking)": [a.culeak, "record", "-o", rec, "--"] + me + ["plain"],
        "torch memory history, stacks='python'": me + ["history"],
    }
    res = {k: [] for k in configs}
    names = list(configs)
    for r in range(a.reps):
        for k in names[r % 3:] + names[:r % 3]:
            res[k].append(run(configs[k], cpus, a.fixed_layout))
            print("repetition %d: %-40s %8.1f ns" % (r + 1, k, res[k][-1]), flush=True)
    base = statistics.median(res["untraced"])
    print("one alloc+free of a 16 KiB tensor, Python stack %d deep: %d processes per configuration, "
          "median of %d batches of %d pairs each%s" % (DEPTH, a.reps, BATCHES, a.pairs,
                                                       (", on processors " + a.cpus if a.cpus else "") +
                                                       (", one memory layout" if a.fixed_layout else "")))
    added = {}
    for k in names:
        m = statistics.median(res[k])
        added[k] = m - base
        print("%-40s median %8.1f ns  (min %.1f, max %.1f)  adds %+8.1f ns"
              % (k, m, min(res[k]), max(res[k]), added[k]))
    hist = added["torch memory history, stacks='python'"]
    if hist > 0:
        print("culeak adds %.2f of what the memory history adds" % (added["culeak (tensor tracking)"] / hist))
    # Pair by pair: each repetition runs the three one after another, so what the machine's
    # load does to a repetition falls on all three; the medians of each repetition's
    # additions, and of its ratio.
    c_add = [c - u for c, u in zip(res["culeak (tensor tracking)"], res["untraced"])]
    h_add = [h - u for h, u in zip(res["torch memory history, stacks='python'"], res["untraced"])]
    ratios = sorted(c / h for c, h in zip(c_add, h_add) if h > 0)
    print("repetition by repetition: culeak adds %+.1f ns (median; %.1f to %.1f), the memory history %+.1f ns "
          "(%.1f to %.1f)" % (statistics.median(c_add), min(c_add), max(c_add), statistics.median(h_add),
                              min(h_add), max(h_add)))
    if ratios:
        q1, q3 = ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4]
        print("culeak / memory history, repetition by repetition: median %.2f (quartiles %.2f to %.2f, "
              "%d repetitions)" % (statistics.median(ratios), q1, q3, len(ratios)))
    if os.path.exists(rec):
        # the figure means something only if the tensors were tracked: count their events
        dump = subprocess.run([a.culeak, "dump", rec], capture_output=True, text=True).stdout
        blocks = sum(1 for line in dump.splitlines() if '"kind":"block"' in line)
        lost = sum(1 for line in dump.splitlines() if '"type":"lost"' in line)
        print("culeak recording of the last run: %d bytes, %d block events, %d LOST records%s"
              % (os.path.getsize(rec), blocks, lost, "" if blocks else " (tensor tracking was off)"))


if __name__ == "__main__":
    main()
