/* `culeak check -- PROGRAM [ARGS]`: run a program headless under the shim, then report its
 * leaks grouped by call site. For CI: the exit status says whether anything leaked. */
#include "commands.h"
#include "launch.h"
#include "report.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int usage(FILE *f, int rc)
{
    fputs("usage: culeak check [--error-exitcode N] [--format text|json] [--group G] [--depth N]\n"
          "                    [--merge-processes] [--no-pool] [--skip GLOB] [--skip-function GLOB]\n"
          "                    [--output FILE] -- PROGRAM [ARGS]\n"
          "Runs PROGRAM (and the programs it starts) under libculeak.so and reports the GPU memory\n"
          "still allocated at exit, or when its context was destroyed or its device reset, grouped\n"
          "by call site with the full stack, then a line\n"
          "  LEAK SUMMARY: N bytes leaked in K allocations from S call sites\n"
          "Memory still held by a caching allocator (PyTorch, CuPy, XLA) is reported apart, not as\n"
          "a leak. When the program starts other traced processes (torchrun, mpirun), each one is\n"
          "reported apart, with its pid and rank; --merge-processes adds them up per call site.\n"
          "The report goes to stderr (or to --output FILE); the program's own output is\n"
          "left alone. --depth limits the frames recorded per stack; --skip GLOB adds modules to\n"
          "look through when finding call sites (also $CULEAK_SKIP_MODULES); --skip-function GLOB\n"
          "adds functions, or source files with a GLOB containing '/' (also $CULEAK_SKIP_FUNCTIONS;\n"
          "the CUDA runtime linked into a program, cuda*, libcudart_static_* and cuda_runtime.h,\n"
          "is looked through by default). --no-pool turns the frameworks' caching allocators off for\n"
          "the job, so every tensor is an allocation of its own.\n"
          "Exit status: N (--error-exitcode, default 1) when leaks were found, else the program's.\n",
          f);
    return rc;
}

static int not_hidden(const struct dirent *e) { return e->d_name[0] != '.'; }

/* Loads every recording in dir (one per traced process), then removes them. In name
 * order, so that the processes of a job come in the same order from run to run. */
/* Loads every recording of dir into m (and removes them); *damaged counts those cut off
 * or unreadable. Returns the number of files, -1 when dir cannot be read. */
static int load_dir(struct model *m, const char *dir, int *damaged)
{
    struct dirent **names;
    int n = scandir(dir, &names, not_hidden, alphasort);
    if (n < 0)
        return -1;
    for (int k = 0; k < n; k++) {
        char path[4096 + 256 + 2], err[512];
        snprintf(path, sizeof path, "%.4096s/%.256s", dir, names[k]->d_name);
        int r = model_load_file(m, path, err, sizeof err);
        if (r == 1)
            fprintf(stderr, "culeak: warning: %s\n", err);
        else if (r < 0)
            fprintf(stderr, "culeak: %s\n", err);
        *damaged += r != 0;
        unlink(path);
        free(names[k]);
    }
    free(names);
    rmdir(dir);
    return n;
}

