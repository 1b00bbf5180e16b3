/* A job whose second traced process gets the pid of its first, as a long job's do once
 * pid_max wraps (tests/e2e/pid_again.sh, run in a pid namespace of its own):
 *   pid_again SIZE1 SIZE2   a child leaks SIZE1 bytes and ends; the next pid is set back
 *                           (ns_last_pid) so the second child, leaking SIZE2, has the
 *                           first one's pid. Exits 0; 3 when the pid could not be reused. */
#include "driver_calls.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int leak_one(void *cuda, size_t size)
{
    driver_fn alloc = driver_start(cuda);
    unsigned long long d;
    return !alloc || alloc(&d, size);
}

static pid_t run_child(void *cuda, size_t size)
{
    pid_t pid = fork();
    if (pid == 0)
        exit(leak_one(cuda, size));
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return -1;
    return pid;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
    if (!cuda)
        return 1;
    pid_t first = run_child(cuda, (size_t)atol(argv[1]));
    if (first < 0)
        return 1;
    FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
    if (!f || fprintf(f, "%d", (int)first - 1) < 0 || fclose(f) != 0)
        return 3;
    pid_t second = run_child(cuda, (size_t)atol(argv[2]));
    if (second < 0)
        return 1;
    printf("pid_again: %d and %d\n", (int)first, (int)second);
    return second == first ? 0 : 3;
}
