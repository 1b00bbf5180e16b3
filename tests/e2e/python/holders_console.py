# A job of the stand-in torch that keeps three tensors in a global list, says it is ready,
# then runs Python until the file argv[1] exists: tests/e2e/holders_console.sh asks the
# console `holders SITE` meanwhile. Line numbers matter: the script looks for SITE-KEPT.
import ctypes
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site-packages"))
import torch  # noqa: E402

ctypes.CDLL("libcudart.so.13").cudaFree(None)  # the context, as torch makes it first
ctypes.CDLL(os.environ["FAKE_C10"]).fake_c10_init(1)
kept = []
for i in range(3):
    kept.append(torch.empty(4096))  # SITE-KEPT
print("holders_console: ready", flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.05)
print("holders_console: %d kept" % len(kept), flush=True)
