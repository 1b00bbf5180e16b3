/* Loaded modules of each process, which of them are looked through, and the call site
 * of a stack: its innermost frame outside those modules and outside looked-through
 * functions; when every frame is looked through, its innermost frame outside allocator
 * and runtime code. */
#include "model_internal.h"
#include "pyframes.h"
#include "common/wire.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

/* The CUDA stack, framework allocators, the loader and libc: a frame inside these is never
 * where the program asked for memory. */
static const char *const default_skips[] = {
    "libcuda.so*", "libcudart*", "libcublas*", "libcudnn*", "libnccl*", "libcufft*", "libcurand*",
    "libcusparse*", "libcusolver*", "libnvrtc*", "libnvJitLink*", "libcupti*", "libnvToolsExt*",
    "libc10_cuda*", "libc10.so*", "libtorch_cuda*", "libcupy*", "*/cupy/*", "*/cupy_backends/*",
    "*/jaxlib/*", "*xla_extension*", "libculeak*", "ld-linux*", "ld.so*", "libc.so*",
    "libpthread*", "libdl.so*", "libstdc++*", "libgcc_s*",
    /* Python: the interpreter, ctypes, and the frameworks' native parts (Python frames
     * sit among these, and their own looked-through files are in pyframes.c) */
    "libpython3*", "python3*", "libffi*", "_ctypes*", "*/lib-dynload/*", "libtorch*",
    "*/site-packages/torch/*", "*/dist-packages/torch/*", "*/site-packages/jax/*",
    /* NVIDIA's cuda-python bindings (numba.cuda's driver calls go through them) */
    "*/cuda/bindings/*", "*/numba_cuda/*",
};

/* Allocator and runtime code: the CUDA driver and runtime, the frameworks' caching
 * allocators and their allocation helpers, culeak itself. Never a call site: when every
 * frame of a stack is looked through (a thread without Python frames or program code:
 * NCCL's, autograd's backward, pin-memory), the site is the first frame outside these,
 * else the outermost frame recorded. Functions match like default_skip_functions. */
static const char *const runtime_modules[] = {
    "libcuda.so*", "libcudart*", "libc10_cuda*", "libc10.so*", "libculeak*", "*/cupy/cuda/memory*",
    "*/cupy/cuda/pinned_memory*", "*/cupy_backends/*", "*/cuda/bindings/*",
};
static const char *const runtime_functions[] = {
    "cuda[A-Z]*", "libcudart_static_*", "__cudart*", "c10::*Allocat*", "c10::*StorageImpl*",
    "at::*empty*", "at::*create_out*", "at::*set_output*", "at::cuda::*Workspace*",
    "at::cuda::getCurrent*Handle*", /* a cuBLAS/cuSOLVER handle's workspace, made at first use */
};

/* nvcc links the CUDA runtime statically by default, so its API entry points
 * (cudaMalloc), internal functions (libcudart_static_<hash>, __cudart*), registration code
 * (__cuda*) and the cuda_runtime.h templates (cudaMalloc<float>) are in the program itself.
 * Globs with '/' match the source file: CUDA header code inlined into the program, and
 * culeak's own header. */
static const char *const default_skip_functions[] = {
    "cuda[A-Z]*", "libcudart_static_*", "__cudart*", "__cuda*",
    "*/cuda_runtime.h", "*/cuda_runtime_api.h", "*/crt/*",
    "*/culeak.h", /* culeak_alloc and culeak_free, inline in the program's pool allocator */
};

static void add_globs(char ***globs, size_t *nglobs, const char *list)
{
    if (!list)
        return;
    const char *p = list;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n) {
            char **g = realloc(*globs, (*nglobs + 1) * sizeof *g);
            if (!g)
                return;
            *globs = g;
            if ((g[*nglobs] = strndup(p, n)))
                (*nglobs)++;
        }
        p += n + (comma ? 1 : 0);
    }
}

void modules_configure(struct model *m)
{
    if (!m->opt.no_default_skips) {
        for (size_t i = 0; i < sizeof default_skips / sizeof *default_skips; i++)
            add_globs(&m->skip_globs, &m->nskip, default_skips[i]);
        for (size_t i = 0; i < sizeof default_skip_functions / sizeof *default_skip_functions; i++)
            add_globs(&m->skip_fn_globs, &m->nskip_fn, default_skip_functions[i]);
    }
    add_globs(&m->skip_globs, &m->nskip, getenv("CULEAK_SKIP_MODULES"));
    add_globs(&m->skip_globs, &m->nskip, m->opt.skip_modules);
    add_globs(&m->skip_fn_globs, &m->nskip_fn, getenv("CULEAK_SKIP_FUNCTIONS"));
    add_globs(&m->skip_fn_globs, &m->nskip_fn, m->opt.skip_functions);
}

