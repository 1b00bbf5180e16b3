# The fields of PyTorch's memory snapshot that its readers use, pinned (PyTorch 2.11's
# torch/cuda/_memory_viz.py: segsum, trace, segments, memory, trace_plot's
# filter_alloc_free_pairs; torch/csrc/cuda/memory_snapshot.cpp's keys), checked on a
# pickle: exits 1 with what is wrong. Prints "segments N blocks M active A entries E" and
# the entries per action. Runs with any Python 3, without torch: Debian's python3-torch
# (1.13) reads an older format (a list of segments) and cannot read 2.x snapshots at all.
#   torch_snapshot_check.py FILE [--site FILE:LINE] [--no-site FILE:LINE]
# --site: some active block's frames name FILE:LINE (a path suffix); --no-site: none does.
import collections
import pickle
import sys

ACTIONS = {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free",
           "segment_map", "segment_unmap", "oom", "snapshot"}
STATES = {"active_allocated", "active_pending_free", "inactive"}
errors = []


def need(cond, what):
    if not cond:
        errors.append(what)
    return cond


def frames_ok(fr, where):
    if not need(isinstance(fr, list), "%s: frames is not a list" % where):
        return
    for f in fr:
        need(isinstance(f, dict) and isinstance(f.get("name"), str) and isinstance(f.get("filename"), str)
             and isinstance(f.get("line"), int), "%s: a frame without name, filename and line: %r" % (where, f))


def check(d):
    need(isinstance(d, dict), "the snapshot is not a dict")
    segs, traces = d.get("segments"), d.get("device_traces")
    need(isinstance(segs, list), "no segments list")
    need(isinstance(traces, list) and all(isinstance(t, list) for t in traces), "device_traces is not a list of lists")
    nblocks = active = 0
    for i, s in enumerate(segs or []):
        w = "segment %d" % i
        for k, t in (("device", int), ("address", int), ("total_size", int), ("allocated_size", int),
                     ("active_size", int), ("requested_size", int), ("stream", int), ("is_expandable", bool),
                     ("blocks", list), ("segment_type", str)):
            need(isinstance(s.get(k), t), "%s: %s is not %s" % (w, k, t.__name__))
        need(s.get("segment_type") in ("large", "small"), "%s: segment_type %r" % (w, s.get("segment_type")))
        need(isinstance(s.get("segment_pool_id"), tuple) and len(s["segment_pool_id"]) == 2, "%s: segment_pool_id" % w)
        frames_ok(s.get("frames"), w)
        at, alloc = s.get("address"), 0
        for b in s.get("blocks") or []:
            nblocks += 1
            need(b.get("address") == at, "%s: the blocks do not tile it (block at %r, expected %r)" % (w, b.get("address"), at))
            need(b.get("state") in STATES, "%s: block state %r" % (w, b.get("state")))
            need(isinstance(b.get("size"), int) and isinstance(b.get("requested_size"), int), "%s: block sizes" % w)
            need(b.get("requested_size", 0) <= b.get("size", 0), "%s: requested_size over size" % w)
            frames_ok(b.get("frames"), w + " block")
            if b.get("state") == "active_allocated":
                active += 1
                alloc += b["size"]
            at = (at or 0) + (b.get("size") or 0)
        need(at == s.get("address", 0) + s.get("total_size", 0), "%s: its blocks add up to %r of %r bytes" % (w, at - s.get("address", 0), s.get("total_size")))
        need(alloc == s.get("allocated_size"), "%s: allocated_size %r, its active blocks %r" % (w, s.get("allocated_size"), alloc))
    counts = collections.Counter()
    for dev, t in enumerate(traces or []):
        requested, last = set(), 0
        for i, e in enumerate(t):
            w = "device %d entry %d" % (dev, i)
            a = e.get("action")
            counts[a] += 1
            need(a in ACTIONS, "%s: action %r" % (w, a))
            need(isinstance(e.get("device_free" if a == "oom" else "addr"), int), "%s: no %s" % (w, "device_free" if a == "oom" else "addr"))
            need(isinstance(e.get("size"), int) and isinstance(e.get("stream"), int), "%s: size, stream" % w)
            need(isinstance(e.get("time_us"), int) and e["time_us"] >= last, "%s: time_us %r before %r" % (w, e.get("time_us"), last))
            last = e.get("time_us") or last
            frames_ok(e.get("frames"), w)
            if a == "free_requested":
                requested.add(e["addr"])
            if a == "free_completed":  # filter_alloc_free_pairs warns otherwise
                need(e.get("addr") in requested, "%s: free_completed without free_requested" % w)
                requested.discard(e.get("addr"))
    return nblocks, active, counts


def names(d, site):
    f, _, line = site.rpartition(":")
    return any(fr["filename"].endswith(f) and fr["line"] == int(line)
               for s in d["segments"] for b in s["blocks"] if b["state"] == "active_allocated" for fr in b["frames"])


def main():
    d = pickle.load(open(sys.argv[1], "rb"))
    nblocks, active, counts = check(d)
    args = sys.argv[2:]
    for opt, site in zip(args[::2], args[1::2]):
        if opt == "--site":
            need(names(d, site), "no active block's frames name %s" % site)
        elif opt == "--no-site":
            need(not names(d, site), "an active block's frames name %s" % site)
    print("segments %d blocks %d active %d entries %d" % (len(d["segments"]), nblocks, active, sum(counts.values())))
    print(" ".join("%s=%d" % kv for kv in sorted(counts.items())))
    for e in errors[:20]:
        print("SCHEMA:", e)
    sys.exit(1 if errors else 0)


main()
