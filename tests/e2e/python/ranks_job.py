# One rank of a job for tests/e2e/report_ranks.sh: every rank allocates and frees a
# scratch buffer each iteration through the fake driver (by ctypes); rank LEAK_RANK also
# keeps 1 MiB an iteration in load_batch and 64 KiB in keep_stats (a slower leak: the
# rank's growth is its fastest). Each iteration is marked "iteration N".
import ctypes
import os
import sys

cuda = ctypes.CDLL(os.environ["FAKE_LIBCUDA"])
libc = ctypes.CDLL(None)
rank = int(os.environ.get("RANK", "0"))
leaker = int(os.environ.get("LEAK_RANK", "1"))


def check(r):
    if r != 0:
        raise RuntimeError("CUDA error %d" % r)


def alloc(n):
    p = ctypes.c_uint64()
    check(cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(n)))
    return p.value


def load_batch(kept):
    p = ctypes.c_uint64()
    check(cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(1 << 20)))  # the leak: kept every iteration
    kept.append(p.value)


def keep_stats(kept):
    p = ctypes.c_uint64()
    check(cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(1 << 16)))  # the slower leak
    kept.append(p.value)


def scratch():
    check(cuda.cuMemFree_v2(ctypes.c_uint64(alloc(1 << 16))))


check(cuda.cuInit(0))
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
check(cuda.cuDeviceGet(ctypes.byref(dev), 0))
check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
check(cuda.cuCtxSetCurrent(ctx))
base = alloc(4 << 20)  # the model's weights, freed at the end
kept = []
for i in range(int(sys.argv[1]) if len(sys.argv) > 1 else 12):
    libc.culeak_mark_label(("iteration %d" % i).encode())
    if rank == leaker:
        load_batch(kept)
        keep_stats(kept)
    scratch()
libc.culeak_mark_label(b"done")
check(cuda.cuMemFree_v2(ctypes.c_uint64(base)))
