# A training loop on the fake caching allocator: each step keeps one block (the leak),
# makes and drops another (churn), through an installed library. Marks "iteration N".
# Line numbers matter: tests/e2e/blocks*.sh look for the lines marked SITE-*.
import ctypes
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site-packages"))
import tensorlib  # noqa: E402

c10 = ctypes.CDLL(os.environ["FAKE_C10"])
cudart = ctypes.CDLL("libcudart.so.13")
shim = ctypes.CDLL(None)
mark = getattr(shim, "culeak_mark_label", None)
iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 8
delay = float(sys.argv[2]) if len(sys.argv) > 2 else 0

cudart.cudaFree(None)  # the context, as torch makes it first
c10.fake_c10_init(1)
kept = []
for i in range(iterations):
    if mark:
        mark(b"iteration %d" % i)
    kept.append(tensorlib.forward(4096))  # SITE-KEEP
    scratch = tensorlib.forward(65536)  # SITE-CHURN
    del scratch
    time.sleep(delay)
c10.fake_c10_malloc_in_thread.restype = ctypes.c_void_p
c10.fake_c10_malloc_in_thread(ctypes.c_size_t(12800))  # a block of a thread without Python
print("blocks_train: %d blocks kept" % len(kept))
