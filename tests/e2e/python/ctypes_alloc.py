# Allocates through the fake driver by ctypes (which releases the GIL around the call,
# like the frameworks), from the main thread, from two threads and from a forked child.
# Line numbers matter: tests/e2e/python_frames.sh looks for the lines marked SITE-*.
import ctypes
import os
import sys
import threading

cuda = ctypes.CDLL(os.environ["FAKE_LIBCUDA"])


def check(r):
    if r != 0:
        raise RuntimeError("CUDA error %d" % r)


def setup():
    check(cuda.cuInit(0))
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    check(cuda.cuDeviceGet(ctypes.byref(dev), 0))
    check(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
    check(cuda.cuCtxSetCurrent(ctx))


def device_alloc(size):
    p = ctypes.c_uint64()
    check(cuda.cuMemAlloc_v2(ctypes.byref(p), ctypes.c_size_t(size)))  # SITE-ALLOC
    return p.value


class Trainer:
    def step(self, i):
        return device_alloc(4096 * (i + 1))  # SITE-STEP


def worker(n, out):
    setup()
    out.append(device_alloc(1000 + n))  # SITE-THREAD


setup()
kept = [Trainer().step(i) for i in range(3)]  # SITE-MAIN
ctypes.CDLL(None).culeak_mark_label(b"after main")
threads_out = []
threads = [threading.Thread(target=worker, args=(n, threads_out)) for n in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
sys.path.insert(0, os.environ["CULEAK_PYTHON_DIR"])
import culeak  # noqa: E402

culeak.mark("before fork")
# The parent allocates (and frees) from the very frames the child allocates from after
# the fork: the child's recording must still name them (its frames are its own stream's).
for forked in (False, True):
    if forked:
        pid = os.fork()
        if pid != 0:
            break
        setup()
    p = device_alloc(777 if forked else 778)  # SITE-CHILD
    if forked:
        sys.exit(0)  # not os._exit: the shim writes the rest of its recording at exit
    check(cuda.cuMemFree_v2(ctypes.c_uint64(p)))
_, status = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(status))
