/* A program's view of its own signal dispositions, printed before and after its first
 * allocation: /proc/self/status's SigIgn, then what sigaction, signal, sigset, sysv_signal
 * and ssignal read back for every signal (and siginterrupt's change). Then, as libraries
 * do, it installs a SIGTERM handler only where the current one is SIG_DFL, and raises
 * SIGTERM. The output must be the same with or
 * without culeak. With the argument "dfl-kill", it sets SIGTERM's default itself after
 * its first allocation and is killed by SIGTERM: culeak's handler still writes the
 * recording out first. */
#define _GNU_SOURCE
#include "cuda/culeak_cudart.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t handled;

static void on_term(int sig) { handled = sig; }

static const char *what(void (*h)(int))
{
    return h == SIG_DFL ? "DFL" : h == SIG_IGN ? "IGN" : h == on_term ? "on_term" : "another";
}

static void sig_ign(const char *when)
{
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "SigIgn:", 7))
            printf("%s %s", when, line);
    if (f)
        fclose(f);
}

static void view(const char *when)
{
    sig_ign(when);
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction old;
        memset(&old, 0, sizeof old);
        int r = sigaction(sig, NULL, &old);
        unsigned long mask = 0;
        for (int s = 1; s < 64; s++)
            if (r == 0 && sigismember(&old.sa_mask, s) == 1)
                mask |= 1ul << s;
        printf("%s %d: %d %s flags %#x mask %#lx\n", when, sig, r, r ? "-" : what(old.sa_handler),
               r ? 0 : (unsigned)old.sa_flags, mask);
    }
    /* signal() and sigset() read back through a change and its undoing */
    void (*was)(int) = signal(SIGHUP, SIG_IGN);
    printf("%s signal(SIGHUP) was %s\n", when, what(was));
    signal(SIGHUP, was);
    was = sigset(SIGQUIT, SIG_IGN);
    printf("%s sigset(SIGQUIT) was %s\n", when, what(was));
    sigset(SIGQUIT, was);
    /* System V's, as a strict ISO C program's signal() is (signal_strict.c) */
    was = sysv_signal(SIGINT, SIG_IGN);
    printf("%s sysv_signal(SIGINT) was %s\n", when, what(was));
    sysv_signal(SIGINT, was);
    was = ssignal(SIGABRT, SIG_IGN);
    printf("%s ssignal(SIGABRT) was %s\n", when, what(was));
    ssignal(SIGABRT, was);
    struct sigaction now;
    siginterrupt(SIGSEGV, 0); /* SA_RESTART on */
    sigaction(SIGSEGV, NULL, &now);
    printf("%s siginterrupt(SIGSEGV, 0): flags %#x\n", when, (unsigned)now.sa_flags);
    siginterrupt(SIGSEGV, 1);
}

int main(int argc, char **argv)
{
    void *p;
    if (argc > 1 && !strcmp(argv[1], "dfl-kill")) {
        if (cudaMalloc(&p, 4096) != cudaSuccess)
            return 1;
        signal(SIGTERM, SIG_DFL);
        raise(SIGTERM);
        return 1;
    }
    view("start");
    if (cudaMalloc(&p, 4096) != cudaSuccess || cudaFree(p) != cudaSuccess)
        return 1;
    view("traced");
    struct sigaction old;
    sigaction(SIGTERM, NULL, &old);
    if (old.sa_handler == SIG_DFL) { /* only where nobody handles it yet */
        struct sigaction sa = {.sa_handler = on_term};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, NULL);
    }
    raise(SIGTERM);
    printf("SIGTERM %s\n", handled ? "handled" : "not handled");
    return 0;
}