int cmd_check(int argc, char **argv)
{
    long error_exit = 1, depth = 0;
    const char *format = "text", *output = NULL;
    char skip[4096] = "", skip_fn[4096] = "";
    struct report_options ro;
    report_options_init(&ro);
    int i = 1;
    for (; i < argc; i++) {
        const char *s = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(s, "--")) {
            i++;
            break;
        } else if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
            return usage(stdout, 0);
        } else if (!strcmp(s, "--merge-processes")) {
            ro.merge_processes = 1;
        } else if (!strcmp(s, "--no-pool")) { /* caching allocators off: culeak-record(1) */
            culeak_no_pool_env();
        } else if (!strcmp(s, "--error-exitcode") && more) {
            error_exit = culeak_parse_count(argv[++i]);
            if (error_exit < 0 || error_exit > 255) {
                fprintf(stderr, "culeak check: --error-exitcode takes 0 to 255\n");
                return 2;
            }
        } else if (!strcmp(s, "--format") && more) {
            format = argv[++i];
            if (strcmp(format, "text") && strcmp(format, "json")) {
                fprintf(stderr, "culeak check: --format takes text or json\n");
                return 2;
            }
        } else if (!strcmp(s, "--group") && more) {
            int g = model_group_by_name(argv[++i]);
            if (g < 0) {
                fprintf(stderr, "culeak check: --group takes site, function, file, module or stack\n");
                return 2;
            }
            ro.group = (enum model_group)g;
        } else if (!strcmp(s, "--depth") && more) {
            depth = culeak_parse_count(argv[++i]);
            if (depth < 1 || depth > 256) {
                fprintf(stderr, "culeak check: --depth takes 1 to 256\n");
                return 2;
            }
        } else if (!strcmp(s, "--skip") && more) {
            size_t n = strlen(skip);
            snprintf(skip + n, sizeof skip - n, "%s%s", n ? "," : "", argv[++i]);
        } else if (!strcmp(s, "--skip-function") && more) {
            size_t n = strlen(skip_fn);
            snprintf(skip_fn + n, sizeof skip_fn - n, "%s%s", n ? "," : "", argv[++i]);
        } else if ((!strcmp(s, "-o") || !strcmp(s, "--output")) && more) {
            output = argv[++i];
        } else if (s[0] == '-') {
            fprintf(stderr, "culeak check: unknown option %s\n", s);
            return usage(stderr, 2);
        } else {
            break;
        }
    }
    if (i >= argc)
        return usage(stderr, 2);
    int missing = culeak_check_program(argv[i]);
    if (missing)
        return missing;

    const char *tmp = getenv("TMPDIR");
    char dir[4096], file[4200];
    snprintf(dir, sizeof dir, "%s/culeak-check-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("culeak check: mkdtemp");
        return 2;
    }
    /* %p: each process of the program (children too) writes its own recording */
    snprintf(file, sizeof file, "%s/trace.%%p.culeak", dir);
    int st = culeak_run_traced(argv + i, file, (int)depth);
    int program_status = st < 0 ? 127 : culeak_exit_code(st);

    struct model_options mo = {.skip_modules = skip[0] ? skip : NULL, .skip_functions = skip_fn[0] ? skip_fn : NULL};
    struct model *m = model_new(&mo);
    if (!m)
        return 2;
    int damaged = 0;
    int loaded = load_dir(m, dir, &damaged);
    /* A recording that ends before its process did (killed with SIGKILL, or cut off:
     * a full disk) makes an incomplete report: check never passes on one. */
    int incomplete = damaged;
    for (int p = 0; p < model_process_count(m); p++) {
        const struct model_process *mp = model_process(m, p);
        if (!mp->exited && !mp->truncated && !mp->corrupt) {
            fprintf(stderr, "culeak: the recording of process %llu ends before the process did (killed with "
                            "SIGKILL, or the recording could not be written)\n",
                    (unsigned long long)mp->pid);
            incomplete++;
        }
    }
    if (incomplete && model_process_count(m) == 0) {
        fprintf(stderr, "culeak check: no recording could be read: no leak report\n");
        model_free(m);
        return 2;
    }
    if (loaded <= 0 || model_process_count(m) == 0) {
        /* nothing traced: the program made no CUDA call the shim saw (or did not start) */
        if (culeak_program_is_static(argv[i]))
            fprintf(stderr, "culeak: no recording was written: %s is statically linked, out of a preloaded "
                            "library's reach\n", argv[i]);
        else
            fprintf(stderr, "culeak: no recording was written: %s made no CUDA calls culeak saw\n", argv[i]);
        FILE *o = output ? fopen(output, "w") : stderr;
        if (o && !strcmp(format, "json"))
            fputs("{\"source\":\"leaks\",\"processes\":[],\"leaks\":[],\"cache\":[],\"summary\":{\"bytes\":0,"
                  "\"allocations\":0,\"sites\":0,\"reset_bytes\":0,\"reset_allocations\":0,\"cache_bytes\":0,"
                  "\"cache_allocations\":0,\"per_process\":[]}}\n", o);
        else if (o)
            fputs("LEAK SUMMARY: 0 bytes leaked in 0 allocations from 0 call sites\n", o);
        if (o && o != stderr)
            fclose(o);
        model_free(m);
        return program_status;
    }
    if (st >= 0)
        model_process_set_exit_status(m, 0, st);
    FILE *out = stderr;
    if (output && !(out = fopen(output, "w"))) {
        perror(output);
        out = stderr;
    }
    struct report_summary sum;
    int r = !strcmp(format, "json") ? report_json(out, m, &ro, &sum) : report_text(out, m, &ro, &sum);
    if (out != stderr)
        fclose(out);
    model_free(m);
    if (r != 0) {
        fprintf(stderr, "culeak: the report could not be made\n");
        return 2;
    }
    if (sum.allocations)
        return (int)error_exit;
    if (incomplete) {
        fprintf(stderr, "culeak check: %d recording%s incomplete: the report above may miss leaks\n", incomplete,
                incomplete == 1 ? " is" : "s are");
        return 2;
    }
    return program_status;
}
