# A training loop on the fake caching allocator, started without culeak: it keeps two
# tensors before the attach, writes DIR/ready, waits for DIR/go, then keeps one 3 MiB
# tensor per step (each a segment of its own, as PyTorch's large pool takes them) and
# churns a small one, marking "iteration N" with culeak.mark, which finds the attached shim.
# Writes DIR/leaked, waits for DIR/end. tests/e2e/attach_blocks.sh looks for SITE-KEEP.
import ctypes
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site-packages"))
import culeak  # noqa: E402
import tensorlib  # noqa: E402

c10 = ctypes.CDLL(os.environ["FAKE_C10"])
cudart = ctypes.CDLL("libcudart.so.13")
d = sys.argv[1]


def wait_for(name):
    while not os.path.exists(os.path.join(d, name)):
        time.sleep(0.01)


cudart.cudaFree(None)  # the context, as torch makes it first
c10.fake_c10_init(1)
kept = [tensorlib.forward(1 << 20), tensorlib.forward(1 << 20)]
open(os.path.join(d, "ready"), "w").close()
wait_for("go")
for i in range(6):
    culeak.mark("iteration %d" % i)
    kept.append(tensorlib.forward(3 << 20))  # SITE-KEEP
    scratch = tensorlib.forward(65536)
    del scratch
print("attach_train: %d tensors kept" % len(kept))
sys.stdout.flush()
open(os.path.join(d, "leaked"), "w").close()
wait_for("end")
