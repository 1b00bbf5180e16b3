/* The x86-64 injector's rules that need no process, for its unit test: the call's stack
 * frame and the system-call restart decision. */
#ifndef CULEAK_INJECT_X86_64_H
#define CULEAK_INJECT_X86_64_H

#include <stddef.h>
#include <stdint.h>

#define CULEAK_X86_RED_ZONE 128

/* The frame of a call below stack pointer sp: the strings' area (16-aligned, below the red
 * zone) and the stack pointer at the callee's entry, which points at the return address
 * and is 8 past a 16-byte boundary (the System V ABI: (rsp + 8) % 16 == 0). */
struct culeak_x86_frame {
    uint64_t strings;
    uint64_t entry_sp;
};
void culeak_x86_frame(uint64_t sp, size_t strings_len, struct culeak_x86_frame *f);

/* The restart by hand of a system call that returned plain EINTR because of the stop:
 * given the saved rax, orig_rax and rip, and whether a signal is pending for the thread
 * (unblocked), changes rax and rip so that the call runs again. 1 when changed. */
int culeak_x86_restart_rule(uint64_t *rax, int64_t orig_rax, uint64_t *rip, int signal_pending);

#endif
