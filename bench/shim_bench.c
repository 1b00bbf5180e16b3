/* shim_bench: the shim's cost per cuMemAlloc_v2 + cuMemFree_v2 pair beside heaptrack's cost
 * per malloc + free pair in the same program shape, when heaptrack is installed. Prints
 * figures, judges nothing.
 *
 * Shapes: one stack at call depth 8, 32 and 64 (the same stack for every pair), and 100k
 * distinct stacks at depth 32 that differ near the root (the path through the outermost
 * 17 frames spells the stack's number in binary; consecutive pairs differ at the root).
 * Every configuration runs REPS times (env SHIM_BENCH_REPS, default 5), interleaved
 * (base, culeak, base malloc, heaptrack, next shape, ...), so that load from other work
 * on the machine falls on all of them alike; each figure is the median over the
 * repetitions, with the lowest and highest. A cost is the traced run's CPU time per
 * pair (of all its threads), measured inside the program around the loop, minus the
 * untraced run's.
 *
 * culeak runs on bench/bench_driver.c, a driver stand-in whose calls do next to nothing,
 * as malloc and free do next to nothing for heaptrack; and also, printed apart, on the
 * fake driver of the tests (tests/fakecuda), whose every call allocates and frees host
 * memory, so that its own cost moves with what else the heap holds. Every run has
 * glibc's fast bins off (GLIBC_TUNABLES=glibc.malloc.mxfast=0): with them, the fake
 * driver's aligned_alloc consolidates them at every allocation.
 *
 * SHIM_BENCH_CULEAK=PATH (the culeak program) runs culeak's side under `culeak record`:
 * the events go into a ring that the culeak process reads and writes to the file, and
 * the figure is the program's CPU time alone, as heaptrack's below is.
 *
 * Each run is also measured as a whole: the CPU time of every process it made (the
 * shell, `culeak record` and its reader, the program; start-up and exit included), from
 * getrusage(RUSAGE_CHILDREN), per pair, minus the untraced run's. Start-up weighs per
 * pair as 1/pairs: SHIM_BENCH_PAIRS=N sets the pairs per run (default 200000).
 *
 * heaptrack runs as its preload library alone, writing its raw data straight to a file
 * (`heaptrack PROGRAM` adds heaptrack_interpret in another process, reading a pipe,
 * which the program waits for when it falls behind).
 *
 *   shim_bench LIBCULEAK BENCH_DRIVER [FAKE_LIBCUDA]   every configuration (make bench)
 *   shim_bench run cuda|malloc DRIVER DEPTH STACKS PAIRS RESULT
 *                                            one measurement (a child of the above)
 *
 * The child reaches the driver the way nvcc's static cudart does: dlopen, one dlsym of
 * cuGetProcAddress_v2, then the entry points from cuGetProcAddress. */
#include "bench_driver.h"
#include "bench_time.h"
#include "cuda/culeak_cuda.h"
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PAIRS 200000 /* per run, unless SHIM_BENCH_PAIRS says */
#define WARMUP 2000
#define MANY_STACKS 100000
#define BRANCH_LEVELS 17 /* 2^17 paths >= MANY_STACKS */
#define MAX_REPS 25

static CUresult (*mem_alloc)(CUdeviceptr *, size_t);
static CUresult (*mem_free)(CUdeviceptr);
/* volatile: the compiler may not pair up and drop a malloc with its free */
static void *(*volatile heap_alloc)(size_t) = malloc;
static void (*volatile heap_free)(void *) = free;
static int use_heap;

/* The CPU time of the whole process (every thread: culeak's flush thread, heaptrack's
 * timer thread): unlike wall time, it does not count the time other work on the
 * machine takes the CPU away. */
static double now_ns(void) { return bench_seconds(CLOCK_PROCESS_CPUTIME_ID) * 1e9; }

static int pair(void)
{
    if (use_heap) {
        void *p = heap_alloc(256);
        if (!p)
            return -1;
        heap_free(p);
        return 0;
    }
    CUdeviceptr p;
    return mem_alloc(&p, 256) != CUDA_SUCCESS || mem_free(p) != CUDA_SUCCESS ? -1 : 0;
}

