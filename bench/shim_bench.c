/* shim_bench: the shim's cost per cuMemAlloc_v2 + cuMemFree_v2 pair on the fake driver,
 * at stack depths 8, 32 and 64, recording to a file, against the same run without the
 * shim; and the recording's bytes per event. Prints figures, judges nothing.
 *
 *   shim_bench LIBCULEAK FAKE_LIBCUDA            run every configuration (make bench)
 *   shim_bench run FAKE_LIBCUDA DEPTH PAIRS      one measurement (the child of the above)
 *
 * The child reaches the driver the way nvcc's static cudart does: dlopen, one dlsym of
 * cuGetProcAddress_v2, then the entry points from cuGetProcAddress. */
#include "culeak_cuda.h"
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PAIRS 200000
#define WARMUP 2000

typedef CUresult (*gpa_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
static CUresult (*mem_alloc)(CUdeviceptr *, size_t);
static CUresult (*mem_free)(CUdeviceptr);

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int pairs(long n)
{
    for (long i = 0; i < n; i++) {
        CUdeviceptr p;
        if (mem_alloc(&p, 256) != CUDA_SUCCESS || mem_free(p) != CUDA_SUCCESS)
            return -1;
    }
    return 0;
}

/* Recurses to `depth` frames (noinline, work after the call: no tail call), then times. */
static volatile int sink;
__attribute__((noinline)) static double at_depth(int depth, long n)
{
    if (depth > 1) {
        double r = at_depth(depth - 1, n);
        sink++;
        return r;
    }
    if (pairs(WARMUP) < 0)
        return -1;
    double t0 = now_ns();
    if (pairs(n) < 0)
        return -1;
    return (now_ns() - t0) / (double)n;
}

static int child(const char *libcuda, int depth, long n)
{
    void *h = dlopen(libcuda, RTLD_NOW | RTLD_LOCAL);
    gpa_t gpa = h ? (gpa_t)dlsym(h, "cuGetProcAddress_v2") : NULL;
    CUresult (*init)(unsigned) = NULL;
    CUresult (*dev_get)(CUdevice *, int) = NULL;
    CUresult (*retain)(CUcontext *, CUdevice) = NULL;
    CUresult (*set_current)(CUcontext) = NULL;
    if (!gpa || gpa("cuGetProcAddress", (void **)&gpa, 12000, 0, NULL) ||
        gpa("cuInit", (void **)&init, 2000, 0, NULL) || gpa("cuDeviceGet", (void **)&dev_get, 2000, 0, NULL) ||
        gpa("cuDevicePrimaryCtxRetain", (void **)&retain, 7000, 0, NULL) ||
        gpa("cuCtxSetCurrent", (void **)&set_current, 4000, 0, NULL) ||
        gpa("cuMemAlloc", (void **)&mem_alloc, 3020, 0, NULL) || gpa("cuMemFree", (void **)&mem_free, 3020, 0, NULL)) {
        fprintf(stderr, "shim_bench: cannot load the driver %s\n", libcuda);
        return 1;
    }
    CUdevice dev;
    CUcontext ctx;
    if (init(0) || dev_get(&dev, 0) || retain(&ctx, dev) || set_current(ctx)) {
        fprintf(stderr, "shim_bench: no context\n");
        return 1;
    }
    double ns = at_depth(depth, n);
    if (ns < 0) {
        fprintf(stderr, "shim_bench: allocation failed\n");
        return 1;
    }
    printf("%.1f\n", ns);
    return 0;
}

/* One child run; returns ns per pair, or -1. */
static double measure(const char *self, const char *env, const char *libcuda, int depth)
{
    char cmd[32768];
    snprintf(cmd, sizeof cmd, "env %s '%s' run '%s' %d %d", env, self, libcuda, depth, PAIRS);
    FILE *f = popen(cmd, "r");
    double ns = -1;
    if (!f || fscanf(f, "%lf", &ns) != 1)
        ns = -1;
    if (f)
        pclose(f);
    return ns;
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "run"))
        return child(argv[2], atoi(argv[3]), atol(argv[4]));
    if (argc != 3) {
        fprintf(stderr, "usage: %s LIBCULEAK FAKE_LIBCUDA\n", argv[0]);
        return 2;
    }
    char self[4096], shim[PATH_MAX], cuda[PATH_MAX], out[256];
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    self[k > 0 ? k : 0] = 0;
    if (!realpath(argv[1], shim) || !realpath(argv[2], cuda)) {
        perror("shim_bench");
        return 2;
    }
    snprintf(out, sizeof out, "/tmp/shim_bench.%d.culeak", (int)getpid());
    static const int depths[] = {8, 32, 64};
    printf("culeak shim cost per cuMemAlloc_v2+cuMemFree_v2 pair, fake driver, %d pairs, recording to a file\n",
           PAIRS);
    printf("%6s %12s %12s %14s %14s\n", "depth", "base ns", "shim ns", "shim cost ns", "bytes/event");
    for (size_t i = 0; i < sizeof depths / sizeof *depths; i++) {
        char env[16384];
        /* A depth limit above the recursion, so the whole stack is unwound. */
        snprintf(env, sizeof env, "LD_PRELOAD='%s' CULEAK_OUTPUT='%s' CULEAK_DEPTH=256", shim, out);
        double base = measure(self, "", cuda, depths[i]);
        double traced = measure(self, env, cuda, depths[i]);
        struct stat st;
        double bytes = stat(out, &st) == 0 ? (double)st.st_size / (2.0 * (PAIRS + WARMUP)) : -1;
        unlink(out);
        if (base < 0 || traced < 0) {
            fprintf(stderr, "shim_bench: a run failed at depth %d\n", depths[i]);
            return 1;
        }
        printf("%6d %12.1f %12.1f %14.1f %14.2f\n", depths[i], base, traced, traced - base, bytes);
    }
    return 0;
}
