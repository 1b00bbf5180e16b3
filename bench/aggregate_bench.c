/* aggregate_bench: what an always-on recording costs. A synthetic training job keeps one
 * block live at each of 10,000 call sites (distinct stacks), then runs iterations of
 * 100 ms, each a mark, 5,000 allocations at sites taken in turn, all freed at the
 * iteration's end but one, which leaks: 100,000 events a second when the machine keeps
 * up, for SECONDS of wall time. Its driver is the one given: make bench gives the
 * stand-in whose calls do next to nothing (bench/bench_driver.c), so that the figures
 * are culeak's; the fake driver of the tests (tests/fakecuda) keeps every block in host
 * memory and costs some 15 us a call with 10,000 blocks live, far below the rate. It runs untraced, under `culeak record` and under `culeak
 * record --aggregate`, REPS times each, interleaved (load from other work falls on all of
 * them alike). Printed, median [lowest, highest] over the repetitions:
 *   - the events per second the job reached;
 *   - the recording's growth per hour (from its size, sampled every second from the
 *     second second to the last while the job ran), and what 24 hours make at that rate;
 *   - the recorder's resident memory (the culeak process that reads the ring and writes
 *     the file) at a quarter, half and the end of the run, and its highest;
 *   - the job's CPU per event (its own threads, so the recorder's work is apart), and the
 *     recorder's CPU per event;
 *   - `culeak report` on the last recordings: wall seconds and peak memory.
 * Judges nothing: the figures go to docs/performance.md.
 *
 *   aggregate_bench CULEAK LIBCUDA DIR [SECONDS [REPS]]          (make bench)
 *   aggregate_bench job LIBCUDA SECONDS RATE SITES RESULT        (the job, a child)
 */
#include "bench_driver.h"
#include "bench_time.h"
#include "cuda/culeak_cuda.h"
#include "culeak.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SITES 10000
#define RATE 100000          /* events per second */
#define ITER_NS 100000000ull /* an iteration: 100 ms */
#define BLOCK 256            /* bytes (the driver stand-in hands out blocks of up to 256) */
#define LEVELS 14            /* 2^14 paths >= SITES */
#define MAX_REPS 9
#define MAX_SAMPLES 4096

static CUresult (*mem_alloc)(CUdeviceptr *, size_t);
static CUresult (*mem_free)(CUdeviceptr);
static volatile int sink;

/* ---- the job ---- */

/* An allocation at the end of a path of LEVELS frames, left or right by the bits of
 * site: a call site (stack) of its own per site. */
__attribute__((noinline)) static CUdeviceptr down(unsigned site, int level);
__attribute__((noinline)) static CUdeviceptr left(unsigned site, int level)
{
    CUdeviceptr p = down(site, level + 1);
    sink++;
    return p;
}
__attribute__((noinline)) static CUdeviceptr right(unsigned site, int level)
{
    CUdeviceptr p = down(site, level + 1);
    sink += 2;
    return p;
}
__attribute__((noinline)) static CUdeviceptr down(unsigned site, int level)
{
    if (level == LEVELS) {
        CUdeviceptr p = 0;
        return mem_alloc(&p, BLOCK) == CUDA_SUCCESS ? p : 0;
    }
    CUdeviceptr p = (site >> level & 1) ? right(site, level) : left(site, level);
    sink++;
    return p;
}

static int job(const char *libcuda, double seconds, long rate, unsigned sites, const char *result)
{
    if (bench_load_driver("aggregate_bench", libcuda, &mem_alloc, &mem_free) < 0)
        return 1;
    CUdeviceptr *kept = calloc(sites, sizeof *kept);
    long per_iter = rate * (long)(ITER_NS / 1000000) / 1000 / 2; /* pairs */
    CUdeviceptr *act = calloc((size_t)per_iter, sizeof *act);
    if (!kept || !act)
        return 1;
    for (unsigned s = 0; s < sites; s++) /* the model: one block per site, for the whole run */
        if (!(kept[s] = down(s, 0)))
            return 1;
    double t0 = now(), c0 = bench_seconds(CLOCK_PROCESS_CPUTIME_ID);
    long events = 0;
    unsigned next_site = 0;
    for (long it = 0; now() - t0 < seconds; it++) {
        char label[32];
        snprintf(label, sizeof label, "iteration %ld", it + 1);
        culeak_mark(label);
        for (long i = 0; i < per_iter; i++) {
            if (!(act[i] = down(next_site, 0)))
                return 1;
            next_site = (next_site + 7919) % sites;
        }
        for (long i = 1; i < per_iter; i++) /* act[0] leaks */
            mem_free(act[i]);
        events += 2 * per_iter - 1;
        double due = t0 + (double)(it + 1) * (double)ITER_NS / 1e9, left_s = due - now();
        if (left_s > 0) {
            struct timespec ts = {(time_t)left_s, (long)((left_s - (double)(time_t)left_s) * 1e9)};
            nanosleep(&ts, NULL);
        }
    }
    double wall = now() - t0, cpu = bench_seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
    FILE *f = fopen(result, "w");
    if (!f || fprintf(f, "%ld %.6f %.6f\n", events, cpu, wall) < 0 || fclose(f) != 0)
        return 1;
    return 0;
}

