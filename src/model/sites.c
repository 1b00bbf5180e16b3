/* Call sites and stacks in words: symbolized text, group keys, caching-allocator
 * classification, pattern matching and full stacks. */
#include "model_internal.h"
#include "pyframes.h"
#include "common/wire.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void model_frame_format(const struct model_frame *f, char *buf, size_t len)
{
    const char *slash = f->module ? strrchr(f->module, '/') : NULL;
    const char *mod = slash ? slash + 1 : f->module ? f->module : "?";
    if (f->marker)
        snprintf(buf, len, "%s", f->function);
    else if (f->function && f->file)
        snprintf(buf, len, "%s at %s:%u", f->function, f->file, f->line);
    else if (f->function)
        snprintf(buf, len, "%s+0x%" PRIx64 " (%s)", f->function, f->function_offset, mod);
    else if (f->module && strcmp(f->module, "?") != 0)
        snprintf(buf, len, "%s+0x%" PRIx64, mod, f->offset);
    else
        snprintf(buf, len, "0x%" PRIx64, f->ip);
}

/* modules_skips_frame() of a symbolized frame, kept per frame: the globs cost ~14
 * fnmatch calls a frame, which symbolizing every stack of a table (suppressions) paid
 * again and again. The symbolizer's results stay where they are for the model's life,
 * so the frame's address names it. */
static int frame_skipped(struct model *m, const struct sym_frame *sf)
{
    if (!sf || m->nskip_fn == 0)
        return 0;
    uint64_t key = (uint64_t)(uintptr_t)sf;
    uint32_t v = u64map_get(&m->frame_skips, key);
    if (v != UINT32_MAX)
        return (int)v;
    int skip = modules_skips_frame(m, sf);
    u64map_put(&m->frame_skips, key, (uint32_t)skip); /* out of memory: asked again next time */
    return skip;
}

/* modules_runtime_frame() of a symbolized frame, kept per frame as frame_skipped's are
 * (the key's low bit set: a sym_frame's address never has it). */
static int frame_runtime(struct model *m, const struct sym_frame *sf)
{
    if (!sf || m->opt.no_default_skips)
        return 0;
    uint64_t key = (uint64_t)(uintptr_t)sf | 1;
    uint32_t v = u64map_get(&m->frame_skips, key);
    if (v != UINT32_MAX)
        return (int)v;
    int runtime = modules_runtime_frame(m, sf);
    u64map_put(&m->frame_skips, key, (uint32_t)runtime);
    return runtime;
}

static void frame_from_sym(struct model *m, struct model_frame *out, const struct module_info *mi,
                           uint64_t ip, uint64_t offset, const struct sym_frame *sf)
{
    out->ip = ip;
    out->module = mi->path;
    out->offset = offset;
    out->function = sf ? sf->function : NULL;
    out->function_offset = sf ? sf->function_offset : 0;
    out->file = sf ? sf->file : NULL;
    out->line = sf ? sf->line : 0;
    out->inlined = sf ? sf->inlined : 0;
    out->skipped = mi->skip || frame_skipped(m, sf) || pyframes_skipped(m, ip);
    out->marker = pyframes_marker(m, ip);
    out->runtime = out->marker || mi->runtime || frame_runtime(m, sf);
}

void site_symbolize(struct model *m, struct site *s)
{
    if (s->symbolized)
        return;
    s->symbolized = 1;
    m->nnamed++;
    model_changed(m);
    const struct module_info *mi = &m->modules[s->module];
    if (s->module != 0)
        s->sym = symbolizer_lookup(m->sym, s->module, mi->path, s->offset);
    struct model_frame f;
    frame_from_sym(m, &f, mi, s->module ? 0 : s->offset, s->offset, site_frame(s));
    char buf[1024];
    if (s == &m->sites[0] && s->offset == 0)
        snprintf(buf, sizeof buf, "(no stack)");
    else
        model_frame_format(&f, buf, sizeof buf);
    s->text = strpool_intern(&m->strings, buf, strlen(buf));
    if (!s->text)
        s->text = "?";
    m->site_names[s - m->sites] = (struct site_name){.text = s->text, .module = s->module, .symbolized = 1};
}

