/* client_mixed_fp: call paths through levels with and without frame pointers. */
#ifndef MIXED_FP_H
#define MIXED_FP_H
#include <stdint.h>

extern volatile int mixed_fp_sink;
int level_fp(int depth);           /* frame pointers; allocates at depth 0 */
int level_nofp_quiet(int depth);   /* without; rbp left alone */
int level_nofp_clobber(int depth); /* without; rbp holds something else across its call */
#endif
