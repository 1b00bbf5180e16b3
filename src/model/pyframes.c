/* Python frames in the model: interning, looked-through files, and the "python" module. */
#include "model_internal.h"
#include "pyframes.h"
#include "common/wire.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The frameworks' own Python code: allocations made there are charged to their caller. */
static const char *const default_skips[] = {
    "*/site-packages/torch/*", "*/dist-packages/torch/*", "*/site-packages/cupy/*",
    "*/dist-packages/cupy/*", "*/site-packages/cupy_backends/*", "*/site-packages/jax/*",
    "*/dist-packages/jax/*", "*/site-packages/jaxlib/*", "*/site-packages/flax/*",
    "*/site-packages/triton/*", "<frozen *>", "*/sitecustomize.py", "*/culeak_attach.py",
};

struct pyloc {
    struct sym_result res;
    struct sym_frame frame;
    int skip;
    int marker;            /* the autograd backward marker (PYFRAME flag BACKWARD), not code */
    const char *lib_line;  /* an installed library's line ("pkg/mod.py:12"), else NULL */
};

struct pyframes {
    struct strpool keys;    /* "file\x1ffunction\x1fline" -> model-wide id - 1 */
    struct pyloc **locs;    /* by model-wide id - 1; each allocated apart: results stay put */
    size_t n, cap;
    struct u64map local;    /* proc << 32 | process's id -> model-wide id */
    uint32_t module;        /* module id of "python" */
};

static int stdlib_path(const char *path)
{
    const char *lib = strstr(path, "/lib/python3.");
    return lib && !strstr(lib, "-packages/");
}

/* The part of an installed package's path after site-packages/ or dist-packages/, or
 * NULL for a file outside them. */
static const char *installed_part(const char *path)
{
    const char *at = NULL;
    for (const char *p = path; (p = strstr(p, "-packages/")); p++)
        if (p - path >= 5 && (!strncmp(p - 5, "/site", 5) || !strncmp(p - 5, "/dist", 5)))
            at = p + strlen("-packages/");
    return at;
}

/* Is the file under one of the prefixes that say "this code is mine" (the model's
 * my_code option and $CULEAK_MY_CODE, comma or colon separated)? */
static int mine(const char *path, const char *list)
{
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, ",:");
        if (n && !strncmp(path, p, n))
            return 1;
        p += n + (p[n] != 0);
    }
    return 0;
}

int pyframes_is_mine(const struct model *m, const char *path)
{
    return mine(path, m->opt.my_code) || mine(path, getenv("CULEAK_MY_CODE"));
}

static int framework_file(const char *path)
{
    for (size_t i = 0; i < sizeof default_skips / sizeof *default_skips; i++)
        if (fnmatch(default_skips[i], path, 0) == 0)
            return 1;
    return 0;
}

static int file_skipped(const struct model *m, const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    if (!m->opt.no_default_skips && !pyframes_is_mine(m, path)) {
        /* the standard library, the frameworks, and every installed package: the call
         * site is the first line of the program's own code */
        if (stdlib_path(path) || framework_file(path) || installed_part(path))
            return 1;
    }
    for (size_t i = 0; i < m->nskip; i++)
        if (fnmatch(m->skip_globs[i], strchr(m->skip_globs[i], '/') ? path : name, 0) == 0)
            return 1;
    return 0;
}

static const struct sym_result *lookup(void *ctx, uint64_t id) { return pyframes_lookup(ctx, id); }

/* Makes "python" a module of p covering every tagged ip, with the id as offset. */
static void map_module(struct model *m, struct process *p)
{
    struct culeak_segment seg = {0, CULEAK_PYFRAME_TAG >> 1};
    struct culeak_module mod = {{PYFRAMES_MODULE, strlen(PYFRAMES_MODULE)}, CULEAK_PYFRAME_TAG, 1, &seg};
    struct culeak_modules mods = {0, 1, &mod};
    const struct range *r = modules_find(p, CULEAK_PYFRAME_TAG | 1);
    if (!r)
        modules_add(m, p, &mods);
    if ((r = modules_find(p, CULEAK_PYFRAME_TAG | 1)) && r->module != m->py->module) {
        m->py->module = r->module;
        symbolizer_set_extra(m->sym, r->module, lookup, m);
    }
}

