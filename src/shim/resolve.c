/* Finding real entry points and handing out wrappers: the exported dlsym, the
 * cuGetProcAddress wrappers and the row table they share (hooks.h).
 *
 * A request is answered with a wrapper only when what the real lookup returned IS the
 * row's real function (pointer identity), so a wrapper never replaces a function of a
 * different ABI (the v1 names take 32-bit arguments) or of another copy of a library. */
#include "shim.h"
#include "hooks.h"
#include "cuda_api.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

struct culeak_row culeak_rows[CULEAK_ROW_COUNT] = {
#define CULEAK_ROW_HOOK(fn) [CULEAK_ROW_##fn] = {#fn, (void *)&fn, NULL},
#define CULEAK_ROW_PLAIN(fn) [CULEAK_ROW_##fn] = {#fn, NULL, NULL},
    CULEAK_DRIVER_HOOKS(CULEAK_ROW_HOOK)
    CULEAK_DRIVER_PLAIN(CULEAK_ROW_PLAIN)
    CULEAK_RUNTIME_HOOKS(CULEAK_ROW_HOOK)
#undef CULEAK_ROW_HOOK
#undef CULEAK_ROW_PLAIN
};

/* The lookup path runs inside sanitizer runtimes' own start-up (they dlsym through us
 * before their shadow memory exists), so it is never instrumented. */
#define NO_SANITIZE __attribute__((no_sanitize("address", "undefined")))

typedef void *(*dlsym_fn)(void *, const char *);
static dlsym_fn real_dlsym_ptr;

NO_SANITIZE void *culeak_real_dlsym(void *handle, const char *name)
{
    dlsym_fn f = __atomic_load_n(&real_dlsym_ptr, __ATOMIC_ACQUIRE);
    if (!f) {
        /* dlvsym is not interposed, so this cannot recurse into our dlsym. */
        f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (!f)
            f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
        if (!f)
            return NULL;
        __atomic_store_n(&real_dlsym_ptr, f, __ATOMIC_RELEASE);
    }
    return f(handle, name);
}

NO_SANITIZE static struct link_map *module_of(const void *addr)
{
    Dl_info info;
    struct link_map *lm = NULL;
    if (!dladdr1(addr, &info, (void **)&lm, RTLD_DL_LINKMAP))
        return NULL;
    return lm;
}

/* RTLD_NEXT on behalf of code in module `after`: the first definition in a module that
 * comes after it in load order. (The real RTLD_NEXT would search after the shim.) */
NO_SANITIZE static void *next_after(struct link_map *after, const char *name)
{
    for (struct link_map *lm = after ? after->l_next : NULL; lm; lm = lm->l_next) {
        if (!lm->l_name || !lm->l_name[0])
            continue;
        void *h = dlopen(lm->l_name, RTLD_LAZY | RTLD_NOLOAD);
        if (!h)
            continue;
        void *p = culeak_real_dlsym(h, name);
        dlclose(h);
        if (p && module_of(p) == lm)
            return p;
    }
    return NULL;
}

NO_SANITIZE static int is_driver_row(int i) { return i < CULEAK_FIRST_RUNTIME; }

/* Fills every unresolved driver row from the module that defines `fn`, a real driver
 * function; the driver stays loaded as long as we hold the handle. */
