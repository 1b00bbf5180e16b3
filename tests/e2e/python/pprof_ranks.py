# One rank of a job for tests/e2e/report_pprof.sh and launcher_ranks.sh: allocates through the fake driver by
# ctypes from two functions, frees part of it, and marks each iteration, so that a
# report's bytes per function differ between what was allocated and what stays live.
import ctypes
import os
import sys

cuda = ctypes.CDLL(os.environ["FAKE_LIBCUDA"])
libc = ctypes.CDLL(None)
rank = int(os.environ.get("RANK", "0"))


def check(r):
    if r != 0:
        raise RuntimeError("CUDA error %d" % r)


def load_batch(i):
    p = ctypes.c_uint64()
    check(cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(1 << 20)))  # kept: 1 MiB an iteration
    return p.value


def scratch(i):
    p = ctypes.c_uint64()
    check(cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(3000 + 1000 * rank)))  # freed at once
    if i == 2:  # but once kept
        check(cuda.cuMemAlloc_v2(ctypes.byref(ctypes.c_uint64()), ctypes.c_size_t(777 + rank)))
    return p.value


def release(kept):
    check(cuda.cuMemFree_v2(ctypes.c_uint64(kept.pop(0))))


def train_step(i, kept):
    if i == 3:  # two batches given back: the last iteration's diff goes down
        release(kept)
        release(kept)
    kept.append(load_batch(i))
    check(cuda.cuMemFree_v2(ctypes.c_uint64(scratch(i))))


check(cuda.cuInit(0))
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
check(cuda.cuDeviceGet(ctypes.byref(dev), 0))
check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
check(cuda.cuCtxSetCurrent(ctx))
kept = []
for i in range(int(sys.argv[1]) if len(sys.argv) > 1 else 4):
    libc.culeak_mark_label(("iter %d" % i).encode())
    train_step(i, kept)
libc.culeak_mark_label(b"done")
