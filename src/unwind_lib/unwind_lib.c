/* libculeak_unwind.so: the library through which the shim loads libunwind, next to the
 * shim. It holds no unwinding code: its DT_NEEDED names the libunwind (the system's, or
 * in the wheel the renamed copy in culeak.libs, which its RUNPATH finds), and the shim
 * opens it with RTLD_LOCAL | RTLD_DEEPBIND (src/shim/libunwind_load.c). So libunwind's
 * symbols never enter the job's global scope (a job or a library of it with a libunwind
 * of its own keeps its own), and libunwind's calls to itself stay within this copy. */
#include <libunwind.h>

/* The libunwind headers this was built with; the shim uses the library only when they
 * are its own (the sizes of unw_context_t and unw_cursor_t come from them). */
__attribute__((visibility("default"))) const int culeak_unwind_headers = UNW_VERSION;
