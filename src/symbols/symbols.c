/* libdwfl symbolizer with per-module handles and a per-(module, offset) cache. */
#include "symbols.h"
#include "sym_scopes.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

struct sym_module {
    Dwfl *dwfl;
    Dwfl_Module *mod;
    int opened; /* tried already (mod may still be NULL: file missing or not ELF) */
    struct scope_index *scopes; /* its functions by address, per CU (sym_scopes.h) */
};

struct cache_slot {
    uint64_t key_off;
    uint32_t key_mod; /* module id + 1; 0 empty */
    struct sym_result *res;
};

struct sym_cache {
    struct cache_slot *slot;
    size_t n, used;
};

struct symbolizer {
    struct strpool *pool;
    struct sym_module *mods;
    size_t nmods;
    struct sym_cache full;  /* symbolizer_lookup */
    struct sym_cache brief; /* symbolizer_brief: one frame each */
    char *(*cxa_demangle)(const char *, char *, size_t *, int *);
    int demangle_tried;
    uint32_t extra_module; /* symbolizer_set_extra; 0: none */
    sym_extra_fn extra;
    void *extra_ctx;
    struct sym_frame scratch[64];
    int no_index; /* symbolizer_without_index: dwarf_getscopes and the symbol table only */
    int holding;  /* modules whose files are open now (close_files closes them) */
    size_t walks; /* symbolizer_walks */
};

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &debuginfo_path,
};

struct symbolizer *symbolizer_new(struct strpool *pool)
{
    struct symbolizer *s = calloc(1, sizeof *s);
    if (s)
        s->pool = pool;
    return s;
}

/* Module m's files closed and what was read of them forgotten (its cached results stay):
 * a later lookup that misses the cache opens it again. */
static void module_close(struct sym_module *m)
{
    if (m->dwfl)
        dwfl_end(m->dwfl);
    scope_index_free(m->scopes);
    *m = (struct sym_module){0};
}

/* Each module holds a descriptor or two (its ELF file, its separate debug file). Under a
 * low descriptor limit they would take those the reader needs for the job's next
 * processes (a ring's hand-over, a recording): there a lookup closes what it opened. */
#define TIGHT_NOFILE 256

static int fds_tight(void)
{
    struct rlimit rl;
    return getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < TIGHT_NOFILE;
}

static void close_files(struct symbolizer *s)
{
    for (size_t i = 0; s->holding && i < s->nmods; i++)
        if (s->mods[i].opened) {
            module_close(&s->mods[i]);
            s->holding--;
        }
    s->holding = 0;
}

/* After a lookup: the modules' files closed where descriptors are scarce. */
static void after_lookup(struct symbolizer *s)
{
    if (s->holding && fds_tight())
        close_files(s);
}

void symbolizer_free(struct symbolizer *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nmods; i++)
        module_close(&s->mods[i]);
    struct sym_cache *caches[] = {&s->full, &s->brief};
    for (int c = 0; c < 2; c++) {
        for (size_t i = 0; i < caches[c]->n; i++)
            if (caches[c]->slot[i].res) {
                free(caches[c]->slot[i].res->frames);
                free(caches[c]->slot[i].res);
            }
        free(caches[c]->slot);
    }
    free(s->mods);
    free(s);
}

const char *symbolizer_demangle(struct symbolizer *s, const char *name)
{
    if (!name)
        return NULL;
    if (name[0] == '_' && name[1] == 'Z') {
        if (!s->demangle_tried) {
            s->demangle_tried = 1;
            /* libstdc++ is not linked in: borrow its demangler only when it is installed */
            void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
            if (h)
                *(void **)&s->cxa_demangle = dlsym(h, "__cxa_demangle");
        }
        if (s->cxa_demangle) {
            int status = 0;
            char *d = s->cxa_demangle(name, NULL, NULL, &status);
            if (d && status == 0) {
                const char *r = strpool_intern(s->pool, d, strlen(d));
                free(d);
                return r;
            }
            free(d);
        }
    }
    return strpool_intern(s->pool, name, strlen(name));
}

/* A module's path comes from a recording, maybe another machine's or a hostile one: only
 * a regular file is opened, and never in a way that blocks (a FIFO, a device). -1: none. */
