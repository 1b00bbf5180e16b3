/* The x86-64 half of the ptrace injector: every register of a thread saved and given back
 * (the general ones with orig_rax and the FS/GS bases; the whole XSAVE area at the size
 * this CPU and kernel use, x87 to AVX-512 and AMX tiles; the signal mask), a call set up
 * on the thread's own stack, and the kernel's system-call restart rules. */
#if defined(__x86_64__)
#include "inject_arch.h"
#include "inject_x86_64.h"

#include <errno.h>
#include <elf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <unistd.h>

/* Larger than any XSAVE area (AMX makes it about 11 KiB); the kernel says how much it used. */
#define XSTATE_MAX (64u << 10)

struct culeak_thread_state {
    struct user_regs_struct regs;
    uint64_t sigmask;
    size_t xlen; /* the size the kernel gave: the one it takes back */
    _Alignas(64) uint8_t xstate[XSTATE_MAX];
};

void culeak_x86_frame(uint64_t sp, size_t strings_len, struct culeak_x86_frame *f)
{
    f->strings = (sp - CULEAK_X86_RED_ZONE - strings_len) & ~(uint64_t)15;
    f->entry_sp = f->strings - 64 - 8; /* a gap, then the return address, 8 past a 16-byte boundary */
}

/* the system calls that end with EINTR, not a restart code, when their thread stops and
 * resumes (signal(7)), and whose EINTR says nothing was done (close is not one) */
static int eintr_on_stop(int64_t nr)
{
    static const int64_t calls[] = {SYS_epoll_wait, SYS_epoll_pwait, 441 /* epoll_pwait2 */, SYS_rt_sigtimedwait,
                                    SYS_semop,      SYS_semtimedop,  SYS_io_getevents, 333 /* io_pgetevents */,
                                    SYS_read,       SYS_readv,       SYS_recvfrom,     SYS_recvmsg,
                                    SYS_accept,     SYS_accept4,     SYS_sendto,       SYS_sendmsg,
                                    SYS_write,      SYS_writev};
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
        if (calls[i] == nr)
            return 1;
    return 0;
}

int culeak_x86_restart_rule(uint64_t *rax, int64_t orig_rax, uint64_t *rip, int signal_pending)
{
    if (orig_rax < 0 || (int64_t)*rax != -EINTR || signal_pending || !eintr_on_stop(orig_rax))
        return 0;
    *rip -= 2; /* back onto the syscall instruction (0f 05) */
    *rax = (uint64_t)orig_rax;
    return 1;
}

int culeak_arch_restart_by_hand(struct culeak_thread_state *st, int signal_pending)
{
    return culeak_x86_restart_rule((uint64_t *)&st->regs.rax, (int64_t)st->regs.orig_rax, (uint64_t *)&st->regs.rip,
                                   signal_pending);
}

int culeak_arch_swaps_sigmask(long nr, const uint64_t args[6])
{
    switch (nr) {
    case SYS_rt_sigsuspend:
        return 1;
    case SYS_ppoll:
        return args[3] != 0;
    case SYS_pselect6:
    case SYS_io_pgetevents:
        return args[5] != 0;
    case SYS_epoll_pwait:
    case 441: /* epoll_pwait2 */
        return args[4] != 0;
    default:
        return 0;
    }
}

struct culeak_thread_state *culeak_arch_save(pid_t tid, char *err, size_t len)
{
    struct culeak_thread_state *st = aligned_alloc(64, sizeof *st);
    if (!st) {
        snprintf(err, len, "out of memory");
        return NULL;
    }
    struct iovec iov = {st->xstate, sizeof st->xstate};
    const char *what = "registers";
    if (ptrace(PTRACE_GETREGS, tid, NULL, &st->regs) != 0)
        goto fail;
    what = "extended registers (XSAVE)";
    if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) != 0)
        goto fail;
    st->xlen = iov.iov_len;
    what = "signal mask";
    if (ptrace(PTRACE_GETSIGMASK, tid, (void *)sizeof st->sigmask, &st->sigmask) != 0)
        goto fail;
    return st;
fail:
    snprintf(err, len, "cannot read the %s of thread %d: %s", what, (int)tid, strerror(errno));
    free(st);
    return NULL;
}

void culeak_arch_free(struct culeak_thread_state *st) { free(st); }

