/* culeak.h: annotate a program for culeak. See culeak.h(3).
 *
 * Header only: nothing to link. Each call looks the shim up once with dlsym; when the
 * program does not run under culeak (libculeak.so not preloaded) every call is a cheap
 * no-op. Thread-safe. */
#ifndef CULEAK_H
#define CULEAK_H

#include <stddef.h>
#include <dlfcn.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CULEAK_API_VERSION 2 /* 2: culeak_pool_block */

/* Resolved once per translation unit; (void *)1 caches "not loaded". */
static inline void *culeak__lookup(void **cache, const char *name)
{
    void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (!f) {
        f = dlsym(RTLD_DEFAULT, name);
        if (!f)
            f = (void *)1;
        __atomic_store_n(cache, f, __ATOMIC_RELEASE);
    }
    return f == (void *)1 ? NULL : f;
}

/* A named point on the timeline ("iteration 10"): snapshots can be taken at marks. */
static inline void culeak_mark(const char *label)
{
    static void *cache;
    void (*f)(const char *) = (void (*)(const char *))culeak__lookup(&cache, "culeak_mark_label");
    if (f)
        f(label);
}

/* Report a block handed out by the program's own pool allocator, so culeak tracks it
 * like a CUDA allocation (kind "user"), with the caller's stack. */
static inline void culeak_alloc(const void *ptr, size_t size)
{
    static void *cache;
    void (*f)(const void *, size_t) =
        (void (*)(const void *, size_t))culeak__lookup(&cache, "culeak_report_alloc");
    if (f)
        f(ptr, size);
}

/* The block at ptr, reported with culeak_alloc, is returned to the program's pool. */
static inline void culeak_free(const void *ptr)
{
    static void *cache;
    void (*f)(const void *) = (void (*)(const void *))culeak__lookup(&cache, "culeak_report_free");
    if (f)
        f(ptr);
}

/* The pools culeak_pool_block reports to (culeak's frameworks table). */
#define CULEAK_POOL_ID_PYTORCH 1
#define CULEAK_POOL_ID_CUPY 2

/* Report a block that a framework's pool hands out (alloc non-zero) or takes back (alloc
 * 0), such as a tensor: culeak tracks it as kind "block" of that pool, with the caller's
 * stack, apart from the segments the pool took from CUDA. Returns 0, or -1 when pool
 * names no pool that reports blocks. */
static inline int culeak_pool_block(unsigned pool, int alloc, const void *ptr, size_t size)
{
    static void *cache;
    int (*f)(unsigned, int, const void *, size_t) =
        (int (*)(unsigned, int, const void *, size_t))culeak__lookup(&cache, "culeak_report_pool_block");
    return f ? f(pool, alloc, ptr, size) : 0;
}

/* Non-zero when the program runs under culeak. */
static inline int culeak_active(void)
{
    static void *cache;
    return culeak__lookup(&cache, "culeak_mark_label") != NULL;
}

#ifdef __cplusplus
}
#endif
#endif
