/* A program built for strict ISO C (-std=c11, no feature macros), where <signal.h> makes
 * signal() glibc's System V __sysv_signal: after its first allocation it installs a
 * SIGTERM handler and prints what signal() said was there, SIG_DFL untraced. */
#include "cuda/culeak_cudart.h"

#include <signal.h>
#include <stdio.h>

static void on_term(int sig) { (void)sig; }

int main(void)
{
    void *p;
    if (cudaMalloc(&p, 4096) != cudaSuccess || cudaFree(p) != cudaSuccess)
        return 1;
    void (*was)(int) = signal(SIGTERM, on_term);
    printf("signal(SIGTERM) was %s\n", was == SIG_DFL ? "SIG_DFL" : was == SIG_IGN ? "SIG_IGN" : "a handler");
    return 0;
}
