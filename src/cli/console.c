/* `culeak [OPTIONS] -- PROGRAM [ARGS]`: run a job under the shim inside the console. */
#include "commands.h"
#include "../console/console.h"
#include "../console/fmt.h"
#include "launch.h"

#include <stdio.h>
#include <string.h>

static int usage(FILE *f, int rc)
{
    fputs("usage: culeak [--depth N] [--snapshot-every SECONDS] [--snapshot-at-marks] [--no-pool]\n"
          "              -- PROGRAM [ARGS]\n"
          "Runs PROGRAM (and every process it starts) under libculeak.so and opens the console:\n"
          "live and peak GPU memory per call site, snapshots and diffs, and breakpoints that\n"
          "pause the job inside the allocation that makes a site grow. --no-pool turns the\n"
          "frameworks' caching allocators off (see culeak-record). Type help inside.\n",
          f);
    return rc;
}

int cmd_console(int argc, char **argv)
{
    struct console_options opt = {0};
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else if (strcmp(argv[i], "--depth") == 0 && i + 1 < argc) {
            long d = culeak_parse_count(argv[++i]);
            if (d < 1 || d > 256) {
                fprintf(stderr, "culeak: --depth takes 1 to 256\n");
                return 2;
            }
            opt.depth = (int)d;
        } else if (strcmp(argv[i], "--snapshot-every") == 0 && i + 1 < argc) {
            if (parse_seconds(argv[++i], &opt.snapshot_every) != 0 || opt.snapshot_every <= 0) {
                fprintf(stderr, "culeak: --snapshot-every takes seconds (e.g. 5, 2.5s, 1m)\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--no-pool") == 0) {
            culeak_no_pool_env();
        } else if (strcmp(argv[i], "--snapshot-at-marks") == 0) {
            opt.snapshot_at_marks = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            return usage(stdout, 0);
        } else {
            fprintf(stderr, "culeak: unknown option %s\n", argv[i]);
            return usage(stderr, 2);
        }
    }
    if (i >= argc)
        return usage(stderr, 2);
    int missing = culeak_check_program(argv[i]);
    if (missing)
        return missing;
    if (!culeak_shim_path()) {
        fprintf(stderr, "culeak: cannot find libculeak.so (next to the culeak executable, in ../lib/culeak, "
                        "or named by CULEAK_LIB)\n");
        return 1;
    }
    opt.argv = argv + i;
    return console_main(&opt);
}
