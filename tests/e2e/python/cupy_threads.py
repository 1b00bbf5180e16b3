# CuPy's pool from two threads, with nothing imported from culeak: a worker thread makes
# and drops an array of its own, and drops the array the main thread made. The pool is
# the stand-in on tests/e2e/python/site-packages.
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site-packages"))
import cupy  # noqa: E402

box = [cupy.zeros(8192)]  # made here, dropped in the worker


def worker():
    a = cupy.zeros(12288)  # THREAD-ALLOC
    del a
    box.pop()


t = threading.Thread(target=worker)
t.start()
t.join()
print("cupy_threads: done")