int culeak_arch_restore(pid_t tid, const struct culeak_thread_state *st, char *err, size_t len)
{
    struct iovec iov = {(void *)st->xstate, st->xlen};
    const char *what = "extended registers (XSAVE)";
    if (ptrace(PTRACE_SETREGSET, tid, (void *)NT_X86_XSTATE, &iov) != 0)
        goto fail;
    what = "signal mask";
    if (ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof st->sigmask, (void *)&st->sigmask) != 0)
        goto fail;
    what = "registers"; /* last: orig_rax and rax decide the restart of the interrupted call */
    if (ptrace(PTRACE_SETREGS, tid, NULL, (void *)&st->regs) != 0)
        goto fail;
    return 0;
fail:
    snprintf(err, len, "cannot give back the %s of thread %d: %s", what, (int)tid, strerror(errno));
    return -1;
}

uint64_t culeak_arch_sp(const struct culeak_thread_state *st) { return st->regs.rsp; }
uint64_t culeak_arch_pc(const struct culeak_thread_state *st) { return st->regs.rip; }
long culeak_arch_syscall(const struct culeak_thread_state *st) { return (long)st->regs.orig_rax; }

uint64_t culeak_arch_scratch(const struct culeak_thread_state *st, size_t need)
{
    struct culeak_x86_frame f;
    culeak_x86_frame(st->regs.rsp, need, &f);
    return f.strings;
}

/* The callee's floating-point state as the ABI has it at a call: x87 empty with its
 * default control word, MXCSR's default; the vector registers are the caller's to lose. */
static int clean_fpu(pid_t tid, const struct culeak_thread_state *st)
{
    static _Alignas(64) uint8_t x[XSTATE_MAX];
    memcpy(x, st->xstate, st->xlen);
    const uint16_t fcw = 0x037f;
    const uint32_t mxcsr = 0x1f80;
    memcpy(x + 0, &fcw, 2);    /* FCW */
    memset(x + 2, 0, 2);       /* FSW */
    x[4] = 0;                  /* the abridged tag word: every x87 register empty */
    memcpy(x + 24, &mxcsr, 4); /* MXCSR */
    struct iovec iov = {x, st->xlen};
    return ptrace(PTRACE_SETREGSET, tid, (void *)NT_X86_XSTATE, &iov);
}

int culeak_arch_start_call(pid_t tid, int mem, const struct culeak_thread_state *st, uint64_t below, uint64_t fn,
                           const uint64_t *args, int nargs, char *err, size_t len)
{
    struct culeak_x86_frame f;
    culeak_x86_frame(below + CULEAK_X86_RED_ZONE, 0, &f); /* `below` is 16-aligned already */
    uint64_t zero = 0;
    if (nargs > 6 || pwrite(mem, &zero, sizeof zero, (off_t)f.entry_sp) != (ssize_t)sizeof zero) {
        snprintf(err, len, "cannot write on the stack of thread %d: %s", (int)tid, strerror(errno));
        return -1;
    }
    struct user_regs_struct r = st->regs;
    uint64_t *slot[6] = {(uint64_t *)&r.rdi, (uint64_t *)&r.rsi, (uint64_t *)&r.rdx,
                         (uint64_t *)&r.rcx, (uint64_t *)&r.r8,  (uint64_t *)&r.r9};
    for (int i = 0; i < nargs; i++)
        *slot[i] = args[i];
    r.rip = fn;
    r.rsp = f.entry_sp;
    r.rax = 0;         /* no vector arguments */
    r.orig_rax = -1;   /* not in a system call: the kernel restarts nothing on this call's registers */
    r.eflags &= ~0x400ull; /* the direction flag clear, as at every call */
    /* the faults stay deliverable: a blocked fault would reset the program's own handler */
    uint64_t mask = ~0ull;
    const int faults[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS};
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        mask &= ~(1ull << (faults[i] - 1));
    if (clean_fpu(tid, st) != 0 || ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof mask, &mask) != 0 ||
        ptrace(PTRACE_SETREGS, tid, NULL, &r) != 0) {
        snprintf(err, len, "cannot set up the call in thread %d: %s", (int)tid, strerror(errno));
        return -1;
    }
    return 0;
}

int culeak_arch_call_ended(pid_t tid, uint64_t *result, uint64_t *pc)
{
    struct user_regs_struct r;
    if (ptrace(PTRACE_GETREGS, tid, NULL, &r) != 0)
        return -1;
    *result = r.rax;
    *pc = r.rip;
    return r.rip == 0;
}
#endif
