/* The shim's libunwind, loaded privately rather than linked: a preloaded library's
 * dependencies join the job's global scope, where the job's own calls (and a library of
 * its, dlopened later) would bind to them, and where a libunwind the job loaded first
 * would take the shim's calls. Loaded with RTLD_LOCAL its symbols stay out of that scope;
 * with RTLD_DEEPBIND its own calls between its functions stay within this copy; the shim
 * calls it through the handle only. The wheel's copy also has a SONAME of its own (a
 * hash suffix), so a job asking for libunwind.so.8 by name never gets it. */
#include "libunwind_load.h"
#include "shim.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

struct culeak_libunwind culeak_unw;

#define NAME_(f) #f
#define NAME(f) NAME_(f) /* the symbol a libunwind.h macro stands for */

/* RTLD_DEEPBIND, unless a sanitizer runtime is in the process (an ASan build of the job,
 * or of the shim): its dlopen ends the process when given that flag. */
static int open_flags(void)
{
    int flags = RTLD_NOW | RTLD_LOCAL;
    if (!culeak_real_dlsym(RTLD_DEFAULT, "__sanitizer_print_stack_trace"))
        flags |= RTLD_DEEPBIND;
    return flags;
}

/* libculeak_unwind.so next to the shim (build, install and wheel layouts alike). */
static void *open_beside(char *why, size_t len)
{
    Dl_info self;
    if (!dladdr((void *)open_beside, &self) || !self.dli_fname)
        return NULL;
    char path[4096];
    const char *slash = strrchr(self.dli_fname, '/');
    snprintf(path, sizeof path, "%.*slibculeak_unwind.so", slash ? (int)(slash - self.dli_fname + 1) : 0,
             self.dli_fname);
    void *h = dlopen(path, open_flags());
    if (!h)
        snprintf(why, len, "%s", dlerror());
    return h;
}

int culeak_libunwind_load(char *why, size_t len)
{
    why[0] = 0;
    void *h = open_beside(why, len);
    if (h) {
        const int *headers = culeak_real_dlsym(h, "culeak_unwind_headers");
        if (!headers || *headers != UNW_VERSION) {
            snprintf(why, len, "libculeak_unwind.so was built with other libunwind headers");
            return -1;
        }
    } else if (!(h = dlopen("libunwind.so.8", open_flags()))) {
        if (!why[0])
            snprintf(why, len, "%s", dlerror());
        return -1;
    }
    struct culeak_libunwind u = {
        .getcontext = (int (*)(unw_context_t *))culeak_real_dlsym(h, NAME(unw_tdep_getcontext)),
        .init_local = (int (*)(unw_cursor_t *, unw_context_t *))culeak_real_dlsym(h, NAME(unw_init_local)),
        .step = (int (*)(unw_cursor_t *))culeak_real_dlsym(h, NAME(unw_step)),
        .get_reg = (int (*)(unw_cursor_t *, unw_regnum_t, unw_word_t *))culeak_real_dlsym(h, NAME(unw_get_reg)),
        .backtrace = (int (*)(void **, int))culeak_real_dlsym(h, NAME(unw_backtrace)),
        .set_caching_policy = (int (*)(unw_addr_space_t, unw_caching_policy_t))culeak_real_dlsym(
            h, NAME(unw_set_caching_policy)),
        .get_accessors = (unw_accessors_t * (*)(unw_addr_space_t)) culeak_real_dlsym(h, NAME(unw_get_accessors)),
        .local_addr_space = (unw_addr_space_t *)culeak_real_dlsym(h, NAME(unw_local_addr_space)),
    };
    if (!u.getcontext || !u.init_local || !u.step || !u.get_reg || !u.backtrace || !u.set_caching_policy || !u.get_accessors ||
        !u.local_addr_space) {
        snprintf(why, len, "the loaded libunwind lacks a function the shim calls");
        return -1;
    }
    culeak_unw = u;
    return 0;
}
