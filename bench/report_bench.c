/* Reading at scale (not a test): `culeak report` of synthetic recordings made by
 * bench/gen_recording.c, its wall time, CPU time and peak RSS as the median and range
 * of several runs. Three shapes: one process of many events (100M by default), and a job
 * of many processes (10,000 recordings of 100 events each), whose processes run code of
 * their own (no stack of one is another's), or the same code (a job's workers).
 *     report_bench CULEAK GEN_RECORDING DIR [EVENTS [PROCESSES [RUNS]]]
 * DIR is made, filled and emptied again; EVENTS 0 or PROCESSES 0 skips that shape. */
#include "bench_time.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define MAX_RUNS 15

/* Runs argv with stdout to /dev/null: 0 with its wall and CPU seconds and peak RSS (MiB). */
static int run(char **argv, double *wall, double *cpu, double *rss_mib)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    double t0 = now();
    int e = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (e) {
        fprintf(stderr, "report_bench: %s: %s\n", argv[0], strerror(e));
        return -1;
    }
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st) > 1) {
        fprintf(stderr, "report_bench: %s failed (status %d)\n", argv[0], st);
        return -1;
    }
    *wall = now() - t0;
    *cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
    *rss_mib = (double)ru.ru_maxrss / 1024.0;
    return 0;
}

static void print_spread(const char *what, double *v, int n, const char *unit)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    printf("  %-9s median %.2f %s (%.2f to %.2f, %d runs)\n", what, v[n / 2], unit, v[0], v[n - 1], n);
}

/* culeak report FILES... RUNS times, the figures printed under title. */
static int measure(const char *title, char **argv, int runs)
{
    double wall[MAX_RUNS], cpu[MAX_RUNS], rss[MAX_RUNS];
    for (int r = 0; r < runs; r++)
        if (run(argv, &wall[r], &cpu[r], &rss[r]) != 0)
            return -1;
    printf("culeak report of %s:\n", title);
    print_spread("wall", wall, runs, "s");
    print_spread("CPU", cpu, runs, "s");
    print_spread("peak RSS", rss, runs, "MiB");
    fflush(stdout);
    return 0;
}

static int generate(const char *gen, const char *file, unsigned long long events, unsigned long long procs,
                    int same_code)
{
    char e[32], p[32];
    snprintf(e, sizeof e, "%llu", events);
    snprintf(p, sizeof p, "%llu", procs);
    char *argv[] = {(char *)gen, "-e", e, "-p", p, "-s", procs > 1 ? "20" : "1000", "-l", procs > 1 ? "2" : "10000",
                    "-o", (char *)file, same_code ? "-c" : NULL, NULL};
    double w, c, r;
    return run(argv, &w, &c, &r);
}

static void empty_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char path[4200];
    while (d && (de = readdir(d)))
        if (de->d_name[0] != '.') {
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            unlink(path);
        }
    if (d)
        closedir(d);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: report_bench CULEAK GEN_RECORDING DIR [EVENTS [PROCESSES [RUNS]]]\n");
        return 2;
    }
    const char *culeak = argv[1], *gen = argv[2], *dir = argv[3];
    unsigned long long events = argc > 4 ? strtoull(argv[4], NULL, 10) : 100000000ull;
    unsigned long long procs = argc > 5 ? strtoull(argv[5], NULL, 10) : 10000;
    int runs = argc > 6 ? atoi(argv[6]) : 3;
    runs = runs < 1 ? 1 : runs > MAX_RUNS ? MAX_RUNS : runs;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "report_bench: %s: %s\n", dir, strerror(errno));
        return 1;
    }
    empty_dir(dir);
    char file[4200], title[128];
    snprintf(file, sizeof file, "%s/r.culeak", dir);
    int rc = 0;
    if (events) {
        struct stat st;
        if (generate(gen, file, events, 1, 0) != 0 || stat(file, &st) != 0)
            return 1;
        snprintf(title, sizeof title, "%llu events of one process (%.2f GB, 10000 live at most)", events,
                 (double)st.st_size / 1e9);
        char *rep[] = {(char *)culeak, "report", file, NULL};
        rc |= measure(title, rep, runs);
        empty_dir(dir);
    }
    for (int same = 0; procs && same < 2; same++) {
        if (generate(gen, file, 100, procs, same) != 0)
            return 1;
        char **rep = calloc(procs + 3, sizeof *rep);
        rep[0] = (char *)culeak;
        rep[1] = "report";
        rep[2] = file;
        for (unsigned long long p = 1; p < procs; p++) {
            char name[4300];
            snprintf(name, sizeof name, "%s.%llu", file, 100000 + p);
            rep[2 + p] = strdup(name);
        }
        snprintf(title, sizeof title, "%llu processes (a recording each, 100 events, 2 leaks; %s)", procs,
                 same ? "the same code" : "code of their own");
        rc |= measure(title, rep, runs);
        for (unsigned long long p = 1; p < procs; p++)
            free(rep[2 + p]);
        free(rep);
        empty_dir(dir);
    }
    rmdir(dir);
    return rc ? 1 : 0;
}
