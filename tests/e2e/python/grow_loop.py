# A training-like loop through the fake driver by ctypes: each iteration keeps 1 MiB (the
# leak) and is marked "iteration N" by culeak.mark. With "oom", halfway through it holds
# half of the free memory, fails to allocate all of it (more than is left) and frees the
# half, so the peak and the failed allocation fall together in the middle of the run.
# Usage: grow_loop.py ITERATIONS DELAY_S [oom]. Tests look for the lines marked SITE-*.
import ctypes
import os
import sys
import time

sys.path.insert(0, os.environ["CULEAK_PYTHON_DIR"])
import culeak  # noqa: E402

cuda = ctypes.CDLL(os.environ["FAKE_LIBCUDA"])
MIB = 1 << 20


def check(r):
    if r != 0:
        raise RuntimeError("CUDA error %d" % r)


def setup():
    check(cuda.cuInit(0))
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    check(cuda.cuDeviceGet(ctypes.byref(dev), 0))
    check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
    check(cuda.cuCtxSetCurrent(ctx))


def step(kept):
    p = ctypes.c_uint64()
    check(cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(MIB)))  # SITE-GROW
    kept.append(p)


def spike():
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    check(cuda.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)))
    big, more = ctypes.c_uint64(), ctypes.c_uint64()
    check(cuda.cuMemAlloc_v2(ctypes.byref(big), ctypes.c_size_t(free.value // 2)))  # SITE-SPIKE
    if cuda.cuMemAlloc_v2(ctypes.byref(more), ctypes.c_size_t(free.value)) == 0:  # SITE-FAIL
        raise RuntimeError("allocated more than the device had free")
    check(cuda.cuMemFree_v2(big))


iterations, delay = int(sys.argv[1]), float(sys.argv[2])
setup()
kept = []
for i in range(iterations):
    step(kept)
    if len(sys.argv) > 3 and i == iterations // 2:
        spike()
    culeak.mark("iteration %d" % i)
    time.sleep(delay)
print("grow_loop: %d iterations, %d MiB kept" % (iterations, len(kept)))