NO_SANITIZE static void bind_driver(void *fn)
{
    static int bound;
    if (__atomic_load_n(&bound, __ATOMIC_ACQUIRE))
        return;
    Dl_info info;
    if (!dladdr(fn, &info) || !info.dli_fname)
        return;
    void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return;
    for (int i = 0; i < CULEAK_FIRST_RUNTIME; i++) {
        if (__atomic_load_n(&culeak_rows[i].real, __ATOMIC_ACQUIRE))
            continue;
        void *p = culeak_real_dlsym(h, culeak_rows[i].name);
        if (p && p != culeak_rows[i].hook)
            __atomic_store_n(&culeak_rows[i].real, p, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&bound, 1, __ATOMIC_RELEASE);
}

NO_SANITIZE void *culeak_real(enum culeak_row_id id)
{
    struct culeak_row *r = &culeak_rows[id];
    void *p = __atomic_load_n(&r->real, __ATOMIC_ACQUIRE);
    if (p)
        return p;
    p = culeak_real_dlsym(RTLD_NEXT, r->name);
    if (!p) /* defined in a library loaded RTLD_LOCAL (e.g. under a Python extension) */
        p = next_after(module_of((void *)&culeak_real), r->name);
    if (!p || p == r->hook)
        return NULL;
    void *expected = NULL;
    if (!__atomic_compare_exchange_n(&r->real, &expected, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        p = expected;
    if (is_driver_row(id))
        bind_driver(p);
    return p;
}

NO_SANITIZE static int row_by_name(const char *name)
{
    if (name[0] != 'c' || name[1] != 'u')
        return -1;
    for (int i = 0; i < CULEAK_ROW_COUNT; i++)
        if (culeak_rows[i].hook && strcmp(culeak_rows[i].name, name) == 0)
            return i;
    return -1;
}

/* The wrapper to hand out for `p`, a real function just looked up as row i (by name or
 * by identity), or p itself when it is not the row's real function. */
NO_SANITIZE static void *wrap(int i, void *p)
{
    struct culeak_row *r = &culeak_rows[i];
    if (p == r->hook)
        return culeak_real((enum culeak_row_id)i) ? p : NULL;
    void *expected = NULL;
    __atomic_compare_exchange_n(&r->real, &expected, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    if (is_driver_row(i))
        bind_driver(p);
    return __atomic_load_n(&r->real, __ATOMIC_ACQUIRE) == p ? r->hook : p;
}

NO_SANITIZE static int loaded_before(const struct link_map *a, const struct link_map *b)
{
    for (const struct link_map *lm = b ? b->l_prev : NULL; lm; lm = lm->l_prev)
        if (lm == a)
            return 1;
    return 0;
}

/* dlsym(RTLD_NEXT) for a caller: the real one would search after the shim instead. A
 * caller loaded after the shim gets a walk of the modules after it; one loaded before
 * (the program, an earlier preload) gets the shim's own definition, else the real
 * RTLD_NEXT from here (modules between that caller and the shim are not searched). */
NO_SANITIZE static void *rtld_next(const void *caller, const char *name)
{
    struct link_map *self = module_of((void *)&culeak_real), *from = module_of(caller);
    if (from && self && from != self && !loaded_before(from, self))
        return next_after(from, name);
    int i = row_by_name(name);
    if (i >= 0 && culeak_real((enum culeak_row_id)i))
        return culeak_rows[i].hook;
    return culeak_real_dlsym(RTLD_NEXT, name);
}

NO_SANITIZE CULEAK_EXPORT void *dlsym(void *restrict handle, const char *restrict name)
{
    void *p;
    if (handle == RTLD_NEXT)
        p = rtld_next(__builtin_return_address(0), name);
    else
        p = culeak_real_dlsym(handle, name);
    if (!p)
        return p;
    int i = row_by_name(name);
    return i < 0 ? p : wrap(i, p);
}

/* What cuGetProcAddress returned, exchanged for our wrapper of the same function. */
static void *by_identity(void *p)
{
    bind_driver(p);
    for (int i = 0; i < CULEAK_FIRST_PLAIN; i++)
        if (__atomic_load_n(&culeak_rows[i].real, __ATOMIC_ACQUIRE) == p)
            return culeak_rows[i].hook;
    return p;
}

CULEAK_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                                           CUdriverProcAddressQueryResult *status)
{
    __typeof__(&cuGetProcAddress_v2) real = CULEAK_REAL(cuGetProcAddress_v2);
    if (!real)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real(symbol, pfn, version, flags, status);
    if (r == CUDA_SUCCESS && pfn && *pfn)
        *pfn = by_identity(*pfn);
    return r;
}

CULEAK_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    __typeof__(&cuGetProcAddress) real = CULEAK_REAL(cuGetProcAddress);
    if (!real)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = real(symbol, pfn, version, flags);
    if (r == CUDA_SUCCESS && pfn && *pfn)
        *pfn = by_identity(*pfn);
    return r;
}
