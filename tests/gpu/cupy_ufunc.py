# A CuPy job that leaks nothing, its arrays made through NumPy's ufunc override (a NumPy
# scalar times a CuPy array, a NumPy ufunc on CuPy arrays). tests/gpu/run.sh checks that
# `culeak check` exits 0 and that the memory CuPy's pool holds at exit is at this file's
# lines, never at NumPy's frames (PyUFunc_CheckOverride in _multiarray_umath).
import cupy as cp
import numpy as np

for i in range(10):
    a = cp.ones(1 << 20, dtype=cp.float32)
    b = np.float32(2.0) * a  # through NumPy's ufunc override
    c = np.add(a, b)  # a NumPy ufunc on CuPy arrays (__array_ufunc__)
    float(c.sum())
del a, b, c
cp.cuda.Device().synchronize()
print("cupy_ufunc: done")