/* "cudaError cudaMalloc<float>(float**, unsigned long)" -> "cudaMalloc<float>": the
 * name without return type and parameters, so that "cuda[A-Z]*" matches templates. */
static void function_base(const char *fn, char *out, size_t len)
{
    const char *b = fn, *p = fn;
    int depth = 0;
    for (; *p; p++) {
        if (*p == '<')
            depth++;
        else if (*p == '>' && depth > 0)
            depth--;
        else if (depth == 0 && *p == '(' && p > fn)
            break;
        else if (depth == 0 && *p == ' ')
            b = p + 1;
    }
    size_t n = (size_t)(p - b) < len ? (size_t)(p - b) : len - 1;
    memcpy(out, b, n);
    out[n] = 0;
}

void modules_function_base(const char *fn, char *out, size_t len) { function_base(fn, out, len); }

static int function_in(const struct sym_frame *f, char *const *globs, size_t n)
{
    if (!f || n == 0)
        return 0;
    char base[512] = "";
    if (f->function)
        function_base(f->function, base, sizeof base);
    for (size_t i = 0; i < n; i++) {
        const char *g = globs[i];
        if (strchr(g, '/')) {
            if (f->file && fnmatch(g, f->file, 0) == 0)
                return 1;
        } else if (f->function && (fnmatch(g, f->function, 0) == 0 || fnmatch(g, base, 0) == 0)) {
            return 1;
        }
    }
    return 0;
}

int modules_skips_frame(const struct model *m, const struct sym_frame *f)
{
    return function_in(f, m->skip_fn_globs, m->nskip_fn);
}

int modules_runtime_frame(const struct model *m, const struct sym_frame *f)
{
    return !m->opt.no_default_skips &&
           function_in(f, (char *const *)runtime_functions, sizeof runtime_functions / sizeof *runtime_functions);
}

static int glob_matches(const char *glob, const char *path, const char *name)
{
    return fnmatch(glob, strchr(glob, '/') ? path : name, 0) == 0;
}

/* The framework whose caching allocator a module is (common/frameworks.h). */
static int classify_cache(const char *path, const char *name)
{
    for (unsigned c = 1; c < CULEAK_FRAMEWORK_COUNT; c++)
        for (const char *const *glob = culeak_framework(c)->module_globs; *glob; glob++)
            if (glob_matches(*glob, path, name))
                return (int)c;
    return MODEL_CACHE_NONE;
}

static uint32_t module_id(struct model *m, const char *path, size_t n)
{
    if (n == 0)
        return 0;
    uint32_t id = strpool_id(&m->module_paths, path, n);
    if (id == UINT32_MAX)
        return 0;
    if (id >= m->modules_cap) {
        size_t cap = m->modules_cap * 2;
        while (cap <= id)
            cap *= 2;
        struct module_info *mi = realloc(m->modules, cap * sizeof *mi);
        if (!mi)
            return 0;
        memset(mi + m->modules_cap, 0, (cap - m->modules_cap) * sizeof *mi);
        m->modules = mi;
        m->modules_cap = cap;
    }
    struct module_info *mi = &m->modules[id];
    if (!mi->path) {
        mi->path = strpool_intern(&m->strings, path, n);
        if (!mi->path)
            return 0;
        const char *slash = strrchr(mi->path, '/');
        mi->name = slash ? slash + 1 : mi->path;
        for (size_t i = 0; i < m->nskip && !mi->skip; i++)
            mi->skip = glob_matches(m->skip_globs[i], mi->path, mi->name);
        /* every other installed package's native code (NumPy's ufunc machinery that CuPy's
         * operators go through), as its Python files are (pyframes.c), unless it is mine */
        if (!mi->skip && !m->opt.no_default_skips && (strstr(mi->path, "/site-packages/") || strstr(mi->path, "/dist-packages/")))
            mi->skip = !pyframes_is_mine(m, mi->path);
        for (size_t i = 0; !m->opt.no_default_skips && i < sizeof runtime_modules / sizeof *runtime_modules; i++)
            mi->runtime |= glob_matches(runtime_modules[i], mi->path, mi->name);
        mi->cache = classify_cache(mi->path, mi->name);
    }
    return id;
}

/* The first range that ends after addr: ranges are sorted and disjoint, so their ends
 * grow with their starts. */
