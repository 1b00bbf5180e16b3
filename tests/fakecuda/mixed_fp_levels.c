/* The levels of client_mixed_fp built without frame pointers (-fomit-frame-pointer):
 * one leaves rbp alone, so a plain frame-pointer walk would skip its frame; one holds a
 * stack address that is no frame record in rbp across its call. */
#include "mixed_fp.h"

__attribute__((noinline)) int level_nofp_quiet(int depth)
{
    int r = level_fp(depth - 1);
    mixed_fp_sink += r; /* no tail call */
    return r;
}

__attribute__((noinline)) int level_nofp_clobber(int depth)
{
    volatile uintptr_t decoy[4] = {0, 0, 0, 0};
    register uintptr_t bp __asm__("rbp") = (uintptr_t)&decoy[0];
    __asm__ volatile("" : "+r"(bp)); /* rbp holds the decoy from here... */
    int r = level_fp(depth - 1);
    __asm__ volatile("" : : "r"(bp)); /* ...across the call */
    mixed_fp_sink += r;
    return r;
}
