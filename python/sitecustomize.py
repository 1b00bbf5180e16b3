"""Put on PYTHONPATH by culeak, so that nothing has to be imported by the job: when the
job imports CuPy, a cupy.cuda.MemoryHook reports each block its memory pools hand out and
take back to the shim, as block events with the Python line that made them. CuPy calls a
hook only in the threads that entered it, so the hook is entered in the importing thread
and at the start of every threading.Thread started from then on (a block is often freed
in another thread than the one that made it). When the job imports torch,
torch.autograd.backward and torch.autograd.grad (Tensor.backward calls the first) tell
the shim when a backward pass starts and ends, so that what autograd's own threads (which
have no Python frames) allocate meanwhile is charged to the line that called backward().
At exit, who holds each tensor still alive is found and sent (culeak_holders.py).
Then the sitecustomize this one hides (the distribution's, a virtual environment's) runs
as usual. Without the culeak shim loaded nothing is installed."""
import ctypes
import functools
import importlib
import importlib.abc
import importlib.util
import os
import sys


_POOL_ID_CUPY = 2  # CULEAK_POOL_ID_CUPY (include/culeak.h): CuPy's row of the frameworks table


def _install_cupy_hook():
    import cupy.cuda.memory_hook as memory_hook

    pool_block = ctypes.CDLL(None).culeak_report_pool_block
    pool_block.argtypes = [ctypes.c_uint, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
    pool_block.restype = ctypes.c_int

    def report(alloc, ptr, size):
        pool_block(_POOL_ID_CUPY, alloc, ptr, size)

    class CuleakHook(memory_hook.MemoryHook):
        name = "culeak"

        def malloc_postprocess(self, device_id, size, mem_size, mem_ptr, pmem_id):
            report(1, mem_ptr, mem_size)

        def free_preprocess(self, device_id, mem_size, mem_ptr, pmem_id):
            report(0, mem_ptr, mem_size)

    CuleakHook().__enter__()  # hooks are per thread: the importing thread's
    _enter_in_new_threads(CuleakHook)


def _enter_in_new_threads(hook_class):
    """Each threading.Thread started from now on enters a hook of its own before it runs
    (Thread._bootstrap_inner, run() being what subclasses override)."""
    import threading

    bootstrap_inner = threading.Thread._bootstrap_inner

    def _bootstrap_inner(self):
        try:
            hook_class().__enter__()
        except Exception:  # never the job's problem
            pass
        bootstrap_inner(self)

    threading.Thread._bootstrap_inner = _bootstrap_inner


def _install_backward_hooks(autograd):
    shim = ctypes.CDLL(None)
    enter, leave = shim.culeak_backward_enter, shim.culeak_backward_leave
    enter.argtypes = leave.argtypes = []
    enter.restype = leave.restype = None

    def wrap(fn):
        @functools.wraps(fn)
        def culeak_backward(*args, **kwargs):
            enter()  # the shim keeps this thread's Python frames until leave()
            try:
                return fn(*args, **kwargs)
            finally:
                leave()

        return culeak_backward

    autograd.backward = wrap(autograd.backward)
    autograd.grad = wrap(autograd.grad)


def _report_holders():
    """At exit, before the interpreter tears its modules down: who holds each tensor still
    alive (python/culeak_holders.py), sent to the shim for the leak report. The item of a
    list is left out of the words, so that the blocks of one list make one answer."""
    try:
        import culeak_holders

        report = ctypes.CDLL(None).culeak_report_holder
        report.argtypes = [ctypes.c_uint64, ctypes.c_char_p]
        report.restype = None
        for ptr, words in culeak_holders.find_holders(None):
            report(ptr, culeak_holders.grouped(words).encode("utf-8", "replace"))
        report(0, b"exit")  # the walk at exit ended
    except Exception as e:  # never the job's problem
        sys.stderr.write("culeak: who holds the leaked tensors not found: %s\n" % e)


class _After(importlib.abc.MetaPathFinder):
    """Finds nothing itself; when the module `name` is found, wraps its loader so that
    install(module) runs once that module has run."""

    def __init__(self, name, install, what):
        self.name, self.install, self.what = name, install, what

    def find_spec(self, name, path, target=None):
        if name != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_hook(module):
            exec_module(module)
            try:
                sys.modules[name] = module
                self.install(module)
            except Exception as e:  # never the job's problem
                sys.stderr.write("culeak: %s: %s\n" % (self.what, e))

        spec.loader.exec_module = exec_then_hook
        return spec


def _shim_has(name):
    try:
        getattr(ctypes.CDLL(None), name)
        return True
    except (AttributeError, OSError):
        return False


if _shim_has("culeak_report_pool_block") and not os.environ.get("CULEAK_NO_POOL"):
    sys.meta_path.insert(0, _After("cupy.cuda.memory_hook", lambda m: _install_cupy_hook(),
                                   "cupy pool blocks not tracked"))
if _shim_has("culeak_report_holder") and os.environ.get("CULEAK_HOLDERS", "1") != "0":
    import atexit

    atexit.register(_report_holders)  # the first registered runs last: after the job's own
if _shim_has("culeak_backward_enter"):
    sys.meta_path.insert(0, _After("torch.autograd", _install_backward_hooks,
                                   "backward memory not charged to its backward() line"))


def _chain():
    """Runs the next sitecustomize on sys.path, the one this file hides."""
    here = os.path.dirname(os.path.abspath(__file__))
    mod = sys.modules.pop("sitecustomize", None)
    saved = sys.path[:]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    try:
        importlib.import_module("sitecustomize")
    except ImportError:
        pass
    finally:
        sys.path[:] = saved
        if mod is not None and "sitecustomize" not in sys.modules:
            sys.modules["sitecustomize"] = mod


_chain()
