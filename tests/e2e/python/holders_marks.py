# A job of the stand-in torch that marks each iteration (culeak.mark) and keeps one more
# tensor in a global list each time, and a scratch tensor in a local of the running frame
# that it moves to a global list at the third iteration and drops at the fourth; one
# tensor a global holds all along. tests/e2e/holders_marks.sh records it with
# --holders: the reports say, at each mark, who held the blocks then. Line numbers
# matter: the script looks for the lines marked SITE-*.
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site-packages"))
import culeak  # noqa: E402
import torch  # noqa: E402

ctypes.CDLL("libcudart.so.13").cudaFree(None)  # the context, as torch makes it first
ctypes.CDLL(os.environ["FAKE_C10"]).fake_c10_init(1)
kept = []
stash = []
fixed = torch.empty(512)  # SITE-FIXED


def train(steps):
    scratch = None
    for i in range(steps):
        kept.append(torch.empty(1024))  # SITE-KEPT
        if i == 0:
            scratch = torch.empty(2048)  # SITE-SCRATCH
        if i == 2:
            stash.append(scratch)
            scratch = None
        if i == 3:
            stash.clear()
        culeak.mark("iteration %d" % i)
    return scratch


train(5)
print("holders_marks: %d kept" % len(kept))
