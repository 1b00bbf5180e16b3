# CuPy with its memory pool on: one array kept per step (the KEEP line), one dropped.
import cupy

import culeak

kept = []
for i in range(12):
    culeak.mark("iteration %d" % i)
    kept.append(cupy.zeros(1024, dtype=cupy.float32))  # KEEP
    scratch = cupy.ones(1 << 16, dtype=cupy.float32)
    del scratch
cupy.cuda.Device().synchronize()
print("cupy_blocks: %d arrays kept" % len(kept))
