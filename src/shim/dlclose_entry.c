/* The exported dlclose: after the real one, what the stack walker learnt about return
 * addresses is forgotten, since the unloaded library's addresses may be reused. */
#include "shim.h"

#include <dlfcn.h>

CULEAK_EXPORT int dlclose(void *handle)
{
    static int (*real)(void *);
    int (*f)(void *) = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (int (*)(void *))culeak_real_dlsym(RTLD_NEXT, "dlclose");
        if (!f)
            return -1;
        __atomic_store_n(&real, f, __ATOMIC_RELEASE);
    }
    int r = f(handle);
    culeak_unwind_forget();
    return r;
}