static size_t first_ending_after(const struct process *p, uint64_t addr)
{
    size_t lo = 0, hi = p->nranges;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->ranges[mid].end <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Ranges stay sorted and disjoint: a repeated segment is found by a binary search, and a
 * new one takes the place of those it overlaps (a module loaded where another was: the
 * newer one owns the addresses from now on), so a record costs no scan or sort of every
 * range (a stream may hold many MODULES records). */
void modules_add(struct model *m, struct process *p, const struct culeak_modules *mods)
{
    for (size_t i = 0; i < mods->count; i++) {
        const struct culeak_module *md = &mods->mod[i];
        uint32_t id = module_id(m, md->path.p, md->path.n);
        for (size_t s = 0; s < md->nseg; s++) {
            uint64_t start = md->base + md->seg[s].vaddr, end = start + md->seg[s].memsz;
            if (end <= start)
                continue;
            size_t at = first_ending_after(p, start), past = at;
            if (at < p->nranges && p->ranges[at].start == start && p->ranges[at].end == end &&
                p->ranges[at].module == id)
                continue; /* MODULES repeats what is still loaded */
            suppressions_stale(p); /* ips may be in other modules now */
            while (past < p->nranges && p->ranges[past].start < end)
                past++; /* [at, past): the ranges it overlaps */
            if (past == at) { /* one more range */
                if (p->nranges >= MODEL_MAX_RANGES)
                    return;
                if (p->nranges == p->ranges_cap) {
                    size_t cap = p->ranges_cap ? p->ranges_cap * 2 : 64;
                    struct range *r = realloc(p->ranges, cap * sizeof *r);
                    if (!r)
                        return;
                    p->ranges = r;
                    p->ranges_cap = cap;
                }
                memmove(p->ranges + at + 1, p->ranges + at, (p->nranges - at) * sizeof *p->ranges);
                p->nranges++;
            } else if (past > at + 1) {
                memmove(p->ranges + at + 1, p->ranges + past, (p->nranges - past) * sizeof *p->ranges);
                p->nranges -= past - at - 1;
            }
            p->ranges[at] = (struct range){start, end, md->base, id};
            sites_rehome(m, &p->ranges[at]);
        }
    }
}

const struct range *modules_find(const struct process *p, uint64_t ip)
{
    size_t lo = 0, hi = p->nranges;
    while (lo < hi) { /* first range starting above ip */
        size_t mid = lo + (hi - lo) / 2;
        if (p->ranges[mid].start <= ip)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct range *r = &p->ranges[lo - 1];
    return ip < r->end ? r : NULL;
}

static uint32_t site_intern(struct model *m, uint32_t module, uint64_t offset, unsigned frame)
{
    /* module-relative offsets stay far below 2^44; anything else goes to the exact map */
    int packed = module != 0 && offset < (1ull << 44) && module < (1u << 20);
    struct u64map *idx = packed ? &m->site_index : &m->site_index_abs;
    uint64_t key = packed ? (uint64_t)module << 44 | offset : offset;
    uint32_t s = u64map_get(idx, key);
    if (s != UINT32_MAX)
        return s;
    if (m->nsites == m->sites_cap) {
        size_t cap = m->sites_cap ? m->sites_cap * 2 : 256;
        struct site *ns = realloc(m->sites, cap * sizeof *ns);
        if (!ns)
            return 0;
        m->sites = ns;
        uint64_t *np = realloc(m->site_peaks, 2 * cap * sizeof *np);
        if (!np)
            return 0;
        m->site_peaks = np;
        struct site_name *nn = realloc(m->site_names, cap * sizeof *nn);
        if (!nn)
            return 0;
        m->site_names = nn;
        m->sites_cap = cap;
    }
    m->site_peaks[2 * m->nsites] = m->site_peaks[2 * m->nsites + 1] = 0;
    struct site *st = &m->sites[m->nsites];
    memset(st, 0, sizeof *st);
    st->module = packed ? module : 0;
    st->offset = offset;
    st->frame = frame;
    m->site_names[m->nsites] = (struct site_name){.module = st->module};
    for (int g = 0; g < MODEL_GROUP_COUNT; g++)
        st->group_id[g] = MODEL_NO_ROW;
    if (u64map_put(idx, key, (uint32_t)m->nsites) != 0)
        return 0;
    return (uint32_t)m->nsites++;
}

/* Is the frame at (module, off) inside a looked-through function? Asked once per new
 * stack, from the cheap per-address cache. When CUDA header code was inlined into the
 * program's function, the frame is kept and *frame is the first frame of its inline
 * chain that is the program's. */
static int in_skipped_function(struct model *m, uint32_t module, uint64_t off, unsigned *frame)
{
    const struct module_info *mi = &m->modules[module];
    if (!modules_skips_frame(m, symbolizer_brief(m->sym, module, mi->path, off)))
        return 0;
    const struct sym_result *sr = symbolizer_lookup(m->sym, module, mi->path, off);
    for (unsigned i = 0; sr && i < sr->n; i++)
        if (!modules_skips_frame(m, &sr->frames[i])) {
            *frame = i;
            return 0;
        }
    return 1;
}

/* Is the frame at (module, off) allocator or runtime code? *frame as in_skipped_function. */
static int in_runtime_function(struct model *m, uint32_t module, uint64_t off, unsigned *frame)
{
    const struct module_info *mi = &m->modules[module];
    const struct sym_result *sr = symbolizer_lookup(m->sym, module, mi->path, off);
    if (!sr || sr->n == 0)
        return modules_runtime_frame(m, symbolizer_brief(m->sym, module, mi->path, off));
    for (unsigned i = 0; i < sr->n; i++)
        if (!modules_runtime_frame(m, &sr->frames[i])) {
            *frame = i;
            return 0;
        }
    return 1;
}

int modules_runtime_ip(struct model *m, const struct process *p, uint64_t ip, uint32_t *module, uint64_t *off,
                       unsigned *frame)
{
    *frame = 0;
    if (pyframes_marker(m, ip))
        return 1;
    const struct range *r = modules_find(p, ip);
    *module = r ? r->module : 0;
    *off = r ? ip - r->bias : ip;
    return r && (m->modules[r->module].runtime || in_runtime_function(m, r->module, ip - r->bias, frame));
}

uint32_t modules_site_of_stack(struct model *m, struct process *p, uint64_t stack)
{
    if (m->nsites == 0)
        site_intern(m, 0, 0, 0); /* site 0: the empty stack */
    if (stack == 0 || stack >= p->nframes)
        return 0;
    uint64_t leaf_ip = p->ip[stack];
    uint64_t id = stack;
    for (int n = 0; id != 0 && n < MODEL_MAX_STACK_WALK; n++, id = p->parent[id]) {
        if (pyframes_skipped(m, p->ip[id]))
            continue;
        const struct range *r = modules_find(p, p->ip[id]);
        if (!r)
            return sites_bare(m, site_intern(m, 0, p->ip[id], 0));
        unsigned frame = 0;
        if (m->modules[r->module].skip ||
            (m->nskip_fn && in_skipped_function(m, r->module, p->ip[id] - r->bias, &frame)))
            continue;
        return site_intern(m, r->module, p->ip[id] - r->bias, frame);
    }
    /* every frame is looked through. A Python thread running only the frameworks' and
     * the standard library's code (a DataLoader's pin-memory thread): its innermost line
     * says more than the framework's native frame under it. */
    id = stack;
    for (int n = 0; id != 0 && n < MODEL_MAX_STACK_WALK; n++, id = p->parent[id]) {
        uint64_t ip = p->ip[id];
        if ((ip & CULEAK_PYFRAME_TAG) && !pyframes_marker(m, ip) && pyframes_lookup(m, ip & ~CULEAK_PYFRAME_TAG)) {
            const struct range *r = modules_find(p, ip);
            if (r)
                return site_intern(m, r->module, ip - r->bias, 0);
        }
    }
    /* else the first one outside allocator and runtime code, else the outermost one
     * recorded (the nearest to whatever asked for the memory) */
    uint64_t outer_ip = leaf_ip;
    id = stack;
    for (int n = 0; id != 0 && n < MODEL_MAX_STACK_WALK; n++, id = p->parent[id]) {
        uint32_t module;
        uint64_t off;
        unsigned frame;
        outer_ip = p->ip[id];
        if (!modules_runtime_ip(m, p, outer_ip, &module, &off, &frame))
            return module ? site_intern(m, module, off, frame) : sites_bare(m, site_intern(m, 0, off, 0));
    }
    const struct range *r = modules_find(p, outer_ip);
    return r ? site_intern(m, r->module, outer_ip - r->bias, 0) : sites_bare(m, site_intern(m, 0, outer_ip, 0));
}

uint32_t model_site_new(struct model *m, uint64_t abs_key)
{
    if (m->nsites == 0)
        site_intern(m, 0, 0, 0); /* site 0: the empty stack */
    return site_intern(m, 0, abs_key, 0);
}