void site_plain_text(struct model *m, struct site *s)
{
    if (s->text)
        return;
    const struct module_info *mi = &m->modules[s->module];
    struct model_frame f = {.ip = s->module ? 0 : s->offset, .module = mi->path, .offset = s->offset};
    char buf[1024];
    if (s == &m->sites[0] && s->offset == 0)
        snprintf(buf, sizeof buf, "(no stack)");
    else
        model_frame_format(&f, buf, sizeof buf);
    s->text = strpool_store(&m->strings, buf, strlen(buf)); /* one per site: no interning */
    if (!s->text)
        s->text = "?";
    m->site_names[s - m->sites] = (struct site_name){.text = s->text, .module = s->module, .symbolized = s->symbolized};
}

size_t model_names_pending(const struct model *m) { return m->nsites - m->nnamed; }

size_t model_resolve_names(struct model *m, size_t max, uint64_t budget_ns)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t done = 0;
    /* sites only get appended, so every site below the cursor is resolved */
    for (; m->name_cursor < m->nsites && done < max; m->name_cursor++) {
        struct site *s = &m->sites[m->name_cursor];
        if (s->symbolized)
            continue;
        if (budget_ns && done) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            uint64_t spent = (uint64_t)(t.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)t.tv_nsec - (uint64_t)t0.tv_nsec;
            if (spent >= budget_ns)
                break;
        }
        site_symbolize(m, s);
        done++;
    }
    return done;
}

uint32_t site_group_id(struct model *m, uint32_t site, enum model_group g)
{
    struct site *s = &m->sites[site];
    if (g == MODEL_GROUP_SITE || g == MODEL_GROUP_STACK)
        return site;
    if (s->group_id[g] != MODEL_NO_ROW)
        return s->group_id[g];
    if (g != MODEL_GROUP_MODULE) /* a module's path needs no symbols */
        site_symbolize(m, s);
    const struct sym_frame *f = site_frame(s);
    const struct module_info *mi = &m->modules[s->module];
    char buf[1024];
    const char *key = buf;
    switch (g) {
    case MODEL_GROUP_FUNCTION:
        key = f && f->function ? f->function : s->text;
        break;
    case MODEL_GROUP_FILE:
        if (f && f->file)
            key = f->file;
        else
            snprintf(buf, sizeof buf, "(%s)", mi->name);
        break;
    default:
        key = mi->path;
        break;
    }
    uint32_t id = strpool_id(&m->group_keys[g], key, strlen(key));
    s->group_id[g] = id == UINT32_MAX ? 0 : id;
    return s->group_id[g];
}

uint32_t unit_row_id(struct model *m, int proc, struct unit *u, enum model_group g)
{
    if (g != MODEL_GROUP_STACK)
        return site_group_id(m, u->site, g);
    if (u->stack_row != MODEL_NO_ROW)
        return u->stack_row;
    uint32_t id = stack_row_id(m, (uint64_t)(unsigned)proc << 32 | u->stack);
    if (id == UINT32_MAX)
        return 0; /* out of memory: asked again next time */
    u->stack_row = id;
    return id;
}

uint32_t stack_row_id(struct model *m, uint64_t key)
{
    uint32_t id = u64map_get(&m->stack_rows, key);
    if (id == UINT32_MAX) {
        if (m->nstack_rows == m->stack_rows_cap) {
            size_t cap = m->stack_rows_cap ? m->stack_rows_cap * 2 : 256;
            uint64_t *k = realloc(m->stack_row_keys, cap * sizeof *k);
            if (!k)
                return UINT32_MAX;
            m->stack_row_keys = k;
            m->stack_rows_cap = cap;
        }
        id = (uint32_t)m->nstack_rows;
        if (u64map_put(&m->stack_rows, key, id) != 0)
            return UINT32_MAX;
        m->stack_row_keys[m->nstack_rows++] = key;
    }
    return id;
}

