/* The program's view of its own signal dispositions. Where the program left a fatal
 * signal at its default action, culeak's handler stands in for it (abrupt_end.c: the
 * stream is written out, then the default action kills the process as it would have).
 * sigaction, signal, bsd_signal, ssignal, sysv_signal, sigset and siginterrupt read back
 * for such a signal what the program last set (or the default), never culeak's handler:
 * code that installs its own handler only where none is there yet behaves as untraced.
 * A handler or SIG_IGN the program sets replaces culeak's; a default it sets is noted as
 * the kernel stores it, and culeak's handler goes back in its place. Async-signal-safe,
 * as sigaction is. */
#include "shim.h"

#include <dlfcn.h>
#include <signal.h>
#include <string.h>

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef void (*handler_fn)(int);

static sigaction_fn real_ptr;
static int owned[NSIG];               /* culeak's handler stands for the default */
static struct sigaction shown[NSIG];  /* what the program reads back there */
static struct sigaction ours[NSIG];   /* culeak's handler, to put back */

int culeak_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    sigaction_fn f = __atomic_load_n(&real_ptr, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (sigaction_fn)culeak_real_dlsym(RTLD_NEXT, "sigaction");
        if (!f)
            return -1;
        __atomic_store_n(&real_ptr, f, __ATOMIC_RELEASE);
    }
    return f(sig, act, old);
}

/* Resolved at load: dlsym is not async-signal-safe, and a handler may call sigaction. */
__attribute__((constructor)) static void resolve_sigaction(void) { culeak_real_sigaction(0, NULL, NULL); }

int culeak_signal_take(int sig, const struct sigaction *handler)
{
    struct sigaction old;
    if (sig <= 0 || sig >= NSIG || culeak_real_sigaction(sig, NULL, &old) != 0 ||
        (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
        return -1; /* the program's own handler or SIG_IGN: left alone */
    shown[sig] = old;
    ours[sig] = *handler;
    __atomic_store_n(&owned[sig], 1, __ATOMIC_RELEASE);
    if (culeak_real_sigaction(sig, handler, NULL) != 0) {
        __atomic_store_n(&owned[sig], 0, __ATOMIC_RELEASE);
        return -1;
    }
    return 0;
}

static int is_default(const struct sigaction *act)
{
    return !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL;
}

CULEAK_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (sig <= 0 || sig >= NSIG || !__atomic_load_n(&owned[sig], __ATOMIC_ACQUIRE))
        return culeak_real_sigaction(sig, act, old);
    struct sigaction was = shown[sig];
    if (act && is_default(act)) {
        /* stored and read back as the kernel keeps it (libc adds its restorer) */
        struct sigaction now;
        if (culeak_real_sigaction(sig, act, NULL) != 0 || culeak_real_sigaction(sig, NULL, &now) != 0)
            return -1;
        shown[sig] = now;
        culeak_real_sigaction(sig, &ours[sig], NULL);
    } else if (act) {
        __atomic_store_n(&owned[sig], 0, __ATOMIC_RELEASE);
        if (culeak_real_sigaction(sig, act, NULL) != 0) {
            __atomic_store_n(&owned[sig], 1, __ATOMIC_RELEASE);
            return -1;
        }
    }
    if (old)
        *old = was;
    return 0;
}

/* signal and bsd_signal as glibc's: BSD semantics (restarted calls, the signal blocked
 * in its handler). libc's own call sigaction inside libc, past the one above. */
CULEAK_EXPORT handler_fn signal(int sig, handler_fn h)
{
    static handler_fn real_signal;
    if (sig <= 0 || sig >= NSIG || !__atomic_load_n(&owned[sig], __ATOMIC_ACQUIRE)) {
        handler_fn (*f)(int, handler_fn) = NULL;
        if (!real_signal)
            real_signal = (handler_fn)culeak_real_dlsym(RTLD_NEXT, "signal");
        memcpy(&f, &real_signal, sizeof f);
        return f ? f(sig, h) : SIG_ERR;
    }
    struct sigaction sa = {.sa_handler = h, .sa_flags = SA_RESTART}, old;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, sig);
    return sigaction(sig, &sa, &old) == 0 ? old.sa_handler : SIG_ERR;
}

CULEAK_EXPORT handler_fn bsd_signal(int sig, handler_fn h) { return signal(sig, h); }
CULEAK_EXPORT handler_fn ssignal(int sig, handler_fn h) { return signal(sig, h); }

#ifndef SA_INTERRUPT
#define SA_INTERRUPT 0x20000000
#endif

/* sysv_signal as glibc's (System V: the handler runs once, unblocked, calls interrupted).
 * A program built for strict ISO C (-std=c11) calls it for signal(): <signal.h> names
 * __sysv_signal there. */
CULEAK_EXPORT handler_fn __sysv_signal(int sig, handler_fn h)
{
    if (sig <= 0 || sig >= NSIG || !__atomic_load_n(&owned[sig], __ATOMIC_ACQUIRE)) {
        handler_fn (*f)(int, handler_fn) =
            (handler_fn(*)(int, handler_fn))culeak_real_dlsym(RTLD_NEXT, "__sysv_signal");
        return f ? f(sig, h) : SIG_ERR;
    }
    struct sigaction sa = {.sa_handler = h, .sa_flags = SA_RESETHAND | SA_NODEFER | SA_INTERRUPT}, old;
    sigemptyset(&sa.sa_mask);
    return h != SIG_ERR && sigaction(sig, &sa, &old) == 0 ? old.sa_handler : SIG_ERR;
}

CULEAK_EXPORT handler_fn sysv_signal(int sig, handler_fn h) { return __sysv_signal(sig, h); }

/* siginterrupt as glibc's: it changes SA_RESTART of the disposition the program sees. */
CULEAK_EXPORT int siginterrupt(int sig, int interrupt)
{
    struct sigaction sa;
    if (sigaction(sig, NULL, &sa) != 0)
        return -1;
    sa.sa_flags = interrupt ? sa.sa_flags & ~SA_RESTART : sa.sa_flags | SA_RESTART;
    if (sig > 0 && sig < NSIG && __atomic_load_n(&owned[sig], __ATOMIC_ACQUIRE)) {
        shown[sig].sa_flags = sa.sa_flags; /* still the default: only what is read back */
        return 0;
    }
    return sigaction(sig, &sa, NULL);
}

/* sigset as glibc's (System V): no flags, SIG_HOLD blocks the signal, any other
 * disposition unblocks it; SIG_HOLD is returned when it was blocked. */
CULEAK_EXPORT handler_fn sigset(int sig, handler_fn disp)
{
    if (sig <= 0 || sig >= NSIG || !__atomic_load_n(&owned[sig], __ATOMIC_ACQUIRE)) {
        handler_fn (*f)(int, handler_fn) = (handler_fn(*)(int, handler_fn))culeak_real_dlsym(RTLD_NEXT, "sigset");
        return f ? f(sig, disp) : SIG_ERR;
    }
    sigset_t one, was;
    sigemptyset(&one);
    sigaddset(&one, sig);
    struct sigaction old = shown[sig];
    if (disp == SIG_HOLD) {
        if (pthread_sigmask(SIG_BLOCK, &one, &was) != 0)
            return SIG_ERR;
    } else {
        struct sigaction sa = {.sa_handler = disp};
        sigemptyset(&sa.sa_mask);
        if (sigaction(sig, &sa, &old) != 0 || pthread_sigmask(SIG_UNBLOCK, &one, &was) != 0)
            return SIG_ERR;
    }
    return sigismember(&was, sig) ? SIG_HOLD : old.sa_handler;
}
