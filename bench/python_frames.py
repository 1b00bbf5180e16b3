"""Cost of Python frame capture: ns per cuMemAlloc_v2 + cuMemFree_v2 pair called through
ctypes from Python code D frames deep, on the fake driver, without culeak, under
culeak with CULEAK_PYTHON=0 (native stacks only) and under culeak with Python frames.
Prints figures, judges nothing.

    python3 bench/python_frames.py [BUILD]        (after make BUILD=...; default build)
"""
import ctypes
import os
import subprocess
import sys
import tempfile
import time

PAIRS = 20000


def child(depth):
    cuda = ctypes.CDLL(os.environ["FAKE_LIBCUDA"])
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    cuda.cuInit(0)
    cuda.cuDeviceGet(ctypes.byref(dev), 0)
    cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
    cuda.cuCtxSetCurrent(ctx)
    alloc, free = cuda.cuMemAlloc_v2, cuda.cuMemFree_v2
    p = ctypes.c_uint64()
    pp, size = ctypes.byref(p), ctypes.c_size_t(256)

    def pairs(n):
        for _ in range(n):
            alloc(pp, size)
            free(p)

    def at(d):
        if d > 1:
            return at(d - 1)
        pairs(1000)
        t = time.perf_counter()
        pairs(PAIRS)
        return (time.perf_counter() - t) / PAIRS * 1e9

    print("%.0f" % min(at(depth) for _ in range(5)))


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    culeak = os.path.join(build, "culeak")
    env = dict(os.environ, FAKE_LIBCUDA=os.path.abspath(os.path.join(build, "fakecuda", "libcuda.so.1")))
    me = os.path.abspath(__file__)
    out = tempfile.mkdtemp()
    print("python frames: ns per alloc+free pair from Python at depth D (%s)" % sys.version.split()[0])
    for depth in (1, 10, 30, 60):
        def run(prefix, extra):
            cmd = prefix + [sys.executable, me, "--child", str(depth)]
            return subprocess.run(cmd, env=dict(env, **extra), capture_output=True, text=True, check=True).stdout.strip()
        rec = [culeak, "record", "-o", os.path.join(out, "b.culeak"), "--"]
        base = run([], {})
        native = run(rec, {"CULEAK_PYTHON": "0"})
        py = run(rec, {})
        print("  D=%-3d  %6s without culeak  %6s native stacks only  %6s with python frames" % (depth, base, native, py))


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(int(sys.argv[2]))
    else:
        main()