/* The framework whose caching allocator a function is (common/frameworks.h): memory it
 * still holds at exit is cache. */
static enum model_cache cache_of_function(const char *fn)
{
    for (unsigned c = 1; fn && c < CULEAK_FRAMEWORK_COUNT; c++)
        for (const char *const *part = culeak_framework(c)->functions; *part; part++)
            if (strstr(fn, *part))
                return (enum model_cache)c;
    return MODEL_CACHE_NONE;
}

/* Pinned host memory that libtorch_cuda asks the CUDA runtime for itself is its host
 * caching allocator's (x.item() takes a block of it): cuDNN, cuBLAS or NCCL would have
 * frames of their own in between. The allocator's names (an anonymous namespace) are in
 * no export table, so a libtorch_cuda without its symbol table is known by this. */
static int torch_host_cache(const struct model *m, const struct process *p, const struct unit *u)
{
    if (u->kind != CULEAK_KIND_HOST_PINNED && u->kind != CULEAK_KIND_HOST_REGISTERED)
        return 0;
    uint64_t id = u->stack;
    for (int n = 0; id != 0 && id < p->nframes && n < MODEL_MAX_STACK_WALK; n++, id = p->parent[id]) {
        const struct range *r = modules_find(p, p->ip[id]);
        if (!r)
            return 0;
        const char *name = m->modules[r->module].name;
        if (fnmatch("libcuda.so*", name, 0) && fnmatch("libcudart*", name, 0) && fnmatch("libculeak*", name, 0))
            return fnmatch("libtorch_cuda*", name, 0) == 0; /* the runtime's caller */
    }
    return 0;
}

enum model_cache unit_cache(struct model *m, int proc, struct unit *u)
{
    if (u->cache)
        return (enum model_cache)(u->cache - 1);
    struct process *p = model_proc(m, proc);
    enum model_cache c = MODEL_CACHE_NONE;
    uint64_t id = u->stack;
    for (int n = 0; p && id != 0 && id < p->nframes && n < MODEL_MAX_STACK_WALK && c == MODEL_CACHE_NONE;
         n++, id = p->parent[id]) {
        const struct range *r = modules_find(p, p->ip[id]);
        if (!r)
            continue;
        const struct module_info *mi = &m->modules[r->module];
        c = (enum model_cache)mi->cache;
        if (c != MODEL_CACHE_NONE)
            break;
        const struct sym_result *sr = symbolizer_lookup(m->sym, r->module, mi->path, p->ip[id] - r->bias);
        for (unsigned i = 0; sr && i < sr->n && c == MODEL_CACHE_NONE; i++)
            c = cache_of_function(sr->frames[i].function);
    }
    if (c == MODEL_CACHE_NONE && p && torch_host_cache(m, p, u))
        c = MODEL_CACHE_PYTORCH;
    u->cache = (uint8_t)(c + 1);
    return c;
}

size_t model_stack_frames(struct model *m, int proc, uint64_t stack, struct model_frame *out, size_t max)
{
    struct process *p = model_proc(m, proc);
    if (!p || stack >= p->nframes)
        return 0;
    size_t n = 0;
    uint64_t id = stack;
    for (int depth = 0; id != 0 && depth < MODEL_MAX_STACK_WALK; depth++, id = p->parent[id]) {
        uint64_t ip = p->ip[id];
        const struct range *r = modules_find(p, ip);
        const struct module_info *mi = &m->modules[r ? r->module : 0];
        uint64_t off = r ? ip - r->bias : ip;
        const struct sym_result *sr = r ? symbolizer_lookup(m->sym, r->module, mi->path, off) : NULL;
        unsigned k = sr ? sr->n : 1;
        for (unsigned i = 0; i < k; i++, n++)
            if (n < max)
                frame_from_sym(m, &out[n], mi, ip, off, sr ? &sr->frames[i] : NULL);
    }
    return n;
}

