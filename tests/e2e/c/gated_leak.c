/* A job for the console tests: one allocation freed at once (it connects), then it waits
 * for the file argv[1] (the test sets its breakpoints meanwhile) and leaks 10 blocks of
 * 1 MiB at the marked line. Copied to the test's own job.c, the name they break on. */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

typedef int (*fn)();
int main(int argc, char **argv)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
    fn init = (fn)dlsym(cuda, "cuInit"), get = (fn)dlsym(cuda, "cuDeviceGet"),
       retain = (fn)dlsym(cuda, "cuDevicePrimaryCtxRetain"), current = (fn)dlsym(cuda, "cuCtxSetCurrent"),
       alloc = (fn)dlsym(cuda, "cuMemAlloc_v2"), release = (fn)dlsym(cuda, "cuMemFree_v2");
    int dev;
    void *ctx;
    unsigned long long d;
    if (argc < 2 || init(0) || get(&dev, 0) || retain(&ctx, dev) || current(ctx) || alloc(&d, (size_t)4096) ||
        release(d))
        return 1;
    while (access(argv[1], F_OK) != 0)
        usleep(20000);
    for (int i = 0; i < 10; i++)
        if (alloc(&d, (size_t)1 << 20)) /* LEAK */
            return 1;
    puts("job: 10 blocks leaked");
    return 0;
}
