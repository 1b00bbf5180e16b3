"""CuPy with its memory pool off: every array is a cuMemAlloc of its own."""
import sys

import cupy

cupy.cuda.set_allocator(None)
keep = []
for i in range(5):
    a = cupy.arange((i + 1) * 100000, dtype=cupy.float32)
    keep.append(a)
    print("LEDGER tensor", a.data.mem.size, hex(a.data.ptr), file=sys.stderr, flush=True)
print("cupy: done", float(sum(float(a.sum()) for a in keep)))