/* A frame worth naming as the operation: symbolized, and not the C and C++ runtime's
 * (a thread's start). */
static int names_operation(const struct module_info *mi, const struct sym_frame *f)
{
    static const char *const plumbing[] = {"libc.so*", "libstdc++*", "libgcc_s*", "libpthread*", "ld-linux*"};
    if (!f || !f->function)
        return 0;
    for (size_t i = 0; i < sizeof plumbing / sizeof *plumbing; i++)
        if (fnmatch(plumbing[i], mi->name, 0) == 0)
            return 0;
    return 1;
}

int model_stack_backward(struct model *m, int proc, uint64_t stack, const char **via)
{
    *via = NULL;
    struct process *p = model_proc(m, proc);
    if (!p || stack >= p->nframes || !m->py)
        return 0;
    uint64_t id = stack, marker = 0;
    for (int n = 0; id != 0 && n < MODEL_MAX_STACK_WALK && !marker; n++, id = p->parent[id]) {
        uint64_t ip = p->ip[id];
        if (!(ip & CULEAK_PYFRAME_TAG))
            continue;
        if (pyframes_marker(m, ip))
            marker = id;
        else if (!pyframes_skipped(m, ip))
            return 0; /* the site is the thread's own Python line */
    }
    if (!marker)
        return 0;
    int line = p->parent[marker] != 0; /* the call's Python frames follow the marker */
    for (id = stack; id != marker; id = p->parent[id]) { /* the native frames inside it */
        uint32_t module;
        uint64_t off;
        unsigned frame;
        if (modules_runtime_ip(m, p, p->ip[id], &module, &off, &frame) || !module)
            continue;
        const struct module_info *mi = &m->modules[module];
        const struct sym_result *sr = symbolizer_lookup(m->sym, module, mi->path, off);
        const struct sym_frame *f = sr && frame < sr->n ? &sr->frames[frame] : NULL;
        if (!names_operation(mi, f))
            continue;
        char fn[512], buf[700];
        modules_function_base(f->function, fn, sizeof fn);
        int k = snprintf(buf, sizeof buf, "%s (%s)", fn, mi->name);
        *via = strpool_intern(&m->strings, buf, (size_t)(k < (int)sizeof buf ? k : (int)sizeof buf - 1));
        break;
    }
    return line ? 1 : 2;
}

/* "name(args)" matches a pattern for "name" too. */
static int function_matches(const char *pattern, const char *fn)
{
    if (!fn)
        return 0;
    if (fnmatch(pattern, fn, 0) == 0)
        return 1;
    const char *paren = strchr(fn, '(');
    if (!paren || (size_t)(paren - fn) >= 1024)
        return 0;
    char base[1024];
    memcpy(base, fn, (size_t)(paren - fn));
    base[paren - fn] = 0;
    return fnmatch(pattern, base, 0) == 0;
}

/* A path ends with the pattern's file part at a '/' boundary. */
static int file_matches(const char *want, size_t wn, const char *file)
{
    if (!file)
        return 0;
    size_t fl = strlen(file);
    if (fl < wn || memcmp(file + fl - wn, want, wn) != 0)
        return 0;
    return fl == wn || file[fl - wn - 1] == '/';
}

static int sym_frame_matches(const char *pattern, const struct sym_frame *f, const struct module_info *mi)
{
    const char *colon = strrchr(pattern, ':');
    if (colon && colon[1] && colon > pattern && colon[-1] != ':') {
        char *end;
        unsigned long line = strtoul(colon + 1, &end, 10);
        if (!*end)
            return f && f->line == line && file_matches(pattern, (size_t)(colon - pattern), f->file);
    }
    if (fnmatch(pattern, mi->name, 0) == 0 || (strchr(pattern, '/') && fnmatch(pattern, mi->path, 0) == 0))
        return 1;
    if (f && file_matches(pattern, strlen(pattern), f->file))
        return 1;
    return f && function_matches(pattern, f->function);
}