static int open_regular(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat st;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

static struct sym_module *module_handle(struct symbolizer *s, uint32_t id, const char *path)
{
    if (id >= s->nmods) {
        size_t n = s->nmods ? s->nmods : 16;
        while (n <= id)
            n *= 2;
        struct sym_module *m = realloc(s->mods, n * sizeof *m);
        if (!m)
            return NULL;
        memset(m + s->nmods, 0, (n - s->nmods) * sizeof *m);
        s->mods = m;
        s->nmods = n;
    }
    struct sym_module *m = &s->mods[id];
    if (!m->opened) {
        m->opened = 1;
        s->holding++;
        int fd = path && path[0] == '/' ? open_regular(path) : -1;
        if (fd >= 0 && (m->dwfl = dwfl_begin(&callbacks))) {
            m->mod = dwfl_report_elf(m->dwfl, path, path, fd, 0, false);
            dwfl_report_end(m->dwfl, NULL, NULL);
        }
        if (fd >= 0 && !m->mod)
            close(fd); /* libdwfl owns it only when the module was reported */
        if (m->mod && !s->no_index)
            m->scopes = scope_index_new(); /* NULL (out of memory): dwarf_getscopes */
    }
    return m;
}

/* The name of a subprogram or inlined instance: the linkage name (demangled) when there
 * is one, since DW_AT_name lacks the C++ scope. */
static const char *die_function_name(struct symbolizer *s, Dwarf_Die *die)
{
    Dwarf_Attribute attr;
    const char *name = NULL;
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
        dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
        name = dwarf_formstring(&attr);
    if (!name)
        name = dwarf_diename(die);
    return name ? symbolizer_demangle(s, name) : NULL;
}

static const char *intern_or_null(struct symbolizer *s, const char *str)
{
    return str ? strpool_intern(s->pool, str, strlen(str)) : NULL;
}

/* Fills f's file:line from the line table, only when addr lies inside the CU that libdwfl
 * picked: libdwfl stretches each CU over the gaps up to the next one, so code without
 * DWARF (_start, a library compiled without -g) would get a neighbouring CU's last line.
 * Returns that CU, or NULL when the address is in none. */
static Dwarf_Die *source_line(struct symbolizer *s, struct sym_module *m, Dwarf_Addr addr, struct sym_frame *f,
                              Dwarf_Addr *bias)
{
    Dwarf_Die *cudie = dwfl_module_addrdie(m->mod, addr, bias);
    if (!cudie)
        return NULL;
    /* a CU that states no address range at all is taken at its word */
    if ((dwarf_hasattr(cudie, DW_AT_low_pc) || dwarf_hasattr(cudie, DW_AT_ranges)) &&
        dwarf_haspc(cudie, addr - *bias) != 1)
        return NULL;
    Dwfl_Line *line = dwfl_module_getsrc(m->mod, addr);
    if (line) {
        int lineno = 0;
        const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
        f->file = intern_or_null(s, file);
        f->line = lineno > 0 ? (unsigned)lineno : 0;
    }
    return cudie;
}

/* The symbol table's name of the function at addr, and addr's offset in it. */
static void symtab_function(struct symbolizer *s, struct sym_module *m, Dwarf_Addr addr, struct sym_frame *f)
{
    GElf_Sym sym;
    GElf_Off sym_off = 0;
    s->walks++;
    f->function = symbolizer_demangle(s, dwfl_module_addrinfo(m->mod, addr, &sym_off, &sym, NULL, NULL, NULL));
    f->function_offset = sym_off;
}

/* Fills s->scratch with the frames of one address; returns how many. The symbol table is
 * read only where the DWARF names no function (its search walks every symbol). */
static unsigned resolve(struct symbolizer *s, struct sym_module *m, uint64_t off)
{
    struct sym_frame *f = s->scratch;
    memset(f, 0, sizeof *f);
    if (!m || !m->mod)
        return 1;
    Dwarf_Addr addr = off;
    Dwarf_Addr bias = 0;
    Dwarf_Die *cudie = source_line(s, m, addr, &f[0], &bias);
    if (!cudie) {
        symtab_function(s, m, addr, &f[0]);
        return 1;
    }
    /* The function-like scopes physically containing the address, outermost first:
     * from the module's index of functions, else from dwarf_getscopes (innermost first,
     * each function's enclosing ones then asked of dwarf_getscopes_die). */
    Dwarf_Die path[64];
    int npath = scope_index_path(m->scopes, cudie, addr - bias, path, (int)(sizeof path / sizeof *path));
    unsigned n = 1;
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    /* The innermost function-like scope names frame 0. While it is an inlined instance,
     * its DW_AT_call_file/line is the location in the frame around it, and that frame's
     * function is the next function-like scope among the DIEs physically containing it
     * (dwarf_getscopes continues into the abstract origin instead, so ask
     * dwarf_getscopes_die). */
    Dwarf_Die die;
    int have = 0;
    if (npath > 0) {
        die = path[--npath];
        have = 1;
    } else {
        Dwarf_Die *scopes = NULL;
        s->walks++;
        int nscopes = dwarf_getscopes(cudie, addr - bias, &scopes);
        for (int i = 0; i < nscopes && !have; i++) {
            int tag = dwarf_tag(&scopes[i]);
            if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram) {
                die = scopes[i];
                have = 1;
            }
        }
        free(scopes);
        npath = -1; /* outer scopes from dwarf_getscopes_die */
    }
    if (!have)
        symtab_function(s, m, addr, &f[0]);
    while (have && n < sizeof s->scratch / sizeof *s->scratch) {
        const char *fn = die_function_name(s, &die);
        if (fn) {
            f[n - 1].function = fn;
            f[n - 1].function_offset = 0;
        } else if (n == 1) {
            symtab_function(s, m, addr, &f[0]);
        }
        if (dwarf_tag(&die) != DW_TAG_inlined_subroutine)
            break;
        struct sym_frame *caller = &f[n];
        memset(caller, 0, sizeof *caller);
        f[n - 1].inlined = 1;
        Dwarf_Attribute attr;
        Dwarf_Word w;
        if (dwarf_attr(&die, DW_AT_call_line, &attr) && dwarf_formudata(&attr, &w) == 0)
            caller->line = (unsigned)w;
        if (dwarf_attr(&die, DW_AT_call_file, &attr) && dwarf_formudata(&attr, &w) == 0) {
            if (!files)
                dwarf_getsrcfiles(cudie, &files, &nfiles);
            if (files && w < nfiles)
                caller->file = intern_or_null(s, dwarf_filesrc(files, w, NULL, NULL));
        }
        n++;
        have = 0;
        if (npath >= 0) {
            if (npath > 0) {
                die = path[--npath];
                have = 1;
            }
            continue;
        }
        Dwarf_Die *outer = NULL;
        s->walks++;
        int nouter = dwarf_getscopes_die(&die, &outer);
        for (int i = 1; i < nouter && !have; i++) { /* outer[0] is die itself */
            int tag = dwarf_tag(&outer[i]);
            if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram) {
                die = outer[i];
                have = 1;
            }
        }
        free(outer);
    }
    /* an inline chain cut short (no enclosing subprogram found) keeps the symtab name */
    if (!f[n - 1].function && n > 1)
        f[n - 1].function = f[0].function;
    return n;
}

