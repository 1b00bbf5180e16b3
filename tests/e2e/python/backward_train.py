# A training loop on the stand-in torch (tests/e2e/python/site-packages/torch): each step's
# loss.backward() runs on an engine thread without Python frames (the fake libtorch_cpu.so
# of tests/fakecuda/torch), which makes a gradient from the fake caching allocator through
# ATen's empty helper; each loss is kept with its gradient (the leak). Marks "iteration N".
# Line numbers matter: tests/e2e/backward_site.sh looks for the line marked SITE-BACKWARD.
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site-packages"))
import torch  # noqa: E402


class Loss(torch.Tensor):
    def __init__(self, nbytes):
        self.nbytes = nbytes


c10 = ctypes.CDLL(os.environ["FAKE_C10"])
ctypes.CDLL("libcudart.so.13").cudaFree(None)  # the context, as torch makes it first
c10.fake_c10_init(1)
mark = ctypes.CDLL(None).culeak_mark_label
iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 8
kept = []
for i in range(iterations):
    mark(b"iteration %d" % i)
    loss = Loss(4096)
    loss.backward()  # SITE-BACKWARD
    kept.append(loss)
# after backward() returned: a block made on a thread without Python frames is no gradient
c10.fake_c10_malloc_in_thread.restype = ctypes.c_void_p
c10.fake_c10_malloc_in_thread(8192)
print("backward_train: %d gradients kept" % sum(1 for t in kept if t.grad))
