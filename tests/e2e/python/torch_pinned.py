# A job on the stand-in torch (tests/fakecuda/torch) that leaks nothing: its device tensors
# are freed, and each step reads a scalar back through the pinned-host caching allocator,
# as x.item() and float(x.sum()) do. "keep" also keeps pinned tensors in a list (the
# allocator's memory, held at the user's line); "leak" pins memory with cudaHostAlloc
# itself and never frees it (a leak: no allocator holds it).
# Line numbers matter: tests/e2e/cached_pinned.sh looks for the lines marked SITE-*.
import ctypes
import os
import sys

torch_cuda = ctypes.CDLL(os.environ["FAKE_TORCH_CUDA"])
torch_cuda.fake_torch_pin.restype = ctypes.c_void_p
torch_cuda.fake_torch_pin.argtypes = [ctypes.c_size_t]
c10 = ctypes.CDLL(os.environ["FAKE_C10"])
c10.fake_c10_malloc.restype = ctypes.c_void_p
c10.fake_c10_malloc.argtypes = [ctypes.c_size_t]
c10.fake_c10_free.argtypes = [ctypes.c_void_p]
cudart = ctypes.CDLL("libcudart.so.13")

cudart.cudaFree(None)  # the context, as torch makes it first
c10.fake_c10_init(1)
for step in range(3):
    x = c10.fake_c10_malloc(4096)
    assert torch_cuda.fake_torch_item() == 0  # SITE-ITEM
    c10.fake_c10_free(x)
kept = []
if "keep" in sys.argv[1:]:
    for step in range(4):
        kept.append(torch_cuda.fake_torch_pin(1 << 20))  # SITE-KEEP
if "leak" in sys.argv[1:]:
    p = ctypes.c_void_p()
    assert cudart.cudaHostAlloc(ctypes.byref(p), ctypes.c_size_t(8192), 0) == 0  # SITE-LEAK
print("torch_pinned: %d pinned tensors kept" % len(kept))
