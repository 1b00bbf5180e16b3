/* Scripted scenarios shared by client_static, client_driver and client_dlsym. Each prints
 * one final line "<client> <scenario> ok ..." (deterministic: no addresses, no pids except
 * in `fork`) and exits 0, or prints "FAIL ..." and exits 1. */
#include "client_api.h"
#include "scenarios.h"

#include <culeak.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct client_driver D;

#define CK(call)                                                                             \
    do {                                                                                     \
        CUresult r_ = (call);                                                                \
        if (r_ != CUDA_SUCCESS) {                                                            \
            fprintf(stderr, "FAIL %s:%d: %s -> %d\n", __FILE__, __LINE__, #call, (int)r_);   \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

#define EXPECT(cond)                                                                         \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                  \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

static CUcontext primary;

static void setup(void)
{
    CUdevice dev;
    CK(D.cuInit(0));
    CK(D.cuDeviceGet(&dev, 0));
    CK(D.cuDevicePrimaryCtxRetain(&primary, dev));
    CK(D.cuCtxSetCurrent(primary));
}

static void finish(const char *scenario, int expect_live_zero)
{
    size_t live = D.live_bytes ? D.live_bytes() : 0;
    if (expect_live_zero)
        EXPECT(live == 0);
    printf("%s %s ok allocs=%lu frees=%lu live_bytes=%zu\n", client_name, scenario,
           D.alloc_count ? D.alloc_count() : 0, D.free_count ? D.free_count() : 0, live);
    fflush(stdout);
}

static void roundtrip(CUdeviceptr d, size_t n)
{
    unsigned char in[64], out[64];
    n = n < sizeof in ? n : sizeof in;
    for (size_t i = 0; i < n; i++)
        in[i] = (unsigned char)(i * 7 + 1);
    CK(D.cuMemcpyHtoD_v2(d, in, n));
    CK(D.cuMemcpyDtoH_v2(out, d, n));
    EXPECT(memcmp(in, out, n) == 0);
}

static void fam_linear(void)
{
    CUdeviceptr d;
    size_t pitch;
    CK(D.cuMemAlloc_v2(&d, SZ_ALLOC));
    roundtrip(d, SZ_ALLOC);
    CK(D.cuMemFree_v2(d));
    CK(D.cuMemAllocPitch_v2(&d, &pitch, SZ_PITCH_W, SZ_PITCH_H, 4));
    EXPECT(pitch * SZ_PITCH_H == SZ_PITCH_BYTES);
    CK(D.cuMemFree_v2(d));
    CK(D.cuMemAllocManaged(&d, SZ_MANAGED, CU_MEM_ATTACH_GLOBAL));
    CK(D.cuMemFree_v2(d));
}

static void fam_host(void)
{
    void *p;
    CK(D.cuMemAllocHost_v2(&p, SZ_HOST));
    CK(D.cuMemFreeHost(p));
    CK(D.cuMemHostAlloc(&p, SZ_HOSTALLOC, 0));
    CK(D.cuMemFreeHost(p));
    void *buf = aligned_alloc(4096, SZ_REGISTER);
    EXPECT(buf);
    CK(D.cuMemHostRegister_v2(buf, SZ_REGISTER, 0));
    CK(D.cuMemHostUnregister(buf));
    free(buf);
}

static void fam_async(void)
{
    CUstream s;
    CUdeviceptr d, imp;
    CUmemoryPool pool;
    CUmemPoolProps props = {0};
    CUmemPoolPtrExportData exp;
    CK(D.cuStreamCreate(&s, 0));
    CK(D.cuMemAllocAsync(&d, SZ_ASYNC, s));
    CK(D.cuMemFreeAsync(d, s));
    CK(D.cuMemAllocAsync_ptsz(&d, SZ_ASYNC_PTSZ, s));
    CK(D.cuMemFreeAsync_ptsz(d, s));
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 0;
    CK(D.cuMemPoolCreate(&pool, &props));
    CK(D.cuMemAllocFromPoolAsync(&d, SZ_POOL, pool, s));
    CK(D.cuMemPoolExportPointer(&exp, d));
    CK(D.cuMemPoolImportPointer(&imp, pool, &exp));
    CK(D.cuMemFree_v2(imp));
    CK(D.cuMemFreeAsync(d, s));
    CK(D.cuMemAllocFromPoolAsync_ptsz(&d, SZ_POOL_PTSZ, pool, s));
    CK(D.cuMemFreeAsync_ptsz(d, s));
    CK(D.cuStreamSynchronize(s));
    CK(D.cuStreamSynchronize_ptsz(s));
    CK(D.cuMemPoolTrimTo(pool, 0));
    CK(D.cuMemPoolDestroy(pool));
    CK(D.cuStreamDestroy_v2(s));
}

static void fam_vmm(void)
{
    CUmemAllocationProp prop = {0};
    CUmemGenericAllocationHandle h, h2, imported;
    CUdeviceptr va;
    CUmemAccessDesc access = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    size_t gran;
    int fd;
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    CK(D.cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    EXPECT(SZ_VMM % gran == 0);
    CK(D.cuMemCreate(&h, SZ_VMM, &prop, 0));
    CK(D.cuMemAddressReserve(&va, SZ_VA, 0, 0, 0));
    CK(D.cuMemMap(va, SZ_VMM, 0, h, 0));
    CK(D.cuMemSetAccess(va, SZ_VMM, &access, 1));
    CK(D.cuMemsetD8_v2(va, 0x5a, SZ_VMM));
    roundtrip(va + SZ_VMM - 64, 64);
    CK(D.cuMemRetainAllocationHandle(&h2, (void *)va));
    EXPECT(h2 == h);
    CK(D.cuMemRelease(h2));
    CK(D.cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    CK(D.cuMemImportFromShareableHandle(&imported, (void *)(intptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    close(fd);
    CK(D.cuMemRelease(imported));
    CK(D.cuMemUnmap(va, SZ_VMM));
    CK(D.cuMemRelease(h));
    CK(D.cuMemAddressFree(va, SZ_VA));
}

static void fam_arrays(void)
{
    CUarray a;
    CUmipmappedArray m;
    CUDA_ARRAY_DESCRIPTOR d2 = {64, 32, CU_AD_FORMAT_FLOAT, 1};
    CUDA_ARRAY3D_DESCRIPTOR d3 = {16, 16, 16, CU_AD_FORMAT_UNSIGNED_INT8, 4, 0};
    CUDA_ARRAY3D_DESCRIPTOR dm = {32, 32, 0, CU_AD_FORMAT_FLOAT, 1, 0};
    CK(D.cuArrayCreate_v2(&a, &d2));
    CK(D.cuArrayDestroy(a));
    CK(D.cuArray3DCreate_v2(&a, &d3));
    CK(D.cuArrayDestroy(a));
    CK(D.cuMipmappedArrayCreate(&m, &dm, 1));
    CK(D.cuMipmappedArrayDestroy(m));
}

static void fam_imported(void)
{
    CUdeviceptr d, opened;
    CUipcMemHandle ipc;
    CUexternalMemory ext;
    CUDA_EXTERNAL_MEMORY_HANDLE_DESC desc;
    CK(D.cuMemAlloc_v2(&d, SZ_IPC));
    CK(D.cuIpcGetMemHandle(&ipc, d));
    CK(D.cuIpcOpenMemHandle_v2(&opened, ipc, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    CK(D.cuIpcCloseMemHandle(opened));
    CK(D.cuMemFree_v2(d));
    memset(&desc, 0, sizeof desc);
    desc.type = CU_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD;
    desc.handle.fd = -1;
    desc.size = SZ_EXTERNAL;
    CK(D.cuImportExternalMemory(&ext, &desc));
    CK(D.cuDestroyExternalMemory(ext));
}

static void fam_graph(void)
{
    CUgraph g;
    CUgraphNode an, fn;
    CUDA_MEM_ALLOC_NODE_PARAMS p;
    memset(&p, 0, sizeof p);
    p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.bytesize = SZ_GRAPH;
    CK(D.cuGraphCreate(&g, 0));
    CK(D.cuGraphAddMemAllocNode(&an, g, NULL, 0, &p));
    CK(D.cuGraphAddMemFreeNode(&fn, g, &an, 1, p.dptr));
    CK(D.cuGraphDestroy(g));
}

static int families(void)
{
    setup();
    fam_linear();
    fam_host();
    fam_async();
    fam_vmm();
    fam_arrays();
    fam_imported();
    fam_graph();
    finish("families", 1);
    return 0;
}

struct thread_arg {
    int pairs;
};

static void *thread_main(void *p)
{
    const struct thread_arg *a = p;
    CK(D.cuCtxSetCurrent(primary));
    for (int i = 0; i < a->pairs; i++) {
        CUdeviceptr d;
        CK(D.cuMemAlloc_v2(&d, SZ_THREAD));
        CK(D.cuMemFree_v2(d));
    }
    return NULL;
}

static int threads(int n, int m)
{
    pthread_t t[256];
    struct thread_arg a = {m};
    EXPECT(n > 0 && n <= 256 && m >= 0);
    setup();
    for (int i = 0; i < n; i++)
        EXPECT(pthread_create(&t[i], NULL, thread_main, &a) == 0);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    finish("threads", 1);
    return 0;
}

/* Parent: one block across the forks. Child A allocates and frees; child B never calls CUDA. */
static int forks(void)
{
    CUdeviceptr d;
    setup();
    CK(D.cuMemAlloc_v2(&d, SZ_FORK_PARENT));
    fflush(stdout);
    pid_t a = fork();
    EXPECT(a >= 0);
    if (a == 0) {
        CUdeviceptr c;
        CK(D.cuMemAlloc_v2(&c, SZ_FORK_CHILD));
        CK(D.cuMemFree_v2(c));
        exit(0);
    }
    pid_t b = fork();
    EXPECT(b >= 0);
    if (b == 0)
        exit(0);
    int st_a, st_b;
    EXPECT(waitpid(a, &st_a, 0) == a && WIFEXITED(st_a) && WEXITSTATUS(st_a) == 0);
    EXPECT(waitpid(b, &st_b, 0) == b && WIFEXITED(st_b) && WEXITSTATUS(st_b) == 0);
    CK(D.cuMemFree_v2(d));
    printf("fork parent=%d child_cuda=%d child_plain=%d\n", (int)getpid(), (int)a, (int)b);
    finish("fork", 1);
    return 0;
}

static int leak(int n, size_t size)
{
    setup();
    for (int i = 0; i < n; i++) {
        CUdeviceptr d;
        CK(D.cuMemAlloc_v2(&d, size));
    }
    finish("leak", 0);
    return 0;
}

/* Leaks at two call sites of their own: two blocks of 1000 bytes, one of 2000. */
static __attribute__((noinline)) void leak_site_a(size_t size)
{
    CUdeviceptr d;
    CK(D.cuMemAlloc_v2(&d, size));
}

static __attribute__((noinline)) void leak_site_b(size_t size)
{
    CUdeviceptr d;
    CK(D.cuMemAlloc_v2(&d, size));
}

/* N rounds of an allocation and free of the same size at site a, then at site b. */
static int twosites(int n)
{
    setup();
    for (int i = 0; i < n; i++) {
        CUdeviceptr d;
        CK(D.cuMemAlloc_v2(&d, SZ_LONG)); /* site a */
        CK(D.cuMemFree_v2(d));
        leak_site_b(SZ_LONG);
    }
    finish("twosites", 0);
    return 0;
}

static int sites(void)
{
    setup();
    leak_site_a(1000);
    leak_site_a(1000);
    leak_site_b(2000);
    finish("sites", 0);
    return 0;
}

static int oom(void)
{
    CUdeviceptr d = 0x5eed0000; /* stale: the failed call leaves it, its event must not carry it */
    setup();
    CUresult r = D.cuMemAlloc_v2(&d, SZ_OOM);
    EXPECT(r == CUDA_ERROR_OUT_OF_MEMORY);
    printf("oom result=%d\n", (int)r);
    finish("oom", 1);
    return 0;
}

/* cuMemFree(0) is context set-up, not a free; one real pair follows so the stream is not empty. */
static int free0(void)
{
    CUdeviceptr d;
    setup();
    CK(D.cuMemFree_v2(0));
    CK(D.cuMemAlloc_v2(&d, SZ_ALLOC));
    CK(D.cuMemFree_v2(d));
    finish("free0", 1);
    return 0;
}

/* A created context with 3 blocks is destroyed; then 2 blocks in the primary context
 * die with a primary reset. The fake frees them itself (live_bytes 0 at the end). */
static int ctxdestroy(void)
{
    CUcontext c;
    CUdeviceptr d;
    setup();
    CK(D.cuCtxCreate_v4(&c, NULL, 0, 0));
    for (int i = 0; i < 3; i++)
        CK(D.cuMemAlloc_v2(&d, SZ_CTX));
    CK(D.cuCtxDestroy_v2(c));
    CK(D.cuCtxSetCurrent(primary));
    for (int i = 0; i < 2; i++)
        CK(D.cuMemAlloc_v2(&d, SZ_CTX));
    CK(D.cuDevicePrimaryCtxReset_v2(0));
    finish("ctxdestroy", 1);
    return 0;
}

/* Allocations from the primary contexts of devices 0 and 1 in turn, then from a context
 * created on device 1 and destroyed, then from device 0's again: each event names the
 * device of the context current at its allocation. */
static int devswitch(void)
{
    CUcontext p1, c;
    CUdeviceptr d;
    setup();
    CK(D.cuDevicePrimaryCtxRetain(&p1, 1));
    for (int i = 0; i < 3; i++) {
        CK(D.cuCtxSetCurrent(primary));
        CK(D.cuMemAlloc_v2(&d, SZ_CTX));
        CK(D.cuCtxSetCurrent(p1));
        CK(D.cuMemAlloc_v2(&d, SZ_CTX));
    }
    CK(D.cuCtxCreate_v4(&c, NULL, 0, 1));
    CK(D.cuMemAlloc_v2(&d, SZ_CTX));
    CK(D.cuCtxDestroy_v2(c));
    CK(D.cuCtxSetCurrent(primary));
    CK(D.cuMemAlloc_v2(&d, SZ_CTX));
    finish("devswitch", 0);
    return 0;
}

static int longrun(int n, long usec)
{
    setup();
    struct timespec ts = {usec / 1000000, (usec % 1000000) * 1000};
    for (int i = 0; i < n; i++) {
        CUdeviceptr d;
        CK(D.cuMemAlloc_v2(&d, SZ_LONG));
        CK(D.cuMemFree_v2(d));
        if (usec)
            nanosleep(&ts, NULL);
    }
    finish("long", 1);
    return 0;
}

static unsigned long long monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* N allocations USEC apart, each between two readings of CLOCK_MONOTONIC, printed as
 * "at BEFORE AFTER" (ns): the event's time must lie between them. */
static int clock_scenario(int n, long usec)
{
    setup();
    struct timespec ts = {usec / 1000000, (usec % 1000000) * 1000};
    for (int i = 0; i < n; i++) {
        CUdeviceptr d;
        unsigned long long before = monotonic_ns();
        CK(D.cuMemAlloc_v2(&d, SZ_LONG));
        unsigned long long after = monotonic_ns();
        CK(D.cuMemFree_v2(d));
        printf("at %llu %llu\n", before, after);
        if (usec)
            nanosleep(&ts, NULL);
    }
    finish("clock", 1);
    return 0;
}

/* Pairs every USEC until FILE exists, or its directory is gone (the test that made it is
 * over): a job that runs as long as a test needs it, not for a time a slow machine outlasts. */
static int run_until(const char *file, long usec)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", file);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = 0;
    else
        snprintf(dir, sizeof dir, ".");
    setup();
    struct timespec ts = {usec / 1000000, (usec % 1000000) * 1000};
    while (access(file, F_OK) != 0 && access(dir, F_OK) == 0) {
        CUdeviceptr d;
        CK(D.cuMemAlloc_v2(&d, SZ_LONG));
        CK(D.cuMemFree_v2(d));
        nanosleep(&ts, NULL);
    }
    finish("until", 1);
    return 0;
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

/* A program culeak attaches to while it runs: n allocations kept, DIR/ready; once DIR/go
 * exists, N_AFTER_ATTACH leaks at one line, DIR/leaked; once DIR/end exists, it ends with
 * ATTACH_EXIT (its own status, which culeak must not change). */
static int attach_scenario(int n, const char *dir)
{
    static CUdeviceptr kept[64];
    static void *pinned;
    setup();
    n = n < 64 ? n : 64;
    for (int i = 0; i < n; i++)
        CK(D.cuMemAlloc_v2(&kept[i], SZ_BEFORE_ATTACH));
    CK(D.cuMemAllocHost_v2(&pinned, SZ_PINNED_BEFORE_ATTACH));
    printf("%s attach ready allocs=%lu live_bytes=%zu\n", client_name, D.alloc_count ? D.alloc_count() : 0,
           D.live_bytes ? D.live_bytes() : 0);
    fflush(stdout);
    touch(dir, "ready");
    wait_for(dir, "go");
    CK(D.cuMemFreeHost(pinned)); /* ends an allocation of the inventory's, in host memory */
    for (int i = 0; i < N_AFTER_ATTACH; i++) {
        CUdeviceptr d;
        CK(D.cuMemAlloc_v2(&d, SZ_AFTER_ATTACH)); /* ATTACH_LEAK_LINE */
    }
    printf("%s attach leaked live_bytes=%zu\n", client_name, D.live_bytes ? D.live_bytes() : 0);
    fflush(stdout);
    touch(dir, "leaked");
    wait_for(dir, "end");
    printf("%s attach ok allocs=%lu\n", client_name, D.alloc_count ? D.alloc_count() : 0);
    return ATTACH_EXIT;
}

/* Half the pairs, then waits for one byte (or EOF) on stdin, then the other half: lets a
 * test act between the halves (e.g. kill the reader) without depending on timing. */
static int gated(int n)
{
    char c;
    setup();
    for (int i = 0; i < n; i++) {
        CUdeviceptr d;
        if (i == n / 2 && read(0, &c, 1) < 0)
            perror("read");
        CK(D.cuMemAlloc_v2(&d, SZ_LONG));
        CK(D.cuMemFree_v2(d));
    }
    finish("gated", 1);
    return 0;
}

static int mark(int n)
{
    setup();
    for (int i = 0; i < n; i++) {
        char label[32];
        CUdeviceptr d;
        snprintf(label, sizeof label, "iteration %d", i);
        culeak_mark(label);
        CK(D.cuMemAlloc_v2(&d, SZ_MARK));
        CK(D.cuMemFree_v2(d));
    }
    finish("mark", 1);
    return 0;
}

/* Growth suspects: at every iteration one site keeps SZ_GROW bytes (grow_step), one
 * allocates and frees (churn_step), one goes up and down in a sawtooth of three
 * iterations (sawtooth_step, up twice then back to nothing); then the mark "iteration N".
 * Only grow_step is a suspect. usec: a pause per iteration (0: none). */
static CUdeviceptr saw[2];
static int nsaw;

__attribute__((noinline)) static void grow_step(void)
{
    CUdeviceptr d;
    CK(D.cuMemAlloc_v2(&d, SZ_GROW)); /* kept: the leak */
}

__attribute__((noinline)) static void churn_step(void)
{
    CUdeviceptr d;
    CK(D.cuMemAlloc_v2(&d, SZ_CHURN));
    CK(D.cuMemFree_v2(d));
}

__attribute__((noinline)) static void sawtooth_step(int i)
{
    if (i % 3 == 0) {
        while (nsaw > 0)
            CK(D.cuMemFree_v2(saw[--nsaw]));
        return;
    }
    CK(D.cuMemAlloc_v2(&saw[nsaw++], SZ_SAW));
}

static int growth(int n, long usec)
{
    setup();
    struct timespec ts = {usec / 1000000, (usec % 1000000) * 1000};
    for (int i = 0; i < n; i++) {
        char label[32];
        grow_step();
        churn_step();
        sawtooth_step(i);
        snprintf(label, sizeof label, "iteration %d", i);
        culeak_mark(label);
        if (usec)
            nanosleep(&ts, NULL);
    }
    finish("growth", 0);
    return 0;
}

/* A range mapped again by one thread while another is still inside cuMemUnmap of it (run
 * with FAKECUDA_UNMAP_LINGER_MS): the new mapping is left mapped at exit. */
static CUdeviceptr remap_va;

static void *unmapper(void *p)
{
    (void)p;
    CK(D.cuCtxSetCurrent(primary));
    CK(D.cuMemUnmap(remap_va, SZ_VMM));
    return NULL;
}

static int remap(void)
{
    CUmemAllocationProp prop = {0};
    CUmemGenericAllocationHandle h;
    pthread_t t;
    struct timespec ms = {0, 1000000};
    CUresult r;
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    setup();
    CK(D.cuMemCreate(&h, SZ_VMM, &prop, 0));
    CK(D.cuMemAddressReserve(&remap_va, SZ_VA, 0, 0, 0));
    CK(D.cuMemMap(remap_va, SZ_VMM, 0, h, 0));
    EXPECT(pthread_create(&t, NULL, unmapper, NULL) == 0);
    while ((r = D.cuMemMap(remap_va, SZ_VMM, 0, h, 0)) == CUDA_ERROR_ALREADY_MAPPED)
        nanosleep(&ms, NULL); /* each try is a failed allocation */
    CK(r);
    EXPECT(pthread_join(t, NULL) == 0);
    finish("remap", 0);
    return 0;
}

/* A thread's key destructor that allocates after culeak's per-thread caches were freed
 * (cuBLAS-like handles are released so): the shim must build them anew, never reuse
 * freed memory. Keys are destroyed in creation order, so this one, created after the
 * first allocation made the shim's, runs after them. */
static pthread_key_t late_key;

__attribute__((noinline)) static void deep_pair(int d)
{
    if (d > 0) {
        deep_pair(d - 1);
        return;
    }
    CUdeviceptr p;
    CK(D.cuMemAlloc_v2(&p, SZ_THREAD));
    CK(D.cuMemFree_v2(p));
}

static void late_release(void *v)
{
    (void)v;
    CK(D.cuCtxSetCurrent(primary));
    for (int i = 0; i < 50; i++)
        deep_pair(i % 20);
}

static void *late_thread(void *v)
{
    (void)v;
    CK(D.cuCtxSetCurrent(primary));
    deep_pair(3);
    pthread_setspecific(late_key, (void *)1);
    return NULL;
}

static int keydtor(int n)
{
    setup();
    deep_pair(0);
    EXPECT(pthread_key_create(&late_key, late_release) == 0);
    for (int i = 0; i < n; i++) {
        pthread_t t;
        EXPECT(pthread_create(&t, NULL, late_thread, NULL) == 0);
        pthread_join(t, NULL);
    }
    finish("keydtor", 1);
    return 0;
}

/* The 32-bit v1 entry points must keep working (and keep their ABI) under an interposer. */
static int v1(void)
{
    unsigned int d;
    unsigned char in[16] = "v1 abi roundtrip", out[16];
    setup();
    CK(D.v1_cuMemAlloc(&d, 4096));
    EXPECT(d != 0);
    CK(D.v1_cuMemcpyHtoD(d, in, sizeof in));
    CK(D.v1_cuMemcpyDtoH(out, d, sizeof out));
    EXPECT(memcmp(in, out, sizeof in) == 0);
    CK(D.v1_cuMemFree(d));
    finish("v1", 1);
    return 0;
}

/* ---- repeats SEED N: N random steps across devices, contexts, sites, sizes and kinds,
 * each printed as it is done (no address: the output is the same without the shim):
 *   c J      the current context becomes J (0: device 0's primary, 1: device 1's, 2: a
 *            context of its own on device 1)
 *   a S Z    cuMemAlloc_v2 of Z bytes at site S (0 or 1)
 *   h S Z    cuMemAllocHost_v2 of Z bytes at site S
 *   r Z      cuMemAddressReserve of Z bytes
 *   v D      cuMemCreate of SZ_VMM bytes on device D (whatever the current context's)
 *   f K      the K-th allocation (from 0) freed: cuMemFree_v2, cuMemFreeHost,
 *            cuMemAddressFree or cuMemRelease as it was made
 *   x        a context created on the current one's device and destroyed at once
 * The recording must say all of it, event by event (test_shim_repeats). */
struct rep_block {
    CUdeviceptr d;
    void *h;
    CUmemGenericAllocationHandle v;
    size_t size;
    char how;
};

/* The two sites: each a function of its own, its allocation calls its own. */
__attribute__((noinline)) static void rep_site0(char how, size_t size, struct rep_block *b)
{
    if (how == 'a')
        CK(D.cuMemAlloc_v2(&b->d, size));
    else
        CK(D.cuMemAllocHost_v2(&b->h, size));
    __asm__ volatile("" ::: "memory"); /* no tail call: the site stays on the stack */
}

__attribute__((noinline)) static void rep_site1(char how, size_t size, struct rep_block *b)
{
    if (how == 'a')
        CK(D.cuMemAlloc_v2(&b->d, size));
    else
        CK(D.cuMemAllocHost_v2(&b->h, size));
    __asm__ volatile("" ::: "memory");
}

static int repeats(unsigned seed, int n)
{
    setup();
    CUcontext ctx[3], made;
    ctx[0] = primary;
    CK(D.cuDevicePrimaryCtxRetain(&ctx[1], 1));
    CK(D.cuCtxCreate_v4(&ctx[2], NULL, 0, 1));
    CK(D.cuCtxSetCurrent(primary));
    static const int dev[3] = {0, 1, 1};
    static struct rep_block b[4096];
    int nb = 0, cur = 0;
    unsigned x = seed * 2654435761u + 1;
    for (int i = 0; i < n && nb < 4096; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        unsigned r = x % 20, arg = x / 20;
        if (r < 3) {
            cur = (int)(arg % 3);
            CK(D.cuCtxSetCurrent(ctx[cur]));
            printf("c %d\n", cur);
        } else if (r <= 4) {
            CUmemAllocationProp prop = {0};
            prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
            prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
            prop.location.id = (int)(arg % 2);
            b[nb] = (struct rep_block){.size = SZ_VMM, .how = 'v'};
            CK(D.cuMemCreate(&b[nb++].v, SZ_VMM, &prop, 0));
            printf("v %d\n", prop.location.id);
        } else if (r <= 10) {
            char how = r == 10 ? 'h' : 'a';
            size_t size = arg % 2 ? 8192 : 4096;
            int site = (int)(arg / 2 % 2);
            b[nb] = (struct rep_block){.size = size, .how = how};
            (site ? rep_site1 : rep_site0)(how, size, &b[nb++]);
            printf("%c %d %zu\n", how, site, size);
        } else if (r == 11) {
            size_t size = arg % 2 ? (4u << 20) : (2u << 20);
            b[nb] = (struct rep_block){.size = size, .how = 'r'};
            CK(D.cuMemAddressReserve(&b[nb++].d, size, 0, 0, 0));
            printf("r %zu\n", size);
        } else if (r < 19) {
            int k = nb ? (int)(arg % (unsigned)nb) : -1;
            while (k >= 0 && b[k].how == 0)
                k--;
            if (k < 0)
                continue;
            if (b[k].how == 'a')
                CK(D.cuMemFree_v2(b[k].d));
            else if (b[k].how == 'h')
                CK(D.cuMemFreeHost(b[k].h));
            else if (b[k].how == 'v')
                CK(D.cuMemRelease(b[k].v));
            else
                CK(D.cuMemAddressFree(b[k].d, b[k].size));
            b[k].how = 0;
            printf("f %d\n", k);
        } else {
            CK(D.cuCtxCreate_v4(&made, NULL, 0, dev[cur]));
            CK(D.cuCtxDestroy_v2(made));
            CK(D.cuCtxSetCurrent(ctx[cur]));
            printf("x\n");
        }
    }
    finish("repeats", 0);
    return 0;
}

int client_run(int argc, char **argv)
{
    const char *s = argc > 1 ? argv[1] : "";
    int a = argc > 2 ? atoi(argv[2]) : 0, b = argc > 3 ? atoi(argv[3]) : 0;
    if (!strcmp(s, "families"))
        return families();
    if (!strcmp(s, "threads"))
        return threads(argc > 2 ? a : 16, argc > 3 ? b : 100);
    if (!strcmp(s, "fork"))
        return forks();
    if (!strcmp(s, "leak"))
        return leak(argc > 2 ? a : 5, argc > 3 ? (size_t)strtoull(argv[3], NULL, 0) : 1 << 20);
    if (!strcmp(s, "oom"))
        return oom();
    if (!strcmp(s, "sites"))
        return sites();
    if (!strcmp(s, "twosites"))
        return twosites(argc > 2 ? a : 10);
    if (!strcmp(s, "free0"))
        return free0();
    if (!strcmp(s, "ctxdestroy"))
        return ctxdestroy();
    if (!strcmp(s, "devswitch"))
        return devswitch();
    if (!strcmp(s, "clock"))
        return clock_scenario(argc > 2 ? a : 60, argc > 3 ? b : 500);
    if (!strcmp(s, "long"))
        return longrun(argc > 2 ? a : 1000, argc > 3 ? b : 1000);
    if (!strcmp(s, "until") && argc > 2)
        return run_until(argv[2], argc > 3 && b > 0 ? b : 100000);
    if (!strcmp(s, "gated"))
        return gated(argc > 2 ? a : 1000);
    if (!strcmp(s, "mark"))
        return mark(argc > 2 ? a : 3);
    if (!strcmp(s, "v1"))
        return v1();
    if (!strcmp(s, "remap"))
        return remap();
    if (!strcmp(s, "growth"))
        return growth(argc > 2 ? a : 20, argc > 3 ? b : 0);
    if (!strcmp(s, "attach") && argc > 3)
        return attach_scenario(a, argv[3]);
    if (!strcmp(s, "keydtor"))
        return keydtor(argc > 2 ? a : 4);
    if (!strcmp(s, "repeats"))
        return repeats((unsigned)a, argc > 3 ? b : 300);
    fprintf(stderr, "usage: %s families|threads N M|fork|leak N SIZE|sites|twosites N|oom|free0|ctxdestroy|devswitch|clock N USEC|long N USEC|until FILE USEC|gated N|mark N|v1|remap|growth N USEC|keydtor N|repeats SEED N|attach N DIR\n",
            argv[0]);
    return 2;
}
