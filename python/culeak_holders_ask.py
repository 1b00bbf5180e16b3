"""Run by culeak's shim on the main thread of a Python job, at the interpreter's next safe
point (a pending call, with the GIL held), in a namespace of its own where SHIM is the
shim's path: when walks at marks are on (culeak record --holders, the console's `set
holders on`) after a mark, and when the console asks `holders SITE`. It takes each request
the shim keeps (culeak_holders_request), finds who holds the blocks asked about
(culeak_holders.py, beside this file) and sends the answers as HOLDER records, then one
with address 0 whose words say which walk ended ("mark", "ask", or "ask: why none came").
Every error is caught: the job never sees one."""
import ctypes
import os
import sys


def _holders():
    """culeak_holders, imported once: from the job's path, else from beside this file
    (a job culeak attached to has no culeak directory on its path)."""
    mod = sys.modules.get("culeak_holders")
    if mod is None:
        import importlib.util

        here = os.path.dirname(os.path.realpath(SHIM))  # noqa: F821 (given by the shim)
        for d in (os.path.join(here, "..", "python"), os.path.join(here, "..", "..", "share", "culeak", "python"),
                  os.path.join(here, "..", "share", "culeak", "python")):
            path = os.path.join(d, "culeak_holders.py")
            if os.path.exists(path):
                spec = importlib.util.spec_from_file_location("culeak_holders", path)
                mod = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(mod)
                sys.modules["culeak_holders"] = mod
                break
    return mod


def _answer():
    lib = ctypes.CDLL(SHIM, mode=os.RTLD_NOLOAD | os.RTLD_LOCAL)  # noqa: F821
    take = lib.culeak_holders_request
    take.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
    take.restype = ctypes.c_size_t
    report = lib.culeak_report_holder
    report.argtypes = [ctypes.c_uint64, ctypes.c_char_p]
    report.restype = None
    buf = (ctypes.c_uint64 * 129)()
    while True:
        n = take(buf, len(buf))
        if n == 0:
            return
        kind = "mark" if buf[0] == 1 else "ask"
        try:
            mod = _holders()
            ranges = [(buf[i], buf[i + 1]) for i in range(1, n - 1, 2)] if kind == "ask" and n > 1 else None
            for ptr, words in mod.find_holders(ranges):
                report(ptr, mod.grouped(words).encode("utf-8", "replace"))
            report(0, kind.encode())
        except Exception as e:  # never the job's problem
            report(0, ("%s: %s: %s" % (kind, type(e).__name__, e)).encode("utf-8", "replace"))


try:
    _answer()
except Exception as e:  # never the job's problem
    sys.stderr.write("culeak: who holds the blocks not found: %s\n" % e)
