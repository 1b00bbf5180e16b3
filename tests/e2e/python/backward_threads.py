# Two Python threads inside backward() at once (the stand-in torch, whose engine waits for
# both): first at one line, then at two lines. Marks "same line" and "two lines" before
# each; tests/e2e/backward_threads.sh looks for the lines marked BWD-*.
import ctypes
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site-packages"))
import torch  # noqa: E402


class Loss(torch.Tensor):
    def __init__(self, nbytes):
        self.nbytes = nbytes


c10 = ctypes.CDLL(os.environ["FAKE_C10"])
ctypes.CDLL("libcudart.so.13").cudaFree(None)
c10.fake_c10_init(1)
mark = ctypes.CDLL(None).culeak_mark_label
torch.autograd.together = 2
kept = []


def same(t):
    t.backward()  # BWD-SAME


def first(t):
    t.backward()  # BWD-FIRST


def second(t):
    t.backward()  # BWD-SECOND


def together(fns, nbytes):
    ts = [threading.Thread(target=fn, args=(Loss(nbytes),)) for fn in fns]
    for t in ts:
        kept.append(t._args[0])
        t.start()
    for t in ts:
        t.join()


mark(b"same line")
together([same, same], 8192)
mark(b"two lines")
together([first, second], 16384)
mark(b"done")
print("backward_threads: %d gradients" % sum(1 for t in kept if t.grad))
