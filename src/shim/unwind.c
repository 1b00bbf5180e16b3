/* The caller's stack: libunwind's fast local trace with its per-thread cache, called
 * before any lock of the shim is taken (it may take the loader lock). */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "shim.h"

void culeak_unwind_init(void)
{
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

int culeak_unwind(uintptr_t *ips, int max)
{
    /* Room for the shim's own frames on top of the program's `max`. */
    void *raw[CULEAK_MAX_DEPTH + 8];
    int n = unw_backtrace(raw, max + 8 <= CULEAK_MAX_DEPTH + 8 ? max + 8 : CULEAK_MAX_DEPTH + 8);
    int skip = 0;
    while (skip < n && (uintptr_t)raw[skip] >= culeak_self_lo && (uintptr_t)raw[skip] < culeak_self_hi)
        skip++;
    int out = 0;
    for (int i = skip; i < n && out < max; i++)
        ips[out++] = (uintptr_t)raw[i] - 1; /* the call, not the return address */
    return out;
}