/* ---- the runs ---- */

struct series {
    double v[MAX_REPS];
    int n;
};

static void add(struct series *s, double v)
{
    if (s->n < MAX_REPS)
        s->v[s->n++] = v;
}

static void print(const char *what, const struct series *s, double scale, const char *unit)
{
    double v[MAX_REPS];
    memcpy(v, s->v, sizeof v);
    qsort(v, (size_t)s->n, sizeof *v, cmp_double);
    if (!s->n) {
        printf("  %-44s -\n", what);
        return;
    }
    printf("  %-44s %10.1f %s  [%.1f, %.1f]\n", what, v[s->n / 2] / scale, unit, v[0] / scale, v[s->n - 1] / scale);
}

static long rss_kib(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

struct mode {
    const char *name;
    int traced, aggregate;
    struct series rate, bytes_hour, rss_q, rss_h, rss_end, rss_max, job_ns, rec_ns;
};

struct run_ctx {
    const char *culeak, *libcuda, *dir, *self;
    double seconds;
};

static void run_mode(const struct run_ctx *c, struct mode *m, const char *out)
{
    char result[PATH_MAX], secs[32], rate[32], sites[32];
    snprintf(result, sizeof result, "%s/result", c->dir);
    snprintf(secs, sizeof secs, "%g", c->seconds);
    snprintf(rate, sizeof rate, "%d", RATE);
    snprintf(sites, sizeof sites, "%d", SITES);
    unlink(out);
    unlink(result);
    double t0 = now();
    pid_t pid = fork();
    if (pid == 0) {
        const char *argv[16];
        int n = 0;
        if (m->traced) {
            argv[n++] = c->culeak;
            argv[n++] = "record";
            if (m->aggregate)
                argv[n++] = "--aggregate";
            argv[n++] = "-o";
            argv[n++] = out;
            argv[n++] = "--";
        }
        argv[n++] = c->self;
        argv[n++] = "job";
        argv[n++] = c->libcuda;
        argv[n++] = secs;
        argv[n++] = rate;
        argv[n++] = sites;
        argv[n++] = result;
        argv[n] = NULL;
        execv(argv[0], (char **)argv);
        _exit(127);
    }
    /* every second: the file's size and the recorder's memory */
    double st[MAX_SAMPLES];
    long sz[MAX_SAMPLES], rss[MAX_SAMPLES];
    int ns = 0, status = 0;
    struct rusage ru;
    for (;;) {
        pid_t w = wait4(pid, &status, WNOHANG, &ru);
        if (w == pid)
            break;
        if (ns < MAX_SAMPLES && m->traced) {
            st[ns] = now() - t0;
            sz[ns] = file_size(out);
            rss[ns] = rss_kib(pid);
            ns++;
        }
        sleep(1);
    }
    FILE *f = fopen(result, "r");
    long events = 0;
    double cpu = 0, wall = 0;
    if (!f || fscanf(f, "%ld %lf %lf", &events, &cpu, &wall) != 3 || !WIFEXITED(status) || WEXITSTATUS(status)) {
        fprintf(stderr, "aggregate_bench: the %s run failed (status %d)\n", m->name, status);
        if (f)
            fclose(f);
        return;
    }
    fclose(f);
    add(&m->rate, (double)events / wall);
    add(&m->job_ns, cpu * 1e9 / (double)events);
    if (!m->traced)
        return;
    double all_cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
                     (double)ru.ru_stime.tv_usec / 1e6;
    add(&m->rec_ns, (all_cpu - cpu) * 1e9 / (double)events); /* culeak's own (start-up included) */
    int first = 0;
    while (first < ns - 1 && st[first] < 2.0) /* start-up and the stacks' first sight */
        first++;
    /* up to the last sample while the job ran: the flush at its exit is no rate */
    double span = ns ? st[ns - 1] - st[first] : 0;
    if (ns > first + 1 && span > 1)
        add(&m->bytes_hour, (double)(sz[ns - 1] - sz[first]) / span * 3600.0);
    long mx = 0;
    for (int i = 0; i < ns; i++)
        mx = rss[i] > mx ? rss[i] : mx;
    if (ns) {
        add(&m->rss_q, (double)rss[ns / 4]);
        add(&m->rss_h, (double)rss[ns / 2]);
        add(&m->rss_end, (double)rss[ns - 1]);
        add(&m->rss_max, (double)mx);
    }
}

/* `culeak report FILE`: its wall seconds and peak resident memory (KiB). */
static void time_report(const struct run_ctx *c, const char *file, struct series *secs, struct series *kib)
{
    double t0 = now();
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        execl(c->culeak, c->culeak, "report", file, (char *)NULL);
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) == pid && WIFEXITED(status)) {
        add(secs, now() - t0);
        add(kib, (double)ru.ru_maxrss);
    }
}

