#!/usr/bin/env bash
# The shim's libunwind stays out of the job: libculeak.so names no library but the C
# library's, and loads libunwind privately (RTLD_LOCAL), so the job's global scope does
# not gain libunwind's symbols (a job, or a library it loads later, that looks for
# unw_backtrace finds its own or none); the stacks still come from that libunwind, in a
# job built with ASan too.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$ROOT"

needs=$(readelf -dW "$BUILD/libculeak.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
    grep -Ev '^(libc\.so\.6|ld-linux-x86-64\.so\.2|libdl\.so\.2|libpthread\.so\.0|libasan\.so\.[0-9]+|libubsan\.so\.[0-9]+|libstdc\+\+\.so\.6|libm\.so\.6|libgcc_s\.so\.1)$' || true)
[ -z "$needs" ] || fail "libculeak.so links $needs"

cat >"$T/job.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stddef.h>
int cuInit(unsigned flags);
int cuDeviceGet(int *dev, int ordinal);
int cuDevicePrimaryCtxRetain(void **ctx, int dev);
int cuCtxSetCurrent(void *ctx);
int cuMemAlloc_v2(unsigned long long *p, size_t size);
int main(void)
{
    int dev;
    void *ctx;
    unsigned long long p;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx))
        return 1;
    if (cuMemAlloc_v2(&p, 4321)) /* THE-LEAK */
        return 1;
    printf("unw_backtrace %s, _ULx86_64_step %s\n", dlsym(RTLD_DEFAULT, "unw_backtrace") ? "visible" : "absent",
           dlsym(RTLD_DEFAULT, "_ULx86_64_step") ? "visible" : "absent");
    return 0;
}
C
cc -g -o "$T/job" "$T/job.c" -L"$BUILD/fakecuda" -lcuda -ldl
line=$(grep -n 'THE-LEAK' "$T/job.c" | cut -d: -f1)
export LD_LIBRARY_PATH=$BUILD/fakecuda
preload_asan
want=$("$T/job")
[ "$want" = "unw_backtrace absent, _ULx86_64_step absent" ] || fail "the job alone: $want"
"$BUILD/culeak" check -- "$T/job" >"$T/out" 2>"$T/err" && rc=0 || rc=$?
[ "$rc" = 1 ] || { cat "$T/err"; fail "culeak check exited $rc, expected 1 (a leak)"; }
[ "$(cat "$T/out")" = "$want" ] || fail "under culeak the job sees libunwind: $(cat "$T/out")"
grep -q "^LEAKED .*(4321 bytes) in 1 allocation .*job\.c:$line$" "$T/err" || { cat "$T/err"; fail "no stack to job.c:$line"; }

# A job built with ASan: its runtime's dlopen refuses RTLD_DEEPBIND (and ends the process),
# so there the shim loads libunwind without it.
cc -g -fsanitize=address -o "$T/asan_job" "$T/job.c" -L"$BUILD/fakecuda" -lcuda -ldl
ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 "$BUILD/culeak" check -- "$T/asan_job" >"$T/out" 2>"$T/err" &&
    rc=0 || rc=$?
[ "$rc" = 1 ] || { cat "$T/err"; fail "culeak check of an ASan job exited $rc, expected 1 (a leak)"; }
grep -q "^LEAKED .*(4321 bytes) in 1 allocation .*job\.c:$line$" "$T/err" || { cat "$T/err"; fail "ASan job: no stack to job.c:$line"; }
echo "unwind_private: ok"
