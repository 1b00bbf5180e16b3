/* Shared by the demos (CUDA C++ and the C simulation): options, marks, the delay between
 * iterations. Usage of every demo: PROG [ITERATIONS] [--delay-ms MS] (see demo_usage). */
#ifndef CULEAK_DEMO_H
#define CULEAK_DEMO_H

#include <culeak.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEMO_MIB ((size_t)1 << 20)

struct demo_opts {
    long iterations; /* default set by the demo */
    long delay_ms;   /* pause after each iteration, so a live view can follow */
    long block_mib;  /* --block-mib, for the demos that take it; 0: not accepted */
};

static inline const char *demo_name(const char *argv0)
{
    const char *slash = strrchr(argv0, '/');
    return slash ? slash + 1 : argv0;
}

static inline void demo_usage(FILE *f, const char *prog, const struct demo_opts *o)
{
    fprintf(f, "usage: %s [ITERATIONS] [--iterations N] [--delay-ms MS]%s\n", prog,
            o->block_mib ? " [--block-mib MIB]" : "");
    fprintf(f, "defaults: %ld iterations, no delay", o->iterations);
    if (o->block_mib)
        fprintf(f, ", blocks of %ld MiB", o->block_mib);
    fputc('\n', f);
}

static inline long demo_number(const char *prog, const char *what, const char *s)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0) {
        fprintf(stderr, "%s: %s takes a non-negative integer, not '%s'\n", prog, what, s);
        exit(2);
    }
    return v;
}

/* *o holds the defaults on entry. Exits on --help (0) and on bad arguments (2). */
static inline void demo_parse(int argc, char **argv, struct demo_opts *o)
{
    const char *prog = demo_name(argv[0]);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            demo_usage(stdout, prog, o);
            exit(0);
        } else if ((strcmp(a, "--iterations") == 0 || strcmp(a, "-n") == 0) && has_value) {
            o->iterations = demo_number(prog, a, argv[++i]);
        } else if (strcmp(a, "--delay-ms") == 0 && has_value) {
            o->delay_ms = demo_number(prog, a, argv[++i]);
        } else if (o->block_mib && strcmp(a, "--block-mib") == 0 && has_value) {
            o->block_mib = demo_number(prog, a, argv[++i]);
            if (o->block_mib == 0) {
                fprintf(stderr, "%s: --block-mib must be at least 1\n", prog);
                exit(2);
            }
        } else if (a[0] != '-') {
            o->iterations = demo_number(prog, "ITERATIONS", a);
        } else {
            demo_usage(stderr, prog, o);
            exit(2);
        }
    }
}

/* Marks the start of iteration i (1-based) on culeak's timeline; a no-op without culeak. */
static inline void demo_mark(long i)
{
    char label[48];
    snprintf(label, sizeof label, "iteration %ld", i);
    culeak_mark(label);
}

static inline void demo_sleep(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (ms > 0 && nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

#ifdef __CUDACC__
#include <cuda_runtime.h>

/* Any CUDA error ends the demo with the call and its place. */
#define CHECK(call) demo_check((call), #call, __FILE__, __LINE__)
static inline void demo_check(cudaError_t e, const char *what, const char *file, int line)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "%s:%d: %s: %s\n", file, line, what, cudaGetErrorString(e));
        exit(1);
    }
}
#endif

#endif