int main(int argc, char **argv)
{
    if (argc == 7 && !strcmp(argv[1], "job"))
        return job(argv[2], atof(argv[3]), atol(argv[4]), (unsigned)atol(argv[5]), argv[6]);
    if (argc < 4) {
        fprintf(stderr, "usage: aggregate_bench CULEAK LIBCUDA DIR [SECONDS [REPS]]\n");
        return 2;
    }
    static char self[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    self[k > 0 ? k : 0] = 0;
    struct run_ctx c = {argv[1], argv[2], argv[3], self, argc > 4 ? atof(argv[4]) : 30};
    int reps = argc > 5 ? atoi(argv[5]) : 3;
    reps = reps < 1 ? 1 : reps > MAX_REPS ? MAX_REPS : reps;
    mkdir(c.dir, 0700);
    setenv("GLIBC_TUNABLES", "glibc.malloc.mxfast=0", 1);
    char full[PATH_MAX], agg[PATH_MAX];
    snprintf(full, sizeof full, "%s/full.culeak", c.dir);
    snprintf(agg, sizeof agg, "%s/aggregated.culeak", c.dir);
    static struct mode modes[3] = {{.name = "untraced"},
                                   {.name = "culeak record", .traced = 1},
                                   {.name = "culeak record --aggregate", .traced = 1, .aggregate = 1}};
    printf("aggregate_bench: a job of %d live call sites, %d events/s asked for (iterations of 100 ms: a mark,\n"
           "5,000 allocations freed at its end, one leaked), %g s per run, %d runs of each, interleaved;\n"
           "median [lowest, highest]\n",
           SITES, RATE, c.seconds, reps);
    fflush(stdout);
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < 3; i++)
            run_mode(&c, &modes[i], i == 2 ? agg : full);
    struct series rep_s[2] = {{{0}, 0}}, rep_k[2] = {{{0}, 0}};
    for (int r = 0; r < reps; r++) {
        time_report(&c, full, &rep_s[0], &rep_k[0]);
        time_report(&c, agg, &rep_s[1], &rep_k[1]);
    }
    for (int i = 0; i < 3; i++) {
        struct mode *m = &modes[i];
        printf("%s:\n", m->name);
        print("events per second reached", &m->rate, 1, "ev/s");
        print("job CPU per event", &m->job_ns, 1, "ns");
        if (!m->traced)
            continue;
        print("recorder CPU per event", &m->rec_ns, 1, "ns");
        print("recording per hour", &m->bytes_hour, 1 << 20, "MiB");
        struct series day = m->bytes_hour;
        for (int j = 0; j < day.n; j++)
            day.v[j] *= 24;
        print("recording per 24 hours (extrapolated)", &day, 1 << 30, "GiB");
        print("recorder memory at 1/4 of the run", &m->rss_q, 1024, "MiB");
        print("recorder memory at 1/2 of the run", &m->rss_h, 1024, "MiB");
        print("recorder memory at the end", &m->rss_end, 1024, "MiB");
        print("recorder memory, highest", &m->rss_max, 1024, "MiB");
        print("culeak report of the recording: wall", &rep_s[i - 1], 1, "s");
        print("culeak report of the recording: memory", &rep_k[i - 1], 1024, "MiB");
        printf("  %-44s %10.1f MiB\n", "size of the last recording", (double)file_size(i == 2 ? agg : full) / (1 << 20));
    }
    return 0;
}
