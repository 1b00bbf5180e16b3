# A CuPy job that leaks nothing: arrays from the memory pool, a matmul (cuBLAS handle) and
# host<->device copies through pinned memory from the pinned-memory pool. Every array and
# pinned buffer is dropped; the pools and the handle keep their memory until exit:
# tests/gpu/run.sh (section clean) expects `culeak check` to exit 0.
import cupy
import cupyx
import numpy

total = 0.0
for step in range(5):
    a = cupy.random.random((512, 512), dtype=cupy.float32)
    b = a @ a
    host = cupyx.empty_pinned((512, 512), dtype=numpy.float32)
    b.get(out=host)
    total += float(host.sum())
    back = cupy.empty_like(a)
    back.set(host)
    total += float(back.sum())
    del a, b, host, back
cupy.cuda.Device().synchronize()
print("cupy_clean: done %.3f" % total)
