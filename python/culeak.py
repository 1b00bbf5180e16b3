"""culeak from Python: timeline marks, and the framework pools turned off.

Under culeak (``culeak record``, ``culeak check``, the console), the shim is preloaded and
``mark`` records a mark on the job's timeline, like ``culeak_mark_label`` in C; without
the shim every function here does nothing. The launcher puts this file on PYTHONPATH.

    import culeak
    for i in range(steps):
        culeak.mark(f"iteration {i}")
        train_step()
"""
import ctypes
import os

__all__ = ["mark", "active", "no_pool"]

try:
    _mark_label = ctypes.CDLL(None).culeak_mark_label
    _mark_label.argtypes = [ctypes.c_char_p]
    _mark_label.restype = None
except (AttributeError, OSError):
    _mark_label = None


def active():
    """True when the culeak shim is loaded in this process."""
    return _mark_label is not None


def mark(label):
    """Records a mark with this label (str or bytes); snapshots can be taken at marks."""
    if _mark_label is None:
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
