/* The cross-rank view at scale (not a test): RANKS recordings of EVENTS events each (by
 * default 1,024 of 1M), eight ranks a host, one rank growing 64 MiB an iteration, made by
 * bench/gen_recording.c as DIR/host-N/RANK.culeak; then `culeak report DIR` RUNS times:
 * wall, CPU and peak RSS as median and range, the line that names the rank, and the peak
 * RSS of reading one recording alone (the view keeps a model per thread, one per core).
 * When the disk has not room for all of them (a recording of 1M events is ~14 MB), as many
 * as fit in half the free space are made, and the time for RANKS is extrapolated.
 *     ranks_bench CULEAK GEN_RECORDING DIR [RANKS [EVENTS [RUNS]]]
 * DIR is made and removed again. */
#include "bench_time.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MAX_RUNS 15
#define GROWING 13 /* the rank that leaks (the last one when there are fewer) */

static pid_t spawn(char **argv, const char *out)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid;
    int e = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e) {
        fprintf(stderr, "ranks_bench: %s: %s\n", argv[0], strerror(e));
        return -1;
    }
    return pid;
}

/* Runs argv: 0 with its wall and CPU seconds and peak RSS (MiB). */
static int run(char **argv, const char *out, double *wall, double *cpu, double *rss_mib)
{
    double t0 = now();
    pid_t pid = spawn(argv, out);
    int st;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st) > 1) {
        fprintf(stderr, "ranks_bench: %s failed\n", argv[0]);
        return -1;
    }
    *wall = now() - t0;
    *cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
    *rss_mib = (double)ru.ru_maxrss / 1024.0;
    return 0;
}

static void spread(const char *what, double *v, int n, const char *unit)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    printf("  %-9s median %.2f %s (%.2f to %.2f, %d runs)\n", what, v[n / 2], unit, v[0], v[n - 1], n);
}

static void path_of(char *buf, size_t len, const char *dir, long r)
{
    snprintf(buf, len, "%s/host-%03ld/%ld.culeak", dir, r / 8, r);
}

/* Recording r, gen_recording started (not waited for). */
static pid_t generate(const char *gen, const char *dir, long r, long ranks, unsigned long long events)
{
    char sub[4200], file[4300], e[32], rank[32], host[32];
    snprintf(sub, sizeof sub, "%s/host-%03ld", dir, r / 8);
    mkdir(sub, 0700);
    path_of(file, sizeof file, dir, r);
    snprintf(e, sizeof e, "%llu", events);
    snprintf(rank, sizeof rank, "%ld", r);
    snprintf(host, sizeof host, "host-%03ld", r / 8);
    long growing = ranks > GROWING ? GROWING : ranks - 1;
    char *argv[] = {(char *)gen, "-e", e, "-r", rank, "-H", host, "-g", r == growing ? "67108864" : "0",
                    "-o", file, NULL};
    return spawn(argv, NULL);
}

/* Recordings [from, to) made, ncpu at a time: 0 or -1. */
static int generate_all(const char *gen, const char *dir, long from, long to, long ranks, unsigned long long events)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN), running = 0, next = from;
    int rc = 0;
    while (next < to || running) {
        while (next < to && running < (ncpu > 0 ? ncpu : 1)) {
            if (generate(gen, dir, next++, ranks, events) < 0)
                return -1;
            running++;
        }
        int st;
        if (wait(&st) < 0)
            break;
        running--;
        if (!WIFEXITED(st) || WEXITSTATUS(st))
            rc = -1;
    }
    return rc;
}

static void remove_all(const char *dir, long made)
{
    char file[4300];
    for (long r = 0; r < made; r++) {
        path_of(file, sizeof file, dir, r);
        unlink(file);
        if (r % 8 == 7 || r == made - 1) {
            *strrchr(file, '/') = 0;
            rmdir(file);
        }
    }
    char out[4300];
    snprintf(out, sizeof out, "%s.out", dir);
    unlink(out);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: ranks_bench CULEAK GEN_RECORDING DIR [RANKS [EVENTS [RUNS]]]\n");
        return 2;
    }
    const char *culeak = argv[1], *gen = argv[2], *dir = argv[3];
    long ranks = argc > 4 ? atol(argv[4]) : 1024;
    unsigned long long events = argc > 5 ? strtoull(argv[5], NULL, 10) : 1000000ull;
    int runs = argc > 6 ? atoi(argv[6]) : 3;
    runs = runs < 1 ? 1 : runs > MAX_RUNS ? MAX_RUNS : runs;
    if (ranks < 2 || mkdir(dir, 0700) != 0) {
        fprintf(stderr, "ranks_bench: %s: %s\n", dir, ranks < 2 ? "two ranks at least" : strerror(errno));
        return 1;
    }
    /* the first recording tells the size of all */
    double t0 = now();
    if (generate_all(gen, dir, 0, 1, ranks, events) != 0) {
        remove_all(dir, 1);
        return 1;
    }
    char first[4300];
    path_of(first, sizeof first, dir, 0);
    struct stat st;
    struct statvfs vfs;
    long made = ranks;
    if (stat(first, &st) == 0 && statvfs(dir, &vfs) == 0) {
        double room = (double)vfs.f_bavail * (double)vfs.f_frsize / 2;
        if ((double)st.st_size * (double)ranks > room)
            made = (long)(room / (double)st.st_size);
        if (made < 2)
            made = 2;
    }
    if (generate_all(gen, dir, 1, made, ranks, events) != 0) {
        remove_all(dir, made);
        return 1;
    }
    printf("culeak report of %ld recordings of %llu events (%.1f GB; made in %.0f s), 8 ranks a host, rank %ld "
           "growing:\n",
           made, events, (double)st.st_size * (double)made / 1e9, now() - t0,
           made > GROWING ? (long)GROWING : made - 1);
    if (made < ranks)
        printf("  (room on disk for %ld of the %ld recordings asked: the time for %ld is extrapolated)\n", made, ranks,
               ranks);
    double wall[MAX_RUNS], cpu[MAX_RUNS], rss[MAX_RUNS];
    char out[4300];
    snprintf(out, sizeof out, "%s.out", dir);
    char *rep[] = {(char *)culeak, "report", (char *)dir, NULL};
    int rc = 0;
    for (int r = 0; r < runs && rc == 0; r++)
        rc = run(rep, out, &wall[r], &cpu[r], &rss[r]);
    if (rc == 0) {
        spread("wall", wall, runs, "s");
        spread("CPU", cpu, runs, "s");
        spread("peak RSS", rss, runs, "MiB");
        if (made < ranks)
            printf("  %ld recordings at this pace: ~%.0f s\n", ranks, wall[runs / 2] * (double)ranks / (double)made);
        FILE *f = fopen(out, "r");
        char line[1024];
        while (f && fgets(line, sizeof line, f))
            if (strstr(line, " grows ") && strstr(line, " per iteration in ")) {
                printf("  the report: %s", line);
                break;
            }
        if (f)
            fclose(f);
        double w, c, r1;
        char *one[] = {(char *)culeak, "report", first, NULL};
        if (run(one, NULL, &w, &c, &r1) == 0)
            printf("  one recording alone: peak RSS %.1f MiB, wall %.2f s; the view reads one per core (%ld here)\n",
                   r1, w, sysconf(_SC_NPROCESSORS_ONLN));
    }
    fflush(stdout);
    remove_all(dir, made);
    return rc ? 1 : 0;
}
