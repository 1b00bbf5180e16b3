/* A job for the HTML page's checks: a program with its own pool (culeak_alloc, kind user)
 * that leaks 600 blocks of 100 bytes (60000 bytes), and device memory that leaks 100 KiB
 * at every one of 600 iterations (60000 KiB), each marked: a fast run, a few ticks of the
 * coarse clock long. */
#include "driver_calls.h"

#include <culeak.h>
#include <dlfcn.h>
#include <stdio.h>

static char arena[1 << 16];

int main(void)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
    if (!cuda)
        return 1;
    driver_fn alloc = driver_start(cuda);
    unsigned long long d;
    if (!alloc)
        return 1;
    for (int i = 0; i < 600; i++) {
        char label[32];
        if (alloc(&d, (size_t)100 << 10)) /* DEVICE-LEAK */
            return 1;
        culeak_alloc(arena + i * 100, 100); /* POOL-LEAK */
        snprintf(label, sizeof label, "iteration %d", i);
        culeak_mark(label);
    }
    return 0;
}
