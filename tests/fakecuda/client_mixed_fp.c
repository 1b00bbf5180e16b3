/* client_mixed_fp: allocates through the driver API from call paths that mix functions
 * built with frame pointers (this file) and without (mixed_fp_levels.c), each path many
 * times, in two threads, so that a stack walker that trusts frame pointers blindly, or
 * caches what it learnt without checking, gets some stacks wrong; then SIGNALS more from
 * a signal handler running on an alternate signal stack; and SITES more from two call
 * sites in turn whose frames lie at the same addresses, with the same saved rbp (only the
 * return address into each site differs: a walker that checks less takes the other's).
 *   client_mixed_fp [ROUNDS]          (default 200): 2 * ROUNDS + SIGNALS + SITES allocations */
#include "mixed_fp.h"

#include "cuda/culeak_cuda.h"
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#define SIGNALS 20
#define SITES 20

volatile int mixed_fp_sink;
static __thread unsigned shape; /* the round's path: two bits per level */

__attribute__((noinline)) int level_fp(int depth)
{
    if (depth <= 0) {
        CUdeviceptr p;
        if (cuMemAlloc(&p, 4096) != CUDA_SUCCESS || cuMemFree(p) != CUDA_SUCCESS)
            return -1000;
        return 1;
    }
    /* the path below this level: with frame pointers, or through one level without */
    unsigned pick = (shape >> (depth * 2)) & 3;
    int r = pick == 1 ? level_nofp_quiet(depth) : pick == 2 ? level_nofp_clobber(depth) : level_fp(depth - 1);
    mixed_fp_sink += r;
    return r;
}

/* Two call sites of level_fp(0) with frames alike (one from each in turn). */
__attribute__((noinline)) static int site_a(void)
{
    int r = level_fp(0);
    mixed_fp_sink += r;
    return r;
}

__attribute__((noinline)) static int site_b(void)
{
    int r = level_fp(0);
    mixed_fp_sink += r * 3;
    return r;
}

__attribute__((noinline)) static int two_sites(void)
{
    int bad = 0;
    for (int i = 0; i < SITES; i++)
        bad |= (i & 1 ? site_b() : site_a()) < 0;
    return bad ? -1 : 0;
}

static CUcontext ctx;

static void *rounds(void *arg)
{
    long n = (long)arg;
    int bad = cuCtxSetCurrent(ctx) != CUDA_SUCCESS;
    for (long i = 0; i < n; i++) {
        shape = (unsigned)(i * 2654435761u) ^ (unsigned)(i >> 3);
        bad |= level_fp(1 + (int)(i % 7)) < 0;
    }
    return bad ? (void *)1 : NULL;
}

static volatile int handler_bad;

static void on_signal(int sig)
{
    (void)sig;
    shape = 0x9999u; /* a path through both kinds of level */
    handler_bad |= level_fp(4) < 0;
}

/* Allocations from a handler on an alternate stack (raised synchronously, outside any
 * allocation call). */
static int from_signal_stack(void)
{
    stack_t ss = {.ss_sp = malloc(1 << 16), .ss_size = 1 << 16, .ss_flags = 0};
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_ONSTACK};
    if (!ss.ss_sp || sigaltstack(&ss, NULL) != 0 || sigaction(SIGUSR1, &sa, NULL) != 0)
        return -1;
    for (int i = 0; i < SIGNALS; i++)
        raise(SIGUSR1);
    return handler_bad ? -1 : 0;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200;
    CUdevice dev;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
        fprintf(stderr, "client_mixed_fp: no context\n");
        return 1;
    }
    pthread_t t;
    void *other = NULL;
    if (pthread_create(&t, NULL, rounds, (void *)n) != 0)
        return 1;
    void *mine = rounds((void *)n);
    pthread_join(t, &other);
    if (mine || other || from_signal_stack() < 0 || two_sites() < 0) {
        fprintf(stderr, "client_mixed_fp: an allocation failed\n");
        return 1;
    }
    return 0;
}
