"""culeak from Python: timeline marks, and the framework pools turned off.

Under culeak (``culeak record``, ``culeak check``, the console), the shim is preloaded and
``mark`` records a mark on the job's timeline, like ``culeak_mark_label`` in C; without
the shim every function here does nothing. The launcher puts this file on PYTHONPATH.
In a job culeak attaches to later (``culeak attach PID``), ``mark`` finds the shim once
it is loaded (it looks at most once a second until then).

    import culeak
    for i in range(steps):
        culeak.mark(f"iteration {i}")
        train_step()
"""
import ctypes
import os
import time

__all__ = ["mark", "active", "no_pool"]

try:
    _mark_label = ctypes.CDLL(None).culeak_mark_label
    _mark_label.argtypes = [ctypes.c_char_p]
    _mark_label.restype = None
except (AttributeError, OSError):
    _mark_label = None


_looked_at = 0.0


def _attached():
    """culeak_mark_label of a shim culeak attach loaded into this process (privately, so
    not found by name in the process's global scope), or None."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split(None, 5)[5].strip() for line in maps if line.rstrip().endswith("/libculeak.so")}
        for path in paths:
            found = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LOCAL).culeak_mark_label
            found.argtypes = [ctypes.c_char_p]
            found.restype = None
            return found
    except (AttributeError, OSError, IndexError):
        pass
    return None


def _find():
    global _mark_label, _looked_at
    if _mark_label is None and time.monotonic() - _looked_at >= 1.0:
        _looked_at = time.monotonic()
        _mark_label = _attached()
    return _mark_label


def active():
    """True when the culeak shim is loaded in this process."""
    return _find() is not None


def mark(label):
    """Records a mark with this label (str or bytes); snapshots can be taken at marks."""
    if _find() is None:
        return
    if not isinstance(label, bytes):
        label = str(label).encode("utf-8", "replace")
    _mark_label(label)


def no_pool():
    """Under ``--no-pool`` (CULEAK_NO_POOL=1), turns CuPy's memory pools off, so every
    array is its own allocation (CuPy reads no environment variable for this). PyTorch
    and JAX need nothing: the launcher set their variables. Returns True when it did."""
    if os.environ.get("CULEAK_NO_POOL") != "1":
        return False
    try:
        import cupy
    except ImportError:
        return False
    cupy.cuda.set_allocator(None)
    cupy.cuda.set_pinned_memory_allocator(None)
    return True
