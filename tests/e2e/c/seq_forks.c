/* A job of many traced processes one after another, for the tests of jobs that outgrow
 * culeak's tables (tests/e2e/console_many.sh, check_many.sh):
 *   seq_forks N SIZE   forks N children in turn, each started when the one before has
 *                      ended; each initialises CUDA (the parent only loads it), leaks one
 *                      block of SIZE bytes and exits 0. Exits 0 once all have, else 1.
 * Forks, not a shell loop of programs: the same hand-over of a ring per process at a
 * fraction of an exec's cost, so thousands run in seconds. */
#include "driver_calls.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int leak_one(void *cuda, size_t size)
{
    driver_fn alloc = driver_start(cuda);
    unsigned long long d;
    return !alloc || alloc(&d, size);
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    long n = atol(argv[1]);
    size_t size = (size_t)atol(argv[2]);
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW); /* loaded once; no call before the fork */
    if (!cuda)
        return 1;
    for (long i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0)
            exit(leak_one(cuda, size));
        int st;
        if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            return 1;
    }
    return 0;
}
