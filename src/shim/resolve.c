/* Finding real entry points and handing out wrappers: the exported dlsym, the
 * cuGetProcAddress wrappers and the row table they share (hooks.h).
 *
 * A request is answered with a wrapper only when what the real lookup returned IS the
 * row's real function (pointer identity), so a wrapper never replaces a function of a
 * different ABI (the v1 names take 32-bit arguments) or of another copy of a library.
 *
 * Another tool preloaded after the shim may wrap dlsym too: the program's lookups go on
 * to that dlsym (the next one in the preload chain), not straight to libc's. When it hands
 * out its own function for a name the shim wraps, in place of the row's real function,
 * the shim's hook calls that one (the row's `via`), so both tools see every call. */
#include "shim.h"
#include "hooks.h"
#include "cuda_api.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

struct culeak_row culeak_rows[CULEAK_ROW_COUNT] = {
#define CULEAK_ROW_HOOK(fn) [CULEAK_ROW_##fn] = {#fn, (void *)&fn, NULL, NULL},
#define CULEAK_ROW_PLAIN(fn) [CULEAK_ROW_##fn] = {#fn, NULL, NULL, NULL},
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

NO_SANITIZE static dlsym_fn real_dlsym_fn(void)
{
    dlsym_fn f = __atomic_load_n(&real_dlsym_ptr, __ATOMIC_ACQUIRE);
    if (!f) {
        /* dlvsym is not interposed, so this cannot recurse into our dlsym. */
        f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
        if (!f)
            f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
        if (f)
            __atomic_store_n(&real_dlsym_ptr, f, __ATOMIC_RELEASE);
    }
    return f;
}

NO_SANITIZE void *culeak_real_dlsym(void *handle, const char *name)
{
    dlsym_fn f = real_dlsym_fn();
    return f ? f(handle, name) : NULL;
}

static dlsym_fn next_dlsym_ptr;

/* The dlsym that comes after the shim's in the lookup order: another tool's, or libc's.
 * Asked of libc's dlsym from here, RTLD_NEXT searches after the shim. */
NO_SANITIZE static dlsym_fn next_dlsym_fn(void)
{
    dlsym_fn f = __atomic_load_n(&next_dlsym_ptr, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (dlsym_fn)culeak_real_dlsym(RTLD_NEXT, "dlsym");
        if (!f)
            f = real_dlsym_fn();
        if (f)
            __atomic_store_n(&next_dlsym_ptr, f, __ATOMIC_RELEASE);
    }
    return f;
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

/* The first definition in any loaded module but the shim's: a shim loaded into a running
 * process (attach.c) comes after the libraries, where RTLD_NEXT finds none of them. */
NO_SANITIZE static void *any_module(const char *name)
{
    struct link_map *self = module_of((void *)&any_module);
    for (struct link_map *lm = _r_debug.r_map; lm; lm = lm->l_next) {
        if (lm == self || !lm->l_name || !lm->l_name[0])
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

NO_SANITIZE void *culeak_real_resolve(enum culeak_row_id id)
{
    struct culeak_row *r = &culeak_rows[id];
    void *p = __atomic_load_n(&r->real, __ATOMIC_ACQUIRE);
    if (p)
        return p;
    p = culeak_real_dlsym(RTLD_NEXT, r->name);
    if (!p) /* defined in a library loaded RTLD_LOCAL (e.g. under a Python extension) */
        p = next_after(module_of((void *)&culeak_real_resolve), r->name);
    if (!p && __atomic_load_n(&culeak_attached, __ATOMIC_ACQUIRE))
        p = any_module(r->name);
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

/* Where dlsym(RTLD_NEXT, name) goes (see dlsym_entry.c): NULL for the names we wrap,
 * which take the C path below; for every other name, the real dlsym, which the entry
 * jumps to with the caller's return address intact, so glibc searches after the CALLER
 * (calling it from here would search after the shim, and a sanitizer runtime asking
 * for "mmap" would get its own interceptor back). */
/* used: the entry's assembly is its only caller, which link-time optimization does not see */
__attribute__((used)) NO_SANITIZE void *culeak_dlsym_next_target(const char *name)
{
    return row_by_name(name) >= 0 ? NULL : (void *)next_dlsym_fn();
}

__attribute__((used)) NO_SANITIZE void *culeak_dlsym_lookup(void *handle, const char *name)
{
    void *p;
    int i = row_by_name(name);
    if (handle == RTLD_NEXT) /* only our names arrive here */
        return i >= 0 && culeak_real((enum culeak_row_id)i) ? culeak_rows[i].hook
                                                           : culeak_real_dlsym(RTLD_NEXT, name);
    culeak_modules_touch(); /* a library just opened (a Python extension's PyInit_*) may be new */
    dlsym_fn next = next_dlsym_fn();
    p = next ? next(handle, name) : NULL;
    if (!p || i < 0)
        return p;
    void *real = next == real_dlsym_fn() ? p : culeak_real_dlsym(handle, name);
    if (real == p)
        return wrap(i, p);
    /* another tool's function for this name: the hook calls it when the tool wraps the
     * row's real function, else the program gets the tool's function untraced */
    if (!real || wrap(i, real) != culeak_rows[i].hook)
        return p;
    void *none = NULL;
    __atomic_compare_exchange_n(&culeak_rows[i].via, &none, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    return __atomic_load_n(&culeak_rows[i].via, __ATOMIC_ACQUIRE) == p ? culeak_rows[i].hook : p;
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
