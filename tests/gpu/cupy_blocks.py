# CuPy with its memory pool on: one array kept per step (the KEEP line), made in a thread
# started after cupy was imported; one array dropped, in the main thread.
from concurrent.futures import ThreadPoolExecutor

import cupy

import culeak

kept = []
with ThreadPoolExecutor(1) as worker:
    for i in range(12):
        culeak.mark("iteration %d" % i)
        kept.append(worker.submit(lambda: cupy.zeros(1024, dtype=cupy.float32)).result())  # KEEP
        scratch = cupy.ones(1 << 16, dtype=cupy.float32)
        del scratch
cupy.cuda.Device().synchronize()
print("cupy_blocks: %d arrays kept" % len(kept))