static uint64_t cache_hash(uint32_t mod, uint64_t off)
{
    uint64_t h = off * 0x9e3779b97f4a7c15ull ^ ((uint64_t)mod << 32 | mod);
    return h ^ (h >> 29);
}

static int cache_grow(struct sym_cache *cache)
{
    size_t n = cache->n ? cache->n * 2 : 1024;
    struct cache_slot *c = calloc(n, sizeof *c);
    if (!c)
        return -1;
    for (size_t i = 0; i < cache->n; i++) {
        if (!cache->slot[i].key_mod)
            continue;
        size_t j = (size_t)cache_hash(cache->slot[i].key_mod, cache->slot[i].key_off) & (n - 1);
        while (c[j].key_mod)
            j = (j + 1) & (n - 1);
        c[j] = cache->slot[i];
    }
    free(cache->slot);
    cache->slot = c;
    cache->n = n;
    return 0;
}

/* The slot of (module_id, offset): filled (res set) or the empty one to fill; NULL when
 * out of memory. */
static struct cache_slot *cache_find(struct sym_cache *c, uint32_t module_id, uint64_t offset)
{
    if ((c->used + 1) * 2 > c->n && cache_grow(c) != 0)
        return NULL;
    uint32_t key = module_id + 1;
    size_t mask = c->n - 1, j = (size_t)cache_hash(key, offset) & mask;
    for (; c->slot[j].key_mod; j = (j + 1) & mask)
        if (c->slot[j].key_mod == key && c->slot[j].key_off == offset)
            break;
    return &c->slot[j];
}

