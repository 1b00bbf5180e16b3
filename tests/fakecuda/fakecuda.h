/* What the fake driver exports beyond the CUDA ABI, so tests can check its own truth.
 * Resolve these with dlsym on the libcuda.so.1 handle (programs that link -lcuda may
 * call them directly). FAKECUDA_LOG=path appends one line per successful allocation
 * or free: "<pid> alloc|free <api> 0x<addr> <size>". */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#include <stddef.h>

size_t fakecuda_live_bytes(void);          /* bytes of live blocks that hold memory */
size_t fakecuda_live_blocks(void);         /* live tracked objects of every kind */
unsigned long fakecuda_alloc_count(void);  /* successful allocations so far */
unsigned long fakecuda_free_count(void);   /* successful frees (a context teardown counts each block) */

#endif
