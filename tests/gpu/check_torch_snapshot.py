# Checks of tests/gpu/torch_snapshot.sh on PyTorch snapshots, with the torch the job ran on:
#   check_torch_snapshot.py viz FILE JOB LEAK BACKWARD
#     FILE loads in torch.cuda._memory_viz (trace_plot, segment_plot, segsum, which checks
#     that the blocks tile their segments, and trace); prints its block counts; an active
#     block's frames name JOB:LEAK, a block's or an entry's JOB:BACKWARD (a backward block
#     carries the line of its backward() call); a segment is named by an allocator PyTorch's
#     does not see (cuBLAS's workspaces).
#   check_torch_snapshot.py same A B
#     B (A read by culeak and written again) has A's segments and active blocks (the sizes
#     asked for) and loads in torch.cuda._memory_viz.
# Prints PASS/FAIL lines; exits 1 on a failure.
import pickle
import sys

from torch.cuda import _memory_viz as mv

fails = 0


def check(ok, what):
    global fails
    print("%s: %s" % ("PASS" if ok else "FAIL", what))
    fails += 0 if ok else 1


def names(frames, job, line):
    return any(f["filename"].endswith(job) and f["line"] == line for f in frames)


def load(path):
    d = pickle.load(open(path, "rb"))
    try:
        sizes = (len(mv.trace_plot(d)), len(mv.trace_plot(d, plot_segments=True)), len(mv.segment_plot(d)))
        mv.segsum(d)
        mv.trace(d)
        check(True, "%s loads in torch.cuda._memory_viz (trace_plot, segment_plot, segsum, trace: %s bytes of HTML)"
              % (path, "/".join(map(str, sizes))))
    except Exception as e:  # noqa: BLE001 - any error of the reader is the finding
        check(False, "%s does not load in torch.cuda._memory_viz: %r" % (path, e))
    return d


def blocks(d):
    return [b for s in d["segments"] for b in s["blocks"] if b["state"] != "inactive"]


def viz(path, job, leak, backward):
    d = load(path)
    all_blocks = [b for s in d["segments"] for b in s["blocks"]]
    entries = [e for t in d["device_traces"] for e in t]
    print("%s: %d segments, %d blocks (%d active), %d trace entries" % (path, len(d["segments"]), len(all_blocks),
                                                                        len(blocks(d)), len(entries)))
    check(sum(names(b["frames"], job, leak) for b in blocks(d)) >= 8, "active blocks name %s:%d" % (job, leak))
    check(any(names(x["frames"], job, backward) for x in all_blocks + entries),
          "backward blocks carry %s:%d, their backward() call" % (job, backward))
    others = sorted({s["frames"][0]["name"] for s in d["segments"] if s["frames"] and ": cu" in s["frames"][0]["name"]})
    check(any(n.startswith("cuBLAS") for n in others), "memory PyTorch does not see is named: %s" % others)


def same(a_path, b_path):
    a, b = load(a_path), load(b_path)
    key = lambda d: sorted((x["address"], x["requested_size"]) for x in blocks(d))  # noqa: E731
    seg = lambda d: sorted((s["address"], s["total_size"]) for s in d["segments"])  # noqa: E731
    check(seg(a) == seg(b), "round trip: the same %d segments" % len(seg(a)))
    check(key(a) == key(b), "round trip: the same %d active blocks" % len(key(a)))


if sys.argv[1] == "viz":
    viz(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
else:
    same(sys.argv[2], sys.argv[3])
sys.exit(1 if fails else 0)
