# A job that keeps tensors of the stand-in torch past its end: three in a global list (one
# site), one in an lru_cache of a helper (another). tests/e2e/holders_report.sh checks that
# the report at its mark "end" and the leak report say who holds each: HELD BY lines in text, "holders" in JSON. Line
# numbers matter: the script looks for the lines marked SITE-*.
import ctypes
import functools
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site-packages"))
import torch  # noqa: E402

ctypes.CDLL("libcudart.so.13").cudaFree(None)  # the context, as torch makes it first
ctypes.CDLL(os.environ["FAKE_C10"]).fake_c10_init(1)
grads = []


@functools.lru_cache(maxsize=None)
def table(n):
    return torch.empty(n)  # SITE-CACHED


for i in range(3):
    grads.append(torch.empty(4096))  # SITE-GRADS
    table(8192)
ctypes.CDLL(None).culeak_mark_label(b"end")
print("holders_job: %d kept" % len(grads))
