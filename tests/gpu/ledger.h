/* The GPU check programs print a ledger of what they allocated and freed on stderr
 * ("LEDGER alloc API SIZE ADDR" / "LEDGER free ADDR"); check.py matches it against what
 * culeak recorded. */
#ifndef CULEAK_GPU_LEDGER_H
#define CULEAK_GPU_LEDGER_H
#include <stdio.h>
#include <stdlib.h>

#define LEDGER_ALLOC(api, size, addr) \
    fprintf(stderr, "LEDGER alloc %s %zu 0x%llx\n", api, (size_t)(size), (unsigned long long)(addr))
#define LEDGER_FREE(addr) fprintf(stderr, "LEDGER free 0x%llx\n", (unsigned long long)(addr))
#define LEDGER_FAIL(api, size) fprintf(stderr, "LEDGER fail %s %zu\n", api, (size_t)(size))

#define CHECK_RT(call)                                                                    \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess) {                                                          \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)
#endif
