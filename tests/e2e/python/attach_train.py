# A training loop on the fake caching allocator, started without culeak (torch imported,
# the stand-in): it keeps two tensors (1 MiB and 512 KiB, in one 2 MiB segment) before
# the attach, writes DIR/ready, waits for DIR/go, then per step churns a small tensor
# (carved from that segment: no new one) and keeps one 3 MiB tensor (a segment of its own,
# as PyTorch's large pool takes them), marking "iteration N" and "scratch N" (the small
# tensor live) with culeak.mark, which finds the attached shim; at "scratch 0" it writes
# the allocator's totals (torch.cuda.memory_snapshot) to DIR/pool0. Then one backward()
# (its gradient made on an engine thread without Python frames), marked "after backward".
# Writes DIR/leaked, waits for DIR/end. tests/e2e/attach_blocks.sh looks for SITE-KEEP.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site-packages"))
import culeak  # noqa: E402
import tensorlib  # noqa: E402
import torch  # noqa: E402
from attach_job import start, wait_for as wait_in  # noqa: E402

d = sys.argv[1]


def wait_for(name):
    wait_in(d, name)


start()
kept = [tensorlib.forward(1 << 20), tensorlib.forward(512 << 10)]
open(os.path.join(d, "ready"), "w").close()
wait_for("go")
for i in range(6):
    culeak.mark("iteration %d" % i)
    scratch = tensorlib.forward(65536)  # SITE-SCRATCH
    culeak.mark("scratch %d" % i)
    if i == 0:  # the allocator's own totals at that mark, for the test to compare
        segs = torch.cuda.memory_snapshot()
        blocks = [b["size"] for s in segs for b in s["blocks"]]
        with open(os.path.join(d, "pool0"), "w") as f:
            f.write("allocated %d bytes in %d blocks, reserved %d bytes in %d segments\n"
                    % (sum(blocks), len(blocks), sum(s["total_size"] for s in segs), len(segs)))
    del scratch
    kept.append(tensorlib.forward(3 << 20))  # SITE-KEEP
loss = torch.Tensor()
loss.nbytes = 4096
loss.backward()  # SITE-BACKWARD
culeak.mark("after backward")
print("attach_train: %d tensors kept" % len(kept))
sys.stdout.flush()
open(os.path.join(d, "leaked"), "w").close()
wait_for("end")
