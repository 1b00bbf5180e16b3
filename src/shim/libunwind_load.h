/* libunwind's functions, from a copy the shim loads privately (libunwind_load.c). */
#ifndef CULEAK_LIBUNWIND_LOAD_H
#define CULEAK_LIBUNWIND_LOAD_H

#define UNW_LOCAL_ONLY
#include <libunwind.h>

struct culeak_libunwind {
    int (*getcontext)(unw_context_t *);
    int (*init_local)(unw_cursor_t *, unw_context_t *);
    int (*step)(unw_cursor_t *);
    int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
    int (*backtrace)(void **, int);
    int (*set_caching_policy)(unw_addr_space_t, unw_caching_policy_t);
    unw_accessors_t *(*get_accessors)(unw_addr_space_t);
    unw_addr_space_t *local_addr_space;
};

/* Filled by culeak_libunwind_load; all NULL when libunwind could not be loaded. */
extern struct culeak_libunwind culeak_unw;

/* Loads libunwind through libculeak_unwind.so next to the shim, else the system's
 * libunwind.so.8, with RTLD_LOCAL | RTLD_DEEPBIND. 0, or -1 with the reason in why. */
int culeak_libunwind_load(char *why, size_t len);

#endif
