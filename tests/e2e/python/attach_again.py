# A training loop on the fake caching allocator, started without culeak, attached twice:
# it keeps one tensor before any attach, writes DIR/ready, then for round 1 and round 2
# waits for DIR/goN, keeps one 3 MiB tensor per step for four steps marked "round N
# iteration I" (culeak.mark finds the attached shim), and writes DIR/doneN. Writes
# DIR/leaked, waits for DIR/end. tests/e2e/attach_again.sh looks for SITE-KEEP.
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
kept = [tensorlib.forward(1 << 20)]
open(os.path.join(d, "ready"), "w").close()
for r in (1, 2):
    wait_for("go%d" % r)
    for i in range(4):
        culeak.mark("round %d iteration %d" % (r, i))
        kept.append(tensorlib.forward(3 << 20))  # SITE-KEEP
    open(os.path.join(d, "done%d" % r), "w").close()
print("attach_again: %d tensors kept" % len(kept))
sys.stdout.flush()
open(os.path.join(d, "leaked"), "w").close()
wait_for("end")
