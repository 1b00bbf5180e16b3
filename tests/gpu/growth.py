"""Growth between two marks, read from `culeak dump` JSON Lines of one process: the
allocations made after mark A and still live at mark B, by Python call site (the
innermost Python frame outside site-packages and the standard library), else by the
innermost native address. Used by the GPU checks of training jobs."""
import collections
import json

TAG = 1 << 63


def load(path):
    recs = [json.loads(line) for line in open(path)]
    pid = next((r["pid"] for r in recs if r["type"] == "hello"), None)
    env = next((r.get("env", {}) for r in recs if r["type"] == "hello"), {})
    py = {int(r["ip"], 16): r for r in recs if r["type"] == "pyframe"}
    return pid, env, py, recs


def user_frame(stack, py):
    for ip in stack:
        ip = int(ip, 16)
        if ip & TAG and ip in py:
            f = py[ip]
            if "site-packages" not in f["file"] and "/lib/python3" not in f["file"]:
                return "%s:%d" % (f["file"].rsplit("/", 1)[-1], f["line"])
    return stack[0] if stack else "?"


DEVICE_KINDS = ("device", "managed", "vmm-physical")


def growth(path, mark_a, mark_b, kinds=DEVICE_KINDS):
    """{site: [count, bytes]} of allocations of KINDS made after A still live at B (None if
    a mark is missing), plus the process id and its environment from HELLO. Device memory
    by default; ("block",) for the tensors of a framework's pool."""
    pid, env, py, recs = load(path)
    seq = {}
    for r in recs:
        if r["type"] == "mark" and r["label"] in (mark_a, mark_b):
            seq.setdefault(r["label"], r["seq"])
    if mark_a not in seq or mark_b not in seq:
        return pid, env, None
    live = {}
    for r in recs:
        if r["type"] not in ("alloc", "free") or r["result"] != 0:
            continue
        if r["seq"] >= seq[mark_b]:
            break
        key = (r["kind"], r["addr"])
        if r["type"] == "alloc" and r["seq"] > seq[mark_a]:
            live[key] = r
        elif r["type"] == "free":
            live.pop(key, None)
    sites = collections.defaultdict(lambda: [0, 0])
    for r in live.values():
        if r["kind"] in kinds:
            s = sites[user_frame(r["stack"], py)]
            s[0] += 1
            s[1] += r["size"]
    return pid, env, dict(sites)
