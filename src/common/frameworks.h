/* The frameworks whose caching allocators culeak knows, one row each: what reports call
 * it and its pool, the modules and functions of its allocator (memory still held there
 * at exit is cache, not a leak), the API of the blocks it reports (its tensors), and the
 * environment that turns its pool off (--no-pool). The model, the launcher and the
 * report writers read this table; a new framework is a row here (src/README.md). */
#ifndef CULEAK_FRAMEWORKS_H
#define CULEAK_FRAMEWORKS_H

/* Numbers on the wire (a before-attach segment's pool, culeak-stream(5)): append only. */
enum culeak_framework_id {
    CULEAK_FRAMEWORK_NONE = 0,
    CULEAK_FRAMEWORK_PYTORCH = 1,
    CULEAK_FRAMEWORK_CUPY = 2,
    CULEAK_FRAMEWORK_XLA = 3,
    CULEAK_FRAMEWORK_COUNT
};

struct culeak_framework {
    const char *name;                 /* "pytorch" */
    const char *pool;                 /* "pytorch caching allocator": its pool's row */
    const char *const *module_globs;  /* its allocator's modules: a glob with a '/' matches the path,
                                         one without the file name (NULL-ended) */
    const char *const *functions;     /* parts of its allocator's function names (NULL-ended) */
    unsigned block_api;               /* the API of an allocated block it reports; 0: none */
    const char *const *no_pool_env;   /* NAME=VALUE settings that turn its pool off (NULL-ended) */
    unsigned block_free_api;          /* the API of a block given back to it; 0: none */
};

/* The row of id; NULL for CULEAK_FRAMEWORK_NONE and outside the table. */
const struct culeak_framework *culeak_framework(unsigned id);

#endif
