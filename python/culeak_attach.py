"""Run by culeak's shim on the main thread of a Python process it attached to (culeak
attach PID), with the GIL held, in a namespace of its own where SHIM is the shim's path.
It gives the job what sitecustomize.py gives a launched one, as far as torch is imported:
the caching allocator's trace tracker attached now (each tensor from now on is a block at
its Python line), the blocks and segments the allocator holds now sent as before-attach
ones (its memory_snapshot: so the pool's allocated and reserved totals are right from the
start), and backward() wrapped so that autograd's threads are charged to its line. Every
error is caught and said in a NOTE: the job never sees one."""
import ctypes
import functools
import os
import sys


def _wrap_backward(autograd, enter, leave):
    def wrap(fn):
        @functools.wraps(fn)
        def culeak_backward(*args, **kwargs):
            enter()
            try:
                return fn(*args, **kwargs)
            finally:
                leave()

        return culeak_backward

    if getattr(autograd.backward, "__name__", "") != "culeak_backward":
        autograd.backward = wrap(autograd.backward)
        autograd.grad = wrap(autograd.grad)


def _send_snapshot(torch, report):
    """The allocator's segments and the blocks in use in them, as before-attach ones."""
    blocks = segments = block_bytes = segment_bytes = 0
    for seg in torch.cuda.memory_snapshot():
        device = int(seg.get("device", -1))
        if not seg.get("is_expandable"):  # an expandable one is mapped memory, its pages found apart
            report(0, int(seg["address"]), int(seg["total_size"]), device)
            segments += 1
            segment_bytes += int(seg["total_size"])
        addr = int(seg["address"])
        for b in seg.get("blocks", ()):
            if b.get("state") in ("active_allocated", "active_pending_free"):
                report(1, int(b.get("address", addr)), int(b["size"]), device)
                blocks += 1
                block_bytes += int(b["size"])
            addr += int(b["size"])
    return blocks, block_bytes, segments, segment_bytes


def _attach(shim, note):
    torch = sys.modules.get("torch")
    if torch is None:
        return  # tensors come later, if at all: the next segment attaches the tracker
    what = []
    try:
        enter, leave = shim.culeak_backward_enter, shim.culeak_backward_leave
        enter.argtypes = leave.argtypes = []
        enter.restype = leave.restype = None
        _wrap_backward(torch.autograd, enter, leave)
        what.append("backward() charged to its line")
    except Exception as e:
        note("attached: backward memory not charged to its backward() line: %s" % e)
    if os.environ.get("CULEAK_NO_TENSORS", "0") not in ("", "0"):
        return
    shim.culeak_torch_attach_now.restype = ctypes.c_int
    if shim.culeak_torch_attach_now() != 0:
        return  # the shim's NOTE says why
    report = shim.culeak_report_before_attach
    report.argtypes = [ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int]
    report.restype = None
    try:
        blocks, block_bytes, segments, segment_bytes = _send_snapshot(torch, report)
        what.append("%d tensor%s (%d bytes) in %d segment%s (%d bytes) held before attach, from the "
                    "caching allocator's snapshot" % (blocks, "" if blocks == 1 else "s", block_bytes, segments,
                                                      "" if segments == 1 else "s", segment_bytes))
    except Exception as e:
        note("attached: the caching allocator's snapshot could not be read: %s" % e)
    note("attached: PyTorch's caching allocator tracked from now on; " + "; ".join(what))


def _main(path):
    shim = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LOCAL)
    note = shim.culeak_attach_note
    note.argtypes = [ctypes.c_char_p]
    note.restype = None

    def say(text):
        note(str(text).encode("utf-8", "replace")[:500])

    try:
        _attach(shim, say)
    except BaseException as e:  # never the job's problem
        say("attached: culeak's Python side failed: %s: %s" % (type(e).__name__, e))


try:
    _main(SHIM)  # noqa: F821 (given by the shim)
except BaseException:
    pass
