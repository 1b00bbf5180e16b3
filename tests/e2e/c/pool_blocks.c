/* Blocks reported by pool id (culeak_pool_block) and by the first name, CuPy's only
 * (culeak_report_block, looked up as old callers do); pools without blocks refused. */
#include <culeak.h>
#include <dlfcn.h>
#include <stdio.h>

static char arena[1 << 16];

int main(void)
{
    if (culeak_pool_block(CULEAK_POOL_ID_CUPY, 1, arena, 512) != 0 ||     /* POOL-BLOCK-CUPY */
        culeak_pool_block(CULEAK_POOL_ID_PYTORCH, 1, arena + 1024, 256) != 0 ||
        culeak_pool_block(CULEAK_POOL_ID_PYTORCH, 0, arena + 1024, 256) != 0) {
        fputs("culeak_pool_block refused a pool with blocks\n", stderr);
        return 1;
    }
    if (culeak_active() && (culeak_pool_block(3, 1, arena, 1) != -1 || culeak_pool_block(99, 1, arena, 1) != -1)) {
        fputs("culeak_pool_block took a pool without blocks\n", stderr);
        return 1;
    }
    void (*old)(int, const void *, size_t) =
        (void (*)(int, const void *, size_t))dlsym(RTLD_DEFAULT, "culeak_report_block");
    if (old) {
        old(1, arena + 4096, 128); /* POOL-BLOCK-OLD */
        old(0, arena + 4096, 128);
    }
    culeak_mark("after");
    return 0;
}