int model_stack_matches(struct model *m, int proc, uint64_t stack, const char *pattern, int any_frame)
{
    struct process *p = model_proc(m, proc);
    if (!p || !pattern || stack >= p->nframes)
        return 0;
    if (!any_frame) {
        uint32_t site = modules_site_of_stack(m, p, stack);
        struct site *s = &m->sites[site];
        site_symbolize(m, s);
        const struct module_info *mi = &m->modules[s->module];
        if (!s->sym)
            return sym_frame_matches(pattern, NULL, mi);
        for (unsigned i = s->frame; i < s->sym->n; i++)
            if (sym_frame_matches(pattern, &s->sym->frames[i], mi))
                return 1;
        return 0;
    }
    uint64_t id = stack;
    for (int depth = 0; id != 0 && depth < MODEL_MAX_STACK_WALK; depth++, id = p->parent[id]) {
        const struct range *r = modules_find(p, p->ip[id]);
        const struct module_info *mi = &m->modules[r ? r->module : 0];
        const struct sym_result *sr = r ? symbolizer_lookup(m->sym, r->module, mi->path, p->ip[id] - r->bias) : NULL;
        if (!sr && sym_frame_matches(pattern, NULL, mi))
            return 1;
        for (unsigned i = 0; sr && i < sr->n; i++)
            if (sym_frame_matches(pattern, &sr->frames[i], mi))
                return 1;
    }
    return 0;
}

/* Counts stack st of process proc into *n, storing it while there is room, unless it is
 * among those stored already; returns whether it was new. */
static int add_stack(uint64_t *out, int *out_proc, size_t max, size_t *n, uint64_t st, int proc)
{
    for (size_t k = 0; k < *n && k < max; k++)
        if (out[k] == st && (!out_proc || out_proc[k] == proc))
            return 0;
    if (*n < max) {
        out[*n] = st;
        if (out_proc)
            out_proc[*n] = proc;
    }
    (*n)++;
    return 1;
}

size_t model_find_stacks(struct model *m, int proc, const char *pattern, int any_frame, uint64_t *out,
                         int *out_proc, size_t max)
{
    size_t n = 0;
    for (int i = 0; i < m->nprocs; i++) {
        if (proc != MODEL_ALL && proc != i)
            continue;
        struct process *p = m->procs[i];
        uint64_t last = UINT64_MAX;
        for (size_t u = 0; u < p->nunits; u++) {
            uint64_t st = p->units[u].stack;
            if (st == last || !model_stack_matches(m, i, st, pattern, any_frame))
                continue;
            /* units of one stack (several kinds) are rare: skip exact repeats only */
            if (add_stack(out, out_proc, max, &n, st, i))
                last = st;
        }
    }
    return n;
}

uint32_t model_stack_row(struct model *m, int proc, uint64_t stack, enum model_group g)
{
    struct process *p = model_proc(m, proc);
    if (!p)
        return MODEL_NO_ROW;
    for (unsigned k = 0; k < CULEAK_KIND_COUNT; k++) {
        uint32_t u = u64map_get(&p->unit_index, stack << 5 | k);
        if (u != UINT32_MAX)
            return unit_row_id(m, proc, &p->units[u], g);
    }
    return MODEL_NO_ROW;
}

size_t model_row_stacks(struct model *m, enum model_group g, uint32_t id, int proc, uint64_t *out, int *out_proc,
                        size_t max)
{
    size_t n = 0;
    for (int i = 0; i < m->nprocs; i++) {
        if (proc != MODEL_ALL && proc != i)
            continue;
        struct process *p = m->procs[i];
        for (size_t u = 0; u < p->nunits; u++) {
            if (unit_row_id(m, i, &p->units[u], g) != id)
                continue;
            add_stack(out, out_proc, max, &n, p->units[u].stack, i);
        }
    }
    return n;
}
