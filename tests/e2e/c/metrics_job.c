/* A job for the Prometheus test (tests/e2e/prometheus.sh): iterations that each keep
 * 16 KiB (the leak), allocate and free 1 MiB (churn), and mark "iteration N". After every
 * STEP iterations it creates DIR/held.K (K = 1, 2, ...) and waits for DIR/go.K, so the
 * test reads the scrape and the recording at one moment; after ROUNDS rounds it exits 0.
 *   metrics_job DIR STEP ROUNDS */
#include "culeak.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef int (*fn)();

static void touch(const char *dir, const char *name, int k)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%d", dir, name, k);
    close(open(path, O_WRONLY | O_CREAT, 0644));
}

static void wait_for(const char *dir, const char *name, int k)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%d", dir, name, k);
    while (access(path, F_OK) != 0)
        usleep(20000);
}

int main(int argc, char **argv)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
    fn init = (fn)dlsym(cuda, "cuInit"), get = (fn)dlsym(cuda, "cuDeviceGet"),
       retain = (fn)dlsym(cuda, "cuDevicePrimaryCtxRetain"), current = (fn)dlsym(cuda, "cuCtxSetCurrent"),
       alloc = (fn)dlsym(cuda, "cuMemAlloc_v2"), release = (fn)dlsym(cuda, "cuMemFree_v2");
    int dev, step = argc > 2 ? atoi(argv[2]) : 0, rounds = argc > 3 ? atoi(argv[3]) : 0;
    void *ctx;
    if (argc < 4 || step < 1 || rounds < 1 || init(0) || get(&dev, 0) || retain(&ctx, dev) || current(ctx))
        return 1;
    int it = 0;
    for (int k = 1; k <= rounds; k++) {
        for (int i = 0; i < step; i++, it++) {
            unsigned long long kept, churn;
            if (alloc(&kept, (size_t)16384) || alloc(&churn, (size_t)1 << 20) || release(churn))
                return 1;
            char label[32];
            snprintf(label, sizeof label, "iteration %d", it);
            culeak_mark(label);
            usleep(10000);
        }
        touch(argv[1], "held", k);
        wait_for(argv[1], "go", k);
    }
    printf("metrics_job: %d iterations ok\n", it);
    return 0;
}
