/* `culeak record -o FILE [--depth N] -- PROGRAM [ARGS]`: run a program under the shim,
 * writing a recording; exits with the program's own status. */
#include "commands.h"
#include "launch.h"

#include <stdio.h>
#include <string.h>

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
    int st = culeak_run_traced(argv + i, out, (int)depth);
    return st < 0 ? 127 : culeak_exit_code(st);
}
