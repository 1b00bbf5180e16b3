/* A job for the console's ring tests (tests/e2e/console_ring.sh). Each mode first makes
 * one allocation freed at once (the process shows up on the console), then:
 *   burst GATE DONE N  waits for the file GATE, makes N allocations each freed at once,
 *                      creates the file DONE and exits 0
 *   closefrom          closes every descriptor from 3 up (closefrom(3), as daemons do),
 *                      then leaks 100 blocks of 4 KiB and exits 0
 *   wait GATE          waits for the file GATE and exits 0 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

typedef int (*fn)();
static fn alloc, release;

static void wait_for(const char *path)
{
    while (access(path, F_OK) != 0)
        usleep(20000);
}

int main(int argc, char **argv)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
    fn init = (fn)dlsym(cuda, "cuInit"), get = (fn)dlsym(cuda, "cuDeviceGet"),
       retain = (fn)dlsym(cuda, "cuDevicePrimaryCtxRetain"), current = (fn)dlsym(cuda, "cuCtxSetCurrent");
    alloc = (fn)dlsym(cuda, "cuMemAlloc_v2");
    release = (fn)dlsym(cuda, "cuMemFree_v2");
    int dev;
    void *ctx;
    unsigned long long d;
    if (argc < 2 || init(0) || get(&dev, 0) || retain(&ctx, dev) || current(ctx) || alloc(&d, (size_t)4096) ||
        release(d))
        return 1;
    if (!strcmp(argv[1], "burst") && argc == 5) {
        wait_for(argv[2]);
        for (long i = 0, n = atol(argv[4]); i < n; i++)
            if (alloc(&d, (size_t)256) || release(d))
                return 1;
        int fd = open(argv[3], O_WRONLY | O_CREAT, 0600);
        return fd < 0 || close(fd) != 0;
    }
    if (!strcmp(argv[1], "closefrom")) {
        struct rlimit rl;
        long top = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (long)rl.rlim_cur : 65536;
        for (long fd = 3; fd < top; fd++)
            close((int)fd);
        for (int i = 0; i < 100; i++)
            if (alloc(&d, (size_t)4096))
                return 1;
        puts("job: 100 blocks leaked");
        return 0;
    }
    if (!strcmp(argv[1], "wait") && argc == 3) {
        wait_for(argv[2]);
        return 0;
    }
    return 2;
}
