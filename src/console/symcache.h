/* Addresses to function, file and line, with elfutils (libdw), offline: the console
 * reads the modules named in MODULES records from disk. Cached per (module, offset). */
#ifndef CULEAK_CONSOLE_SYMCACHE_H
#define CULEAK_CONSOLE_SYMCACHE_H

#include <stddef.h>
#include <stdint.h>

struct sym_info {
    const char *func;   /* NULL when unknown */
    const char *file;   /* basename of the source file, NULL when unknown */
    int line;
    const char *module; /* basename of the module */
    uint64_t offset;    /* file-relative address in the module */
};

struct symbolizer;

struct symbolizer *sym_new(void);
void sym_free(struct symbolizer *s);
/* Interns a module path; returns a small id (stable for the symbolizer's life). */
uint32_t sym_module(struct symbolizer *s, const char *path, size_t len);
const char *sym_module_path(struct symbolizer *s, uint32_t id);
/* Looks up offset in module id. Strings stay valid for the symbolizer's life. */
void sym_lookup(struct symbolizer *s, uint32_t module, uint64_t offset, struct sym_info *out);

#endif