int pyframes_add(struct model *m, struct process *p, const struct culeak_pyframe *f)
{
    if (!m->py) {
        if (!(m->py = calloc(1, sizeof *m->py)))
            return -1;
        strpool_init(&m->py->keys);
        u64map_init(&m->py->local);
    }
    struct pyframes *py = m->py;
    map_module(m, p);
    char key[2048];
    int marker = (f->flags & CULEAK_PYFRAME_BACKWARD) != 0;
    int kn = snprintf(key, sizeof key, "%.*s\x1f%.*s\x1f%llu%s", (int)(f->file.n < 900 ? f->file.n : 900),
                      f->file.p ? f->file.p : "", (int)(f->function.n < 900 ? f->function.n : 900),
                      f->function.p ? f->function.p : "", (unsigned long long)f->line, marker ? "\x1fmarker" : "");
    uint32_t idx = strpool_id(&py->keys, key, (size_t)kn);
    if (idx == UINT32_MAX)
        return -1;
    if (idx == py->n) { /* new location */
        if (py->n == py->cap) {
            size_t cap = py->cap ? py->cap * 2 : 256;
            struct pyloc **l = realloc(py->locs, cap * sizeof *l);
            if (!l)
                return -1;
            py->locs = l;
            py->cap = cap;
        }
        struct pyloc *l = calloc(1, sizeof *l);
        if (!l)
            return -1;
        py->locs[py->n++] = l;
        const char *file = strpool_intern(&m->strings, f->file.p ? f->file.p : "", f->file.n);
        const char *fn = strpool_intern(&m->strings, f->function.p ? f->function.p : "", f->function.n);
        l->frame.file = file && *file ? file : NULL;
        l->frame.function = fn && *fn ? fn : NULL;
        l->frame.line = (unsigned)f->line;
        l->res.n = 1;
        l->res.frames = &l->frame;
        l->marker = marker;
        if (marker) { /* its text is the model's own, whatever the shim named it */
            l->frame.file = NULL;
            l->frame.function = PYFRAMES_BACKWARD_TEXT;
        }
        l->skip = marker || (l->frame.file && file_skipped(m, l->frame.file));
        const char *part =
            l->skip && l->frame.file && !framework_file(l->frame.file) ? installed_part(l->frame.file) : NULL;
        if (part) {
            char lib[1024];
            int ln = snprintf(lib, sizeof lib, "%s:%u", part, l->frame.line);
            l->lib_line = strpool_intern(&m->strings, lib, (size_t)(ln < (int)sizeof lib ? ln : (int)sizeof lib - 1));
        }
    }
    if (f->id < (1ull << 32) &&
        u64map_put(&py->local, (uint64_t)(unsigned)p->pub.index << 32 | f->id, idx + 1) != 0)
        return -1;
    return 0;
}

uint64_t pyframes_ip(const struct model *m, const struct process *p, uint64_t ip)
{
    if (!(ip & CULEAK_PYFRAME_TAG))
        return ip;
    uint64_t id = ip & ~CULEAK_PYFRAME_TAG;
    uint32_t g = m->py && id < (1ull << 32)
                     ? u64map_get(&m->py->local, (uint64_t)(unsigned)p->pub.index << 32 | id)
                     : UINT32_MAX;
    return CULEAK_PYFRAME_TAG | (g == UINT32_MAX ? 0 : g); /* 0: a frame never announced */
}

const struct sym_result *pyframes_lookup(const struct model *m, uint64_t id)
{
    return m->py && id >= 1 && id <= m->py->n ? &m->py->locs[id - 1]->res : NULL;
}

int pyframes_skipped(const struct model *m, uint64_t ip)
{
    if (!(ip & CULEAK_PYFRAME_TAG) || !m->py)
        return 0;
    uint64_t id = ip & ~CULEAK_PYFRAME_TAG;
    return id >= 1 && id <= m->py->n && m->py->locs[id - 1]->skip;
}

int pyframes_marker(const struct model *m, uint64_t ip)
{
    if (!(ip & CULEAK_PYFRAME_TAG) || !m->py)
        return 0;
    uint64_t id = ip & ~CULEAK_PYFRAME_TAG;
    return id >= 1 && id <= m->py->n && m->py->locs[id - 1]->marker;
}

const char *pyframes_lib_line(const struct model *m, uint64_t ip)
{
    if (!(ip & CULEAK_PYFRAME_TAG) || !m->py)
        return NULL;
    uint64_t id = ip & ~CULEAK_PYFRAME_TAG;
    return id >= 1 && id <= m->py->n ? m->py->locs[id - 1]->lib_line : NULL;
}

uint32_t pyframes_module(const struct model *m) { return m->py ? m->py->module : 0; }

void pyframes_free(struct model *m)
{
    if (!m->py)
        return;
    strpool_free(&m->py->keys);
    u64map_free(&m->py->local);
    for (size_t i = 0; i < m->py->n; i++)
        free(m->py->locs[i]);
    free(m->py->locs);
    free(m->py);
    m->py = NULL;
}
