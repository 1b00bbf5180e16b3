/* Starting a program under the shim. */
#ifndef CULEAK_LAUNCH_H
#define CULEAK_LAUNCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Path of libculeak.so: $CULEAK_LIB, else next to this executable, else
 * <exe dir>/../lib/culeak/libculeak.so (installed layout). NULL if none exists. */
const char *culeak_shim_path(void);

/* Path of culeak's default suppressions (default.supp, culeak-suppressions(5)), the data
 * file culeak_data_file finds: installed (make install, the wheel) and in the source tree
 * beside a build directory alike. NULL if there is none. */
const char *culeak_default_suppressions_path(void);
/* A file culeak ships, NAME relative to its data directory <exe dir>/../share/culeak: the
 * same place in the installed layout, the wheel's package and the source tree beside
 * build/ (share/culeak/). Its path into path[len]: 0, or -1 when there is no such file. */
int culeak_data_file(const char *name, char *path, size_t len);

/* Sets LD_PRELOAD (prepending the shim to what is there) and the CULEAK_* variables
 * for a child about to exec; also NVTX_INJECTION64_PATH (the shim, unless set) and
 * PYTHONPATH (prepends the directory of culeak.py, when found). depth <= 0 keeps the shim's default.
 * Removes CULEAK_HOLD_AT_START: only the console's launch, which answers, sets it. Returns 0, or -1
 * with a message on stderr when the shim cannot be found. */
int culeak_setenv_for_child(const char *output_file, int depth);

/* --no-pool: sets the environment that turns the frameworks' caching allocators off for
 * the job, so every tensor is its own allocation with its own stack:
 * PYTORCH_NO_CUDA_MEMORY_CACHING=1, XLA_PYTHON_CLIENT_PREALLOCATE=false,
 * XLA_PYTHON_CLIENT_ALLOCATOR=platform, and CULEAK_NO_POOL=1 (CuPy has no such variable:
 * the program calls culeak.no_pool(), or cupy.cuda.set_allocator(None), itself). */
void culeak_no_pool_env(void);

/* fork+exec argv[0] (searched in PATH) with the environment set up as above; waits.
 * Returns the wait status, or -1 (message on stderr) when it could not start. */
int culeak_run_traced(char **argv, const char *output_file, int depth);
/* What culeak_run_traced_job tells of the run besides its wait status. */
struct culeak_run {
    long pid;                 /* the started program's; -1 when it did not start */
    unsigned long unrecorded; /* the job's processes that could not be recorded (each said
                               * on stderr, with its pid and why) */
};
/* The same, saying what *run holds. */
int culeak_run_traced_job(char **argv, const char *output_file, int depth, struct culeak_run *run);

/* The recordings the next culeak_run_traced_* writes are aggregated at interval_ns
 * (culeak_collector_aggregate); 0: full recordings (the default). */
void culeak_launch_aggregate(uint64_t interval_ns);
uint64_t culeak_launch_aggregated(void); /* the interval set, or 0 */
/* The same, with tap (collect.h) reading the rings beside the recordings (NULL: none), and
 * each recording rolled into parts at roll's boundaries (roll.h; NULL: one file). */
struct culeak_collect_tap;
struct culeak_roll_opts;
int culeak_run_traced_tap(char **argv, const char *output_file, int depth, struct culeak_run *run,
                          const struct culeak_collect_tap *tap, const struct culeak_roll_opts *roll);

/* Whether prog can be run as execvp would find it (a name without '/' is searched in
 * PATH): 0, or the status a shell gives with a message as a shell prints it on stderr
 * ("culeak: cannot run PROG: REASON"): 127 when there is no such program, 126 when it is
 * not executable (a directory, no permission). */
int culeak_check_program(const char *prog);

/* A recording's path made absolute here, before the job starts (the job may chdir before
 * its first CUDA call), into abs. 0, or -1 (errno set). */
int culeak_absolute_path(const char *path, char *abs, size_t len);

/* 1 when prog (found as culeak_check_program finds it) is a statically linked ELF
 * program: no dynamic loader, so LD_PRELOAD, and the shim, never reach it. */
int culeak_program_is_static(const char *prog);

/* 1 when prog (found as above) runs with AT_SECURE (secure_exec.h): the loader ignores
 * LD_PRELOAD for it, so nothing of it is traced. The reason in why[len]. */
int culeak_program_is_secure(const char *prog, char *why, size_t len);

/* Exit status of a shell for a wait status: the code, or 128+signal. */
int culeak_exit_code(int wstatus);

#endif