static int pairs(long n)
{
    for (long i = 0; i < n; i++)
        if (pair() < 0)
            return -1;
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

/* One pair at the end of a path: BRANCH_LEVELS frames chosen by the bits of `path`
 * (left or right: two call sites), then plain frames down to `depth`. */
__attribute__((noinline)) static int down(int depth, unsigned path, int level);
__attribute__((noinline)) static int left(int depth, unsigned path, int level)
{
    int r = down(depth - 1, path, level + 1);
    sink++;
    return r;
}
__attribute__((noinline)) static int right(int depth, unsigned path, int level)
{
    int r = down(depth - 1, path, level + 1);
    sink += 2;
    return r;
}
__attribute__((noinline)) static int down(int depth, unsigned path, int level)
{
    if (depth <= 1)
        return pair();
    if (level < BRANCH_LEVELS) {
        int r = (path >> level & 1) ? right(depth, path, level) : left(depth, path, level);
        sink++;
        return r;
    }
    int r = down(depth - 1, path, level);
    sink++;
    return r;
}

static double many_stacks(int depth, long n)
{
    for (long i = 0; i < WARMUP; i++)
        if (down(depth, (unsigned)(i % MANY_STACKS), 0) < 0)
            return -1;
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        if (down(depth, (unsigned)(i % MANY_STACKS), 0) < 0)
            return -1;
    return (now_ns() - t0) / (double)n;
}

/* The figure goes to a file: heaptrack writes to the program's stdout. */
static int child(const char *mode, const char *libcuda, int depth, int stacks, long n, const char *result)
{
    use_heap = strcmp(mode, "malloc") == 0;
    if (!use_heap && bench_load_driver("shim_bench", libcuda, &mem_alloc, &mem_free) < 0)
        return 1;
    double ns = stacks > 1 ? many_stacks(depth, n) : at_depth(depth, n);
    if (ns < 0) {
        fprintf(stderr, "shim_bench: allocation failed\n");
        return 1;
    }
    FILE *f = fopen(result, "w");
    if (!f || fprintf(f, "%.1f\n", ns) < 0 || fclose(f) != 0) {
        perror(result);
        return 1;
    }
    return 0;
}

struct ctx {
    char self[PATH_MAX], shim[PATH_MAX], driver[PATH_MAX], fake[PATH_MAX], dir[256], result[300], out[300];
    long pairs;
};

static double children_cpu_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) * 1e9 +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e3;
}

/* One child run under `prefix` (env settings or a tracer); ns per pair, or -1; *whole:
 * the CPU time of all the processes of the run, per pair. */
static double measure(const struct ctx *c, const char *prefix, const char *mode, const char *driver, int depth,
                      int stacks, double *whole)
{
    char cmd[5 * PATH_MAX + 1024];
    snprintf(cmd, sizeof cmd, "%s '%s' run %s '%s' %d %d %ld '%s' >/dev/null 2>&1", prefix, c->self, mode, driver,
             depth, stacks, c->pairs, c->result);
    unlink(c->result);
    double ns = -1, before = children_cpu_ns();
    int status = system(cmd);
    *whole = (children_cpu_ns() - before) / (double)(c->pairs + WARMUP);
    if (status == 0) {
        FILE *f = fopen(c->result, "r");
        if (!f || fscanf(f, "%lf", &ns) != 1)
            ns = -1;
        if (f)
            fclose(f);
    }
    return ns;
}

static void remove_dir_files(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[600];
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    if (d)
        closedir(d);
}

struct series {
    double v[MAX_REPS];
    int n;
};

static double median(struct series *s)
{
    qsort(s->v, (size_t)s->n, sizeof *s->v, cmp_double);
    return s->n % 2 ? s->v[s->n / 2] : (s->v[s->n / 2 - 1] + s->v[s->n / 2]) / 2;
}

static void print_cost(const char *name, struct series *s)
{
    double m = median(s);
    printf("  %-16s %8.1f ns (%.1f to %.1f)", name, m, s->v[0], s->v[s->n - 1]);
}

