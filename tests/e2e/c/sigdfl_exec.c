/* Runs argv[1...] with glibc's signals 32 and 33 at their default action, as from an
 * interactive shell (a parent that used posix_spawn leaves them ignored). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    struct {
        void *handler;
        unsigned long flags;
        void *restorer;
        unsigned long mask;
    } k = {(void *)SIG_DFL, 0, NULL, 0};
    for (int sig = 32; sig <= 33; sig++)
        if (syscall(SYS_rt_sigaction, sig, &k, NULL, sizeof k.mask) != 0)
            return 2;
    if (argc < 2)
        return 2;
    execvp(argv[1], argv + 1);
    perror(argv[1]);
    return 127;
}
