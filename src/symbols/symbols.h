/* Out-of-process symbolization with elfutils libdwfl: each module (by path) is opened
 * once at bias 0 and asked about module-relative offsets, so one cache serves every
 * process that loaded it. Results (function, file:line, inline chain, demangled) are
 * cached per (module, offset). Under a descriptor limit below 256 no module's file is
 * kept open between lookups (a miss opens it again). */
#ifndef CULEAK_SYMBOLS_H
#define CULEAK_SYMBOLS_H

#include "common/strpool.h"

#include <stddef.h>
#include <stdint.h>

struct sym_frame {
    const char *function;     /* NULL when unknown */
    uint64_t function_offset; /* from the symbol table, when there is no DWARF */
    const char *file;         /* NULL when unknown */
    unsigned line;
    int inlined;              /* inlined into the next frame */
};

struct sym_result {
    unsigned n;               /* >= 1 */
    struct sym_frame *frames; /* innermost first */
};

struct symbolizer;

/* Strings are interned in pool (shared with the caller, so they compare by pointer). */
struct symbolizer *symbolizer_new(struct strpool *pool);
void symbolizer_free(struct symbolizer *s);
/* module_id: the caller's dense id for path. Never NULL except out of memory. */
const struct sym_result *symbolizer_lookup(struct symbolizer *s, uint32_t module_id, const char *path,
                                           uint64_t offset);
/* Cheaper, for choosing call sites: the symbol table's function (demangled, the physical
 * function even where code was inlined into it) and the line table's file:line, no inline
 * chain. Cached per (module, offset) apart from symbolizer_lookup. NULL only out of memory. */
const struct sym_frame *symbolizer_brief(struct symbolizer *s, uint32_t module_id, const char *path,
                                         uint64_t offset);
/* Results for one module that has no ELF file (the model's "python" module): lookups of
 * module_id get fn(ctx, offset) instead of DWARF. One such module per symbolizer. */
typedef const struct sym_result *(*sym_extra_fn)(void *ctx, uint64_t offset);
void symbolizer_set_extra(struct symbolizer *s, uint32_t module_id, sym_extra_fn fn, void *ctx);
/* Demangles C++ names (via libstdc++'s __cxa_demangle when it can be loaded); returns an
 * interned string, or name itself interned. */
const char *symbolizer_demangle(struct symbolizer *s, const char *name);
/* Tests: find scopes with dwarf_getscopes and functions in the symbol table alone, as
 * before the index of functions (call before the first lookup). */
void symbolizer_without_index(struct symbolizer *s);
/* Lookups so far that searched a whole symbol table or compile unit (each costs what the
 * module's size does): with the index, only addresses that no DWARF function covers. */
size_t symbolizer_walks(const struct symbolizer *s);
/* Has line of file (a path suffix) code in the module? 1 yes; 0 the module has the file
 * but no code there (*next: the next line that has, 0 none); -1 no such file in it. */
int symbolizer_source_line(struct symbolizer *s, uint32_t module_id, const char *path, const char *file,
                           unsigned line, unsigned *next);

#endif
