/* A runtime-API program linked against the (fake) shared cudart: every allocation is one
 * runtime call that reaches the driver underneath. Prints one final line like the
 * driver clients ("client_runtime <scenario> ok ..."). */
#include "fakecuda.h"
#include "scenarios.h"

#include "cuda/culeak_cudart.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CK(call)                                                                             \
    do {                                                                                     \
        cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) {                                                             \
            fprintf(stderr, "FAIL %s:%d: %s -> %d\n", __FILE__, __LINE__, #call, (int)e_);   \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

/* the fake driver's counters, found through the libcuda.so.1 cudart loaded */
static size_t live_bytes(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    size_t (*f)(void) = h ? (size_t (*)(void))dlsym(h, "fakecuda_live_bytes") : NULL;
    return f ? f() : 0;
}

static int finish(const char *scenario, int expect_live_zero)
{
    size_t live = live_bytes();
    if (expect_live_zero && live) {
        fprintf(stderr, "FAIL live_bytes=%zu\n", live);
        return 1;
    }
    printf("client_runtime %s ok live_bytes=%zu\n", scenario, live);
    return 0;
}

/* 6 allocations and 6 frees, then cudaDeviceReset; cudaFree(0) adds nothing. */
static int families(void)
{
    void *d, *h;
    cudaStream_t s;
    CK(cudaFree(0));
    CK(cudaMalloc(&d, SZ_ALLOC));
    CK(cudaFree(d));
    CK(cudaMallocHost(&h, SZ_HOST));
    CK(cudaFreeHost(h));
    CK(cudaHostAlloc(&h, SZ_HOSTALLOC, cudaHostAllocDefault));
    CK(cudaFreeHost(h));
    CK(cudaMallocManaged(&d, SZ_MANAGED, cudaMemAttachGlobal));
    CK(cudaFree(d));
    CK(cudaStreamCreate(&s));
    CK(cudaMallocAsync(&d, SZ_ASYNC, s));
    CK(cudaFreeAsync(d, s));
    CK(cudaStreamDestroy(s));
    cudaMipmappedArray_t mip;
    struct cudaChannelFormatDesc f32 = {32, 0, 0, 0, cudaChannelFormatKindFloat};
    CK(cudaMallocMipmappedArray(&mip, &f32, (struct cudaExtent){32, 32, 0}, 3, 0));
    CK(cudaFreeMipmappedArray(mip));
    CK(cudaDeviceReset());
    return finish("families", 1);
}

/* 2 blocks left behind, then cudaDeviceReset frees them: 2 allocs + 1 free-all. */
static int reset(void)
{
    void *d;
    CK(cudaMalloc(&d, SZ_CTX));
    CK(cudaMalloc(&d, SZ_CTX));
    CK(cudaDeviceReset());
    return finish("reset", 1);
}

static int free0(void)
{
    void *d;
    CK(cudaFree(0));
    CK(cudaMalloc(&d, SZ_ALLOC));
    CK(cudaFree(d));
    return finish("free0", 1);
}

static void *thread_main(void *p)
{
    int pairs = *(const int *)p;
    for (int i = 0; i < pairs; i++) {
        void *d;
        CK(cudaMalloc(&d, SZ_THREAD));
        CK(cudaFree(d));
    }
    return NULL;
}

static int threads(int n, int m)
{
    pthread_t t[256];
    if (n <= 0 || n > 256)
        return 2;
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, thread_main, &m) != 0)
            return 1;
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    return finish("threads", 1);
}

static int oom(void)
{
    void *d = (void *)0x5eed0000; /* stale: the failed call leaves it, its event must not carry it */
    cudaError_t e = cudaMalloc(&d, SZ_OOM);
    if (e != cudaErrorMemoryAllocation) {
        fprintf(stderr, "FAIL oom: %d\n", (int)e);
        return 1;
    }
    printf("oom result=%d\n", (int)e);
    return finish("oom", 1);
}

static void touch(const char *dir, const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
}

static void wait_for(const char *dir, const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct timespec ts = {0, 10 * 1000 * 1000};
    while (access(path, F_OK) != 0)
        nanosleep(&ts, NULL);
}

/* As client_scenarios.c's attach, through the shared runtime (the program's GOT); after
 * the leaks, pinned host memory taken and given back by functions called for the first
 * time (their PLT slots unbound until then). */
static int attach_scenario(int n, const char *dir)
{
    static void *kept[64], *pinned;
    n = n < 64 ? n : 64;
    CK(cudaFree(0));
    for (int i = 0; i < n; i++)
        CK(cudaMalloc(&kept[i], SZ_BEFORE_ATTACH));
    CK(cudaHostAlloc(&pinned, SZ_PINNED_BEFORE_ATTACH, 0)); /* not cudaMallocHost: it is first called later */
    printf("client_runtime attach ready live_bytes=%zu\n", live_bytes());
    fflush(stdout);
    touch(dir, "ready");
    wait_for(dir, "go");
    CK(cudaFreeHost(pinned)); /* ends an allocation of the inventory's, in host memory */
    for (int i = 0; i < N_AFTER_ATTACH; i++) {
        void *d;
        CK(cudaMalloc(&d, SZ_AFTER_ATTACH)); /* ATTACH_LEAK_LINE */
    }
    void *h; /* first called now: their PLT slots were still unbound (lazy) at the attach */
    CK(cudaMallocHost(&h, SZ_HOST));
    CK(cudaFreeHost(h));
    printf("client_runtime attach leaked live_bytes=%zu\n", live_bytes());
    fflush(stdout);
    touch(dir, "leaked");
    wait_for(dir, "end");
    printf("client_runtime attach ok\n");
    return ATTACH_EXIT;
}

int main(int argc, char **argv)
{
    const char *s = argc > 1 ? argv[1] : "";
    if (!strcmp(s, "families"))
        return families();
    if (!strcmp(s, "reset"))
        return reset();
    if (!strcmp(s, "free0"))
        return free0();
    if (!strcmp(s, "threads"))
        return threads(argc > 2 ? atoi(argv[2]) : 16, argc > 3 ? atoi(argv[3]) : 100);
    if (!strcmp(s, "oom"))
        return oom();
    if (!strcmp(s, "attach") && argc > 3)
        return attach_scenario(atoi(argv[2]), argv[3]);
    fprintf(stderr, "usage: %s families|reset|free0|threads N M|oom|attach N DIR\n", argv[0]);
    return 2;
}