static const struct sym_result *cache_store(struct sym_cache *c, struct cache_slot *slot, uint32_t module_id,
                                            uint64_t offset, const struct sym_frame *frames, unsigned n)
{
    struct sym_result *r = malloc(sizeof *r);
    struct sym_frame *copy = malloc(n * sizeof *copy);
    if (!r || !copy) {
        free(r);
        free(copy);
        return NULL;
    }
    memcpy(copy, frames, n * sizeof *copy);
    r->n = n;
    r->frames = copy;
    slot->key_mod = module_id + 1;
    slot->key_off = offset;
    slot->res = r;
    c->used++;
    return r;
}

void symbolizer_set_extra(struct symbolizer *s, uint32_t module_id, sym_extra_fn fn, void *ctx)
{
    s->extra_module = module_id;
    s->extra = fn;
    s->extra_ctx = ctx;
}

const struct sym_result *symbolizer_lookup(struct symbolizer *s, uint32_t module_id, const char *path,
                                           uint64_t offset)
{
    if (module_id && module_id == s->extra_module)
        return s->extra(s->extra_ctx, offset);
    struct cache_slot *slot = cache_find(&s->full, module_id, offset);
    if (!slot || slot->res)
        return slot ? slot->res : NULL;
    unsigned n = resolve(s, module_handle(s, module_id, path), offset);
    const struct sym_result *r = cache_store(&s->full, slot, module_id, offset, s->scratch, n);
    after_lookup(s);
    return r;
}

const struct sym_frame *symbolizer_brief(struct symbolizer *s, uint32_t module_id, const char *path,
                                         uint64_t offset)
{
    if (module_id && module_id == s->extra_module) {
        const struct sym_result *r = s->extra(s->extra_ctx, offset);
        return r ? &r->frames[0] : NULL;
    }
    struct cache_slot *slot = cache_find(&s->brief, module_id, offset);
    if (!slot || slot->res)
        return slot && slot->res ? &slot->res->frames[0] : NULL;
    struct sym_module *m = module_handle(s, module_id, path);
    struct sym_frame f = {0};
    if (m && m->mod) {
        /* the function around the address: the DWARF's (the index of the module's
         * functions), else the symbol table's */
        Dwarf_Addr bias = 0, entry;
        Dwarf_Die *cudie = source_line(s, m, offset, &f, &bias);
        Dwarf_Die fn_die;
        const char *fn = NULL;
        if (cudie && scope_index_path(m->scopes, cudie, offset - bias, &fn_die, 1) == 1)
            fn = die_function_name(s, &fn_die);
        if (fn) {
            f.function = fn;
            f.function_offset = dwarf_entrypc(&fn_die, &entry) == 0 && offset - bias >= entry ? offset - bias - entry : 0;
        } else {
            symtab_function(s, m, offset, &f);
        }
    }
    const struct sym_result *r = cache_store(&s->brief, slot, module_id, offset, &f, 1);
    after_lookup(s);
    return r ? &r->frames[0] : NULL;
}

void symbolizer_without_index(struct symbolizer *s) { s->no_index = 1; }
size_t symbolizer_walks(const struct symbolizer *s) { return s->walks; }

static int source_line_of(struct symbolizer *s, uint32_t module_id, const char *path, const char *file,
                          unsigned line, unsigned *next)
{
    struct sym_module *m = module_handle(s, module_id, path);
    *next = 0;
    if (!m || !m->mod)
        return -1;
    Dwfl_Line **srcs = NULL;
    size_t n = 0;
    /* libdwfl gives the exact line's records, or those of the next line with code */
    if (dwfl_module_getsrc_file(m->mod, file, (int)line, 0, &srcs, &n) == 0 && n) {
        int found = 0, best = 0;
        for (size_t i = 0; i < n; i++) {
            int lineno = 0;
            if (!dwfl_lineinfo(srcs[i], NULL, &lineno, NULL, NULL, NULL))
                continue;
            found |= lineno == (int)line;
            if (lineno > (int)line && (!best || lineno < best))
                best = lineno;
        }
        free(srcs);
        if (found)
            return 1;
        *next = (unsigned)best;
        return 0;
    }
    free(srcs);
    srcs = NULL;
    n = 0;
    int known = dwfl_module_getsrc_file(m->mod, file, 0, 0, &srcs, &n) == 0 && n; /* the file, no line after */
    free(srcs);
    return known ? 0 : -1;
}

int symbolizer_source_line(struct symbolizer *s, uint32_t module_id, const char *path, const char *file,
                           unsigned line, unsigned *next)
{
    int r = source_line_of(s, module_id, path, file, line, next);
    after_lookup(s);
    return r;
}