/* heaptrack's preload library (HEAPTRACK_PRELOAD, or beside the heaptrack script). */
static int find_heaptrack(char *lib, size_t cap)
{
    const char *env = getenv("HEAPTRACK_PRELOAD");
    if (env && *env) {
        snprintf(lib, cap, "%s", env);
        return access(lib, R_OK) == 0;
    }
    FILE *f = popen("command -v heaptrack 2>/dev/null", "r");
    char script[PATH_MAX] = "", real[PATH_MAX];
    if (!f)
        return 0;
    if (!fgets(script, sizeof script, f))
        script[0] = 0;
    pclose(f);
    script[strcspn(script, "\n")] = 0;
    if (!script[0] || !realpath(script, real))
        return 0;
    char *slash = strrchr(real, '/');
    if (!slash)
        return 0;
    *slash = 0; /* .../bin */
    static const char *const rel[] = {"/../lib/heaptrack/libheaptrack_preload.so",
                                      "/../lib/x86_64-linux-gnu/heaptrack/libheaptrack_preload.so",
                                      "/../lib64/heaptrack/libheaptrack_preload.so"};
    for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
        snprintf(lib, cap, "%s%s", real, rel[i]);
        if (access(lib, R_OK) == 0)
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 8 && !strcmp(argv[1], "run"))
        return child(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]), atol(argv[6]), argv[7]);
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: %s LIBCULEAK BENCH_DRIVER [FAKE_LIBCUDA]\n", argv[0]);
        return 2;
    }
    static struct ctx c;
    ssize_t k = readlink("/proc/self/exe", c.self, sizeof c.self - 1);
    c.self[k > 0 ? k : 0] = 0;
    if (!realpath(argv[1], c.shim) || !realpath(argv[2], c.driver) || (argc == 4 && !realpath(argv[3], c.fake))) {
        perror("shim_bench");
        return 2;
    }
    snprintf(c.dir, sizeof c.dir, "/tmp/shim_bench.%d", (int)getpid());
    if (mkdir(c.dir, 0700) != 0) {
        perror(c.dir);
        return 2;
    }
    snprintf(c.result, sizeof c.result, "%s/result", c.dir);
    snprintf(c.out, sizeof c.out, "%s/rec.culeak", c.dir);
    const char *r = getenv("SHIM_BENCH_REPS");
    int reps = r && atoi(r) > 0 ? atoi(r) : 5;
    const char *np = getenv("SHIM_BENCH_PAIRS");
    c.pairs = np && atol(np) > 0 ? atol(np) : PAIRS;
    const char *tun = getenv("GLIBC_TUNABLES");
    char tunables[1024];
    snprintf(tunables, sizeof tunables, "%s%sglibc.malloc.mxfast=0", tun ? tun : "", tun && *tun ? ":" : "");
    setenv("GLIBC_TUNABLES", tunables, 1);
    reps = reps > MAX_REPS ? MAX_REPS : reps;
    char htlib[PATH_MAX];
    int heaptrack = find_heaptrack(htlib, sizeof htlib);

    static const struct { int depth, stacks; } shapes[] = {{8, 1}, {32, 1}, {64, 1}, {32, MANY_STACKS}};
    enum { NSHAPES = sizeof shapes / sizeof *shapes };
    static struct series shim[NSHAPES], fake[NSHAPES], heap[NSHAPES], ratio[NSHAPES], bytes[NSHAPES];
    static struct series shim_whole[NSHAPES], heap_whole[NSHAPES], ratio_whole[NSHAPES];
    char env[3 * PATH_MAX + 200], htpre[PATH_MAX + 600];
    /* Both keep up to 64 frames: heaptrack's limit, and culeak's CULEAK_DEPTH=64. */
    /* SHIM_BENCH_CULEAK=PATH/culeak: the program runs under `culeak record` instead, its
     * events in a ring the culeak process reads (whose CPU time is not the program's) */
    const char *rec = getenv("SHIM_BENCH_CULEAK");
    if (rec && *rec)
        snprintf(env, sizeof env, "env CULEAK_LIB='%s' CULEAK_DEPTH=64 '%s' record -o '%s' --", c.shim, rec, c.out);
    else
        snprintf(env, sizeof env, "env LD_PRELOAD='%s' CULEAK_OUTPUT='%s' CULEAK_DEPTH=64", c.shim, c.out);
    snprintf(htpre, sizeof htpre, "env LD_PRELOAD='%s' DUMP_HEAPTRACK_OUTPUT='%s/ht.raw'", htlib, c.dir);
    printf("CPU time per alloc+free pair (all threads): culeak on cuMemAlloc_v2+cuMemFree_v2 (bench\n"
           "driver, recording to a file), heaptrack's preload library on malloc+free (raw data to a file),\n"
           "both keeping up to 64 frames; %ld pairs, %d interleaved repetitions, median (min to max);\n"
           "\"whole\": the CPU time of all the run's processes, start-up and exit included, per pair\n",
           c.pairs, reps);
    if (!heaptrack)
        printf("(heaptrack is not installed: culeak only)\n");
    fflush(stdout);
    for (int rep = 0; rep < reps; rep++)
        for (int i = 0; i < NSHAPES; i++) {
            int d = shapes[i].depth, st = shapes[i].stacks;
            double base_whole, traced_whole, unused;
            double base = measure(&c, "", "cuda", c.driver, d, st, &base_whole);
            double traced = measure(&c, env, "cuda", c.driver, d, st, &traced_whole);
            struct stat sb;
            double b = stat(c.out, &sb) == 0 ? (double)sb.st_size / (2.0 * (double)(c.pairs + WARMUP)) : -1;
            unlink(c.out);
            if (base < 0 || traced < 0) {
                fprintf(stderr, "shim_bench: a run failed at depth %d\n", d);
                remove_dir_files(c.dir);
                rmdir(c.dir);
                return 1;
            }
            shim[i].v[shim[i].n++] = traced - base;
            shim_whole[i].v[shim_whole[i].n++] = traced_whole - base_whole;
            bytes[i].v[bytes[i].n++] = b;
            if (c.fake[0]) {
                double fbase = measure(&c, "", "cuda", c.fake, d, st, &unused);
                double ftraced = measure(&c, env, "cuda", c.fake, d, st, &unused);
                unlink(c.out);
                if (fbase >= 0 && ftraced >= 0)
                    fake[i].v[fake[i].n++] = ftraced - fbase;
            }
            if (heaptrack) {
                double hbase_whole, htraced_whole;
                double hbase = measure(&c, "", "malloc", "-", d, st, &hbase_whole);
                double htraced = measure(&c, htpre, "malloc", "-", d, st, &htraced_whole);
                remove_dir_files(c.dir);
                if (hbase >= 0 && htraced >= 0) {
                    heap[i].v[heap[i].n++] = htraced - hbase;
                    /* the ratio of runs next to each other, under the same load */
                    ratio[i].v[ratio[i].n++] = (traced - base) / (htraced - hbase);
                    heap_whole[i].v[heap_whole[i].n++] = htraced_whole - hbase_whole;
                    ratio_whole[i].v[ratio_whole[i].n++] =
                        (traced_whole - base_whole) / (htraced_whole - hbase_whole);
                }
            }
        }
    remove_dir_files(c.dir);
    rmdir(c.dir);
    for (int i = 0; i < NSHAPES; i++) {
        printf("depth %2d, %s\n", shapes[i].depth, shapes[i].stacks > 1 ? "100k distinct stacks" : "one stack");
        print_cost("culeak", &shim[i]);
        printf("  %.2f bytes/event\n", median(&bytes[i]));
        if (heap[i].n) {
            print_cost("heaptrack", &heap[i]);
            double m = median(&ratio[i]);
            printf("  culeak/heaptrack %.2f (%.2f to %.2f)\n", m, ratio[i].v[0], ratio[i].v[ratio[i].n - 1]);
        }
        print_cost("whole: culeak", &shim_whole[i]);
        printf("\n");
        if (heap_whole[i].n) {
            print_cost("whole: heaptrack", &heap_whole[i]);
            double m = median(&ratio_whole[i]);
            printf("  culeak/heaptrack %.2f (%.2f to %.2f)\n", m, ratio_whole[i].v[0],
                   ratio_whole[i].v[ratio_whole[i].n - 1]);
        }
        if (fake[i].n) {
            print_cost("culeak on the fake driver", &fake[i]);
            printf("\n");
        }
    }
    return 0;
}
