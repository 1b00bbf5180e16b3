/* Addresses to function, file and line with elfutils libdwfl, read offline from the
 * module files; results cached per (module, offset). */
#include "symcache.h"

#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sym_mod {
    char *path;
    const char *base;
    Dwfl *dwfl;
    Dwfl_Module *mod;
    int tried;
};

struct sym_ent {
    uint64_t key; /* module << 48 | offset, +1 so 0 is empty */
    const char *func, *file;
    int line;
};

struct symbolizer {
    struct sym_mod *mods;
    size_t nmods, capmods;
    struct sym_ent *tab;
    size_t cap, count;
    char **strs; /* interned strings */
    size_t nstrs, capstrs;
};

static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

struct symbolizer *sym_new(void) { return calloc(1, sizeof(struct symbolizer)); }

void sym_free(struct symbolizer *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nmods; i++) {
        if (s->mods[i].dwfl)
            dwfl_end(s->mods[i].dwfl);
        free(s->mods[i].path);
    }
    for (size_t i = 0; i < s->nstrs; i++)
        free(s->strs[i]);
    free(s->strs);
    free(s->mods);
    free(s->tab);
    free(s);
}

static const char *keep(struct symbolizer *s, const char *str)
{
    if (!str)
        return NULL;
    if (s->nstrs == s->capstrs) {
        size_t cap = s->capstrs ? s->capstrs * 2 : 64;
        char **v = realloc(s->strs, cap * sizeof *v);
        if (!v)
            return NULL;
        s->strs = v;
        s->capstrs = cap;
    }
    char *c = strdup(str);
    if (c)
        s->strs[s->nstrs++] = c;
    return c;
}

uint32_t sym_module(struct symbolizer *s, const char *path, size_t len)
{
    for (size_t i = 0; i < s->nmods; i++)
        if (strlen(s->mods[i].path) == len && memcmp(s->mods[i].path, path, len) == 0)
            return (uint32_t)i;
    if (s->nmods == s->capmods) {
        size_t cap = s->capmods ? s->capmods * 2 : 16;
        struct sym_mod *v = realloc(s->mods, cap * sizeof *v);
        if (!v)
            return 0;
        s->mods = v;
        s->capmods = cap;
    }
    struct sym_mod *m = &s->mods[s->nmods];
    memset(m, 0, sizeof *m);
    m->path = strndup(path, len);
    if (!m->path)
        return 0;
    const char *slash = strrchr(m->path, '/');
    m->base = slash ? slash + 1 : m->path;
    return (uint32_t)s->nmods++;
}

const char *sym_module_path(struct symbolizer *s, uint32_t id) { return id < s->nmods ? s->mods[id].path : "?"; }

static void open_module(struct sym_mod *m)
{
    m->tried = 1;
    if (!m->path[0] || strncmp(m->path, "[", 1) == 0 || strstr(m->path, "linux-vdso"))
        return;
    m->dwfl = dwfl_begin(&callbacks);
    if (!m->dwfl)
        return;
    dwfl_report_begin(m->dwfl);
    m->mod = dwfl_report_elf(m->dwfl, m->base, m->path, -1, 0, false);
    dwfl_report_end(m->dwfl, NULL, NULL);
    if (!m->mod) {
        dwfl_end(m->dwfl);
        m->dwfl = NULL;
    }
}

static void resolve(struct symbolizer *s, struct sym_mod *m, uint64_t off, struct sym_ent *e)
{
    if (!m->tried)
        open_module(m);
    if (!m->mod)
        return;
    Dwarf_Addr bias = 0;
    dwfl_module_getelf(m->mod, &bias);
    Dwarf_Addr addr = off + bias;
    GElf_Sym sym;
    GElf_Off symoff = 0;
    const char *name = dwfl_module_addrinfo(m->mod, addr, &symoff, &sym, NULL, NULL, NULL);
    e->func = keep(s, name);
    Dwfl_Line *line = dwfl_module_getsrc(m->mod, addr);
    if (line) {
        int lineno = 0;
        const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
        if (file) {
            const char *slash = strrchr(file, '/');
            e->file = keep(s, slash ? slash + 1 : file);
            e->line = lineno;
        }
    }
}

static int grow(struct symbolizer *s)
{
    size_t cap = s->cap ? s->cap * 2 : 1024;
    struct sym_ent *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->tab[i].key)
            continue;
        size_t h = (size_t)(s->tab[i].key * 0x9E3779B97F4A7C15ull) & (cap - 1);
        while (t[h].key)
            h = (h + 1) & (cap - 1);
        t[h] = s->tab[i];
    }
    free(s->tab);
    s->tab = t;
    s->cap = cap;
    return 0;
}

void sym_lookup(struct symbolizer *s, uint32_t module, uint64_t offset, struct sym_info *out)
{
    memset(out, 0, sizeof *out);
    out->offset = offset;
    if (module >= s->nmods) {
        out->module = "?";
        return;
    }
    struct sym_mod *m = &s->mods[module];
    out->module = m->base;
    if ((s->count + 1) * 2 > s->cap && grow(s) != 0)
        return;
    uint64_t key = (((uint64_t)module << 48) | (offset & 0xffffffffffffull)) + 1;
    size_t h = (size_t)(key * 0x9E3779B97F4A7C15ull) & (s->cap - 1);
    while (s->tab[h].key && s->tab[h].key != key)
        h = (h + 1) & (s->cap - 1);
    if (!s->tab[h].key) {
        struct sym_ent e = {.key = key};
        resolve(s, m, offset, &e);
        s->tab[h] = e;
        s->count++;
    }
    out->func = s->tab[h].func;
    out->file = s->tab[h].file;
    out->line = s->tab[h].line;
}
