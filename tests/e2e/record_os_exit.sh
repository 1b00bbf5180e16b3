#!/usr/bin/env bash
# A Python job that allocates and leaves with os._exit (no destructors, as multiprocessing
# workers do): culeak record keeps its allocation and its exit status.
set -u
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || fail "python3 missing"
cat >"$T/job.py" <<'PY'
import ctypes, os
c = ctypes.CDLL("libcuda.so.1")
dev, ctx, d = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
for r in (c.cuInit(0), c.cuDeviceGet(ctypes.byref(dev), 0), c.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev),
          c.cuCtxSetCurrent(ctx), c.cuMemAlloc_v2(ctypes.byref(d), 4096)):
    assert r == 0
os._exit(5)
PY
LD_LIBRARY_PATH=$B/fakecuda "$B/culeak" record -o "$T/job.culeak" -- python3 "$T/job.py" >"$T/out" 2>&1
rc=$?
[ "$rc" -eq 5 ] || fail "record exited $rc, not the job's 5: $(cat "$T/out")"
n=$("$B/culeak" dump "$T/job.culeak" | grep -c '"type":"alloc"')
[ "$n" -eq 1 ] || fail "$n of 1 allocation recorded: $(cat "$T/out")"
echo "record_os_exit: ok"
