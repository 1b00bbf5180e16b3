# CuPy's pool, with nothing imported from culeak: each step keeps one array (KEEP) and drops
# one. The pool is the stand-in on tests/e2e/python/site-packages; culeak's
# sitecustomize hooks it when cupy.cuda.memory_hook is imported.
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site-packages"))
import cupy  # noqa: E402

mark = ctypes.CDLL(None).culeak_mark_label
kept = []
for i in range(8):
    mark(b"iteration %d" % i)
    kept.append(cupy.zeros(4096))  # SITE-KEEP
    scratch = cupy.zeros(65536)
    del scratch
print("cupy_pool: %d arrays kept" % len(kept))
