/* `culeak record -o FILE [--depth N] -- PROGRAM [ARGS]`: run a program under the shim,
 * writing a recording; exits with the program's own status. */
#include "commands.h"
#include "launch.h"
#include "wire.h"

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int usage(FILE *f, int rc)
{
    fputs("usage: culeak record -o FILE [--depth N] [--no-pool] -- PROGRAM [ARGS]\n"
          "Runs PROGRAM under libculeak.so and writes every allocation, free and mark to FILE\n"
          "(%p in FILE expands to the pid, %h to the host, %r to the rank, so every process\n"
          "of a job writes its own file). --no-pool turns the caching allocators of PyTorch and\n"
          "JAX off (and CuPy's, where the program calls culeak.no_pool()). Exit status: the program's.\n",
          f);
    return rc;
}

/* The processes of a job never overwrite an existing file (the others write FILE.PID),
 * so an earlier run's FILE and FILE.PID recordings go first: this run's first process
 * takes FILE. Only files named so that begin with culeak's magic are removed. */
static int remove_earlier_run(const char *out)
{
    if (unlink(out) != 0 && errno != ENOENT) {
        fprintf(stderr, "culeak record: cannot replace %s: %s\n", out, strerror(errno));
        return -1;
    }
    char pattern[PATH_MAX + 16];
    snprintf(pattern, sizeof pattern, "%s.[0-9]*", out);
    glob_t g;
    if (glob(pattern, GLOB_NOSORT, NULL, &g) != 0)
        return 0;
    for (size_t k = 0; k < g.gl_pathc; k++) {
        const char *suffix = g.gl_pathv[k] + strlen(out) + 1;
        if (strspn(suffix, "0123456789") != strlen(suffix))
            continue;
        char magic[CULEAK_MAGIC_LEN];
        FILE *f = fopen(g.gl_pathv[k], "rb");
        int ours = f && fread(magic, 1, sizeof magic, f) == sizeof magic &&
                   memcmp(magic, CULEAK_MAGIC, sizeof magic) == 0;
        if (f)
            fclose(f);
        if (ours)
            unlink(g.gl_pathv[k]);
    }
    globfree(&g);
    return 0;
}

int cmd_record(int argc, char **argv)
{
    const char *out = NULL;
    long depth = 0;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) && i + 1 < argc) {
            out = argv[++i];
        } else if (strcmp(argv[i], "--depth") == 0 && i + 1 < argc) {
            depth = culeak_parse_count(argv[++i]);
            if (depth < 1 || depth > 256) {
                fprintf(stderr, "culeak record: --depth takes 1 to 256\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--no-pool") == 0) {
            culeak_no_pool_env();
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            return usage(stdout, 0);
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "culeak record: unknown option %s\n", argv[i]);
            return usage(stderr, 2);
        } else {
            break;
        }
    }
    if (!out || i >= argc)
        return usage(stderr, 2);
    char abs_out[PATH_MAX];
    if (culeak_output_path(out, abs_out, sizeof abs_out) != 0)
        return 1;
    out = abs_out;
    int missing = culeak_check_program(argv[i]);
    if (missing)
        return missing;
    if (!strchr(out, '%') && remove_earlier_run(out) != 0)
        return 1;
    setenv("CULEAK_OUTPUT_EXCL", "1", 1); /* no process of the job overwrites another's file */
    int st = culeak_run_traced(argv + i, out, (int)depth);
    return st < 0 ? 127 : culeak_exit_code(st);
}
